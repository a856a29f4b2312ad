"""What the user has entered, and turning it into a model :class:`Scenario` (no Textual here).

The explorer keeps the last scenario that built; a field that does not parse or a combination
the model rejects leaves the screen on that scenario and reports the field and the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from roofline.models.errors import ModelInputError
from roofline.models.hardware import Hardware
from roofline.models.scenario import Batching, Parallelism, Scenario, released_precisions
from roofline.presets import resolve_model
from roofline.presets.loader import PresetCatalog, PresetFileError
from roofline.tui.inputs.registry import BY_NAME, DEFAULT_HARDWARE, DEFAULT_MODEL, input_for_model_error

__all__ = ["DEFAULT_HARDWARE", "DEFAULT_MODEL", "FormError", "ScenarioForm", "build_scenario", "scenario_from"]


def _default(name: str):
    return BY_NAME[name].default


class FormError(ValueError):
    """A user entry the scenario cannot use: ``field`` is the form field to mark invalid."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioForm:
    """Every input of the explorer, in the units a person types."""

    hardware_id: str = _default("hardware_id")
    model_ref: str = _default("model_ref")
    weights: str | None = _default("weights")  # None: the model's released format, else bf16
    expert_weights: str | None = _default("expert_weights")  # None: the model's released format, else weights
    activations: str | None = _default("activations")  # None: the model's released format, else bf16
    kv: str = _default("kv")
    engine: str = _default("engine")
    topology: str | None = _default("topology")  # None: derived from the hardware preset
    batch: int = _default("batch")
    prompt_tokens: int = _default("prompt_tokens")
    output_tokens: int = _default("output_tokens")
    tp: int = _default("tp")
    pp: int = _default("pp")
    flash_attention: bool = _default("flash_attention")
    kv_compression_ratio: float = _default("kv_compression_ratio")
    mem_bw_override_gb_per_s: float | None = None
    peak_override_tflops: float | None = None
    capacity_override_gib: float | None = None
    price_per_device_hour: float | None = None
    # serving mode (the registry's SERVING_INPUTS; the scenario ignores them, tui/views/serving_data.py reads them)
    serving: bool = _default("serving")
    concurrency: int = _default("concurrency")
    rate_per_s: float | None = None  # None: the concurrency sets the operating point
    itl_target_ms: float = _default("itl_target_ms")
    ttft_target_ms: float = _default("ttft_target_ms")
    prefix_tokens: int = _default("prefix_tokens")
    prefix_hit_rate: float = _default("prefix_hit_rate")
    spec_tokens: int = _default("spec_tokens")  # 0: no speculation
    spec_acceptance: float = _default("spec_acceptance")

    def with_batch(self, batch: int) -> ScenarioForm:
        return replace(self, batch=max(1, min(batch, 1 << 20)))

    def with_prompt(self, prompt_tokens: int) -> ScenarioForm:
        return replace(self, prompt_tokens=max(1, min(prompt_tokens, 10_000_000)))


def _with_overrides(hw: Hardware, form: ScenarioForm, compute_dtype: str) -> Hardware:
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
        precisions = released_precisions(model, weights=form.weights, activations=form.activations, kv=form.kv,
                                          expert_weights=form.expert_weights)
        hardware = _with_overrides(hardware, form, precisions.compute_dtype)
        return Scenario(
            hardware=hardware,
            model=model,
            precisions=precisions,
            batching=Batching(batch_size=form.batch, prompt_tokens=form.prompt_tokens,
                              output_tokens=form.output_tokens, flash_attention=form.flash_attention,
                              kv_compression_ratio=form.kv_compression_ratio),
            parallelism=Parallelism(tp=form.tp, pp=form.pp),
            engine=form.engine,
            topology=form.topology,
        )
    except ModelInputError as err:
        raise FormError(input_for_model_error(err.field), err.message) from None
