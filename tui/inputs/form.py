"""What the user has entered, and turning it into a model :class:`Scenario` (no Textual here).

The explorer keeps the last scenario that built; a field that does not parse or a combination
the model rejects leaves the screen on that scenario and reports the field and the reason.
"""

from __future__ import annotations

from dataclasses import field, make_dataclass, replace
from typing import Any

from roofline.models.errors import ModelInputError
from roofline.models.hardware import Hardware
from roofline.models.scenario import Batching, Parallelism, Scenario, released_precisions
from roofline.presets import resolve_model
from roofline.presets.loader import PresetCatalog, PresetFileError
from roofline.tui.inputs.registry import (
    BY_NAME,
    DEFAULT_HARDWARE,
    DEFAULT_MODEL,
    FORM_FIELDS,
    INPUTS,
    input_for_model_error,
)

__all__ = ["DEFAULT_HARDWARE", "DEFAULT_MODEL", "FormError", "ScenarioForm", "build_scenario", "model_kwargs",
           "scenario_from"]


class FormError(ValueError):
    """A user entry the scenario cannot use: ``field`` is the form field to mark invalid."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def _with_batch(self, batch: int):
    """The form with ``batch`` moved into the batch input's range."""
    return replace(self, batch=BY_NAME["batch"].clamp(batch))


def _with_prompt(self, prompt_tokens: int):
    """The form with ``prompt_tokens`` moved into the prompt input's range."""
    return replace(self, prompt_tokens=BY_NAME["prompt_tokens"].clamp(prompt_tokens))


def _scaled(self, name: str, factor: float):
    """The form with a whole-number input multiplied by ``factor`` (the +/- and [/] keys), kept in its range."""
    return replace(self, **{name: BY_NAME[name].clamp(int(getattr(self, name) * factor))})


# Every input of the explorer, in the units a person types: one field per registry input (FORM_FIELDS), with the
# registry's default and type. A frozen, slotted, keyword-only dataclass like any other.
ScenarioForm = make_dataclass(
    "ScenarioForm",
    [(name, BY_NAME[name].value_type, field(default=BY_NAME[name].default)) for name in FORM_FIELDS],
    frozen=True, slots=True, kw_only=True,
    namespace={"__module__": __name__, "__doc__": "Every input of the explorer, in the units a person types (one "
               "field per input of the registry, roofline.tui.inputs.registry.INPUTS).",
               "with_batch": _with_batch, "with_prompt": _with_prompt, "scaled": _scaled},
)


def model_kwargs(form, target: str) -> dict[str, Any]:
    """The form's values for one model object, by each input's ``model_field`` (``Batching.batch_size``): the
    keyword arguments of ``Batching``, ``Parallelism``, ``Scenario``, ``released_precisions``, ``ServingMix`` or
    ``ServingOptions``. An empty optional input passes None (the model's own default)."""
    prefix = target + "."
    return {spec.model_field[len(prefix):]: getattr(form, spec.name) for spec in INPUTS
            if spec.model_field.startswith(prefix) and spec.name in FORM_FIELDS}


def _with_overrides(hw: Hardware, form, compute_dtype: str) -> Hardware:
    changes: dict = {}
    if form.mem_bw_override_gb_per_s is not None:
        changes["mem_bw_bytes_per_s"] = form.mem_bw_override_gb_per_s * 1e9
    if form.capacity_override_gib is not None:
        changes["memory_capacity_bytes"] = form.capacity_override_gib * 1024**3
    if form.peak_override_tflops is not None:
        used, _ = hw.matmul_peak(compute_dtype)
        changes["dense_peak_flops_per_s"] = {**hw.dense_peak_flops_per_s, used: form.peak_override_tflops * 1e12}
        # the peak a person states is the peak: no faster FP16-accumulate rate is kept beside it
        changes["fp16_accumulate_peak_flops_per_s"] = None
    return replace(hw, **changes) if changes else hw


def build_scenario(form: ScenarioForm, catalog: PresetCatalog) -> Scenario:
    """The model scenario for a form; :class:`FormError` names the field that is wrong."""
    hardware = catalog.hardware.get(form.hardware_id)
    if hardware is None:
        raise FormError("hardware_id", f"unknown hardware {form.hardware_id!r}")
    model = catalog.models.get(form.model_ref)
    if model is None:
        try:
            model = resolve_model(form.model_ref)
        except KeyError:
            raise FormError("model_ref", f"unknown model {form.model_ref!r}") from None
        except PresetFileError as err:
            raise FormError("model_ref", str(err)) from None
    return scenario_from(form, hardware, model)


def scenario_from(form: ScenarioForm, hardware: Hardware, model) -> Scenario:
    """The one place a :class:`Scenario` is built from what a person entered (explorer, CLI, files, slides);
    :class:`FormError` names the input that is wrong."""
    try:
        precisions = released_precisions(model, **model_kwargs(form, "released_precisions"))
        hardware = _with_overrides(hardware, form, precisions.compute_dtype)
        return Scenario(hardware=hardware, model=model, precisions=precisions,
                        batching=Batching(**model_kwargs(form, "Batching")),
                        parallelism=Parallelism(**model_kwargs(form, "Parallelism")),
                        **model_kwargs(form, "Scenario"))
    except ModelInputError as err:
        raise FormError(input_for_model_error(err.field), err.message) from None
