"""Form <-> scenario-file values (the file's keys are the CLI's words, not widget ids)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from roofline.tui.inputs.limits import FIELD_LIMITS, check_number
from roofline.tui.inputs.form import FormError, ScenarioForm

_FILE_TO_FORM = {"hardware": "hardware_id", "model": "model_ref", "batch": "batch"}


FORM_TO_FILE = {form_key: file_key for file_key, form_key in _FILE_TO_FORM.items()}


def file_key(form_field: str) -> str:
    """The scenario-file key for a form field (``hardware_id`` -> ``hardware``)."""
    return FORM_TO_FILE.get(form_field, form_field)


def form_to_file_values(form: ScenarioForm) -> dict[str, Any]:
    return {file_key(f.name): getattr(form, f.name) for f in fields(ScenarioForm)}


def form_from_file_values(values: dict[str, Any]) -> ScenarioForm:
    """A form from a scenario file's values; out-of-range numbers raise FormError naming the key."""
    known = {f.name for f in fields(ScenarioForm)}
    kwargs = {_FILE_TO_FORM.get(k, k): v for k, v in values.items()}
    for key, value in kwargs.items():
        if key in FIELD_LIMITS:
            try:
                kwargs[key] = check_number(key, value)
            except ValueError as err:
                raise FormError(key, str(err)) from None
    return ScenarioForm(**{k: v for k, v in kwargs.items() if k in known})
