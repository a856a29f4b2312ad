"""Form <-> scenario-file values: the file's keys come from the input registry (``hardware``, ``model``, ...)."""

from __future__ import annotations

from typing import Any

from roofline.tui.inputs.form import FormError, ScenarioForm
from roofline.tui.inputs.limits import FIELD_LIMITS, check_number
from roofline.tui.inputs.registry import BY_FILE_KEY, BY_NAME, FORM_FIELDS


def file_key(form_field: str) -> str:
    """The scenario-file key for a form field (``hardware_id`` -> ``hardware``)."""
    found = BY_NAME.get(form_field)
    return found.file_key if found and found.file_key else form_field


def form_to_file_values(form: ScenarioForm) -> dict[str, Any]:
    """Every scenario input of the form under its file key (None for an empty optional input)."""
    return {file_key(name): getattr(form, name) for name in FORM_FIELDS}


def form_from_file_values(values: dict[str, Any], base: ScenarioForm | None = None) -> ScenarioForm:
    """A form from a scenario file's (or a slide's) values over ``base`` (the defaults when None); out-of-range
    numbers raise FormError naming the key. Inputs the file leaves out keep ``base``'s value."""
    changes: dict[str, Any] = {}
    for key, value in values.items():
        spec = BY_FILE_KEY.get(key)
        if spec is None:
            continue
        if spec.name in FIELD_LIMITS and value is not None:
            try:
                value = check_number(spec.name, value)
            except ValueError as err:
                raise FormError(key, str(err)) from None
        changes[spec.name] = value
    from dataclasses import replace

    return replace(base or ScenarioForm(), **changes)


def check_file_value(key: str, value: Any) -> Any:
    """A scenario file's value in its input's range (for ``read_scenario(check=...)``, so the error names the line):
    the value, or ValueError saying why."""
    spec = BY_FILE_KEY.get(key)
    if spec is None or spec.name not in FIELD_LIMITS or isinstance(value, bool) or value is None:
        return value
    return check_number(spec.name, value)


def scenario_from_values(values: dict[str, Any], hardware, model):
    """A scenario from input values by name (a validation row's: ``hardware_id``, ``batch``, ``prompt_tokens``...),
    built as the explorer and the CLI build theirs: the registry's defaults for the rest, :func:`scenario_from`.
    A value the model refuses raises :class:`FormError` (a ValueError) naming the input."""
    from dataclasses import replace

    from roofline.tui.inputs.form import scenario_from

    unknown = set(values) - set(FORM_FIELDS)
    if unknown:
        raise FormError(sorted(unknown)[0], "is not a scenario input")
    return scenario_from(replace(ScenarioForm(), **values), hardware, model)
