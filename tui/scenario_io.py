"""Form <-> scenario-file values (the file's keys are the CLI's words, not widget ids)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from .scenario_form import ScenarioForm

_FILE_TO_FORM = {"hardware": "hardware_id", "model": "model_ref", "batch": "batch"}


def form_to_file_values(form: ScenarioForm) -> dict[str, Any]:
    inverse = {v: k for k, v in _FILE_TO_FORM.items()}
    return {inverse.get(f.name, f.name): getattr(form, f.name) for f in fields(ScenarioForm)}


def form_from_file_values(values: dict[str, Any]) -> ScenarioForm:
    known = {f.name for f in fields(ScenarioForm)}
    kwargs = {_FILE_TO_FORM.get(k, k): v for k, v in values.items()}
    return ScenarioForm(**{k: v for k, v in kwargs.items() if k in known})
