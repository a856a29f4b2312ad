"""The precisions a scenario runs at, in words, and the warning for 8-bit float weights run at 16-bit activations.

``--weights fp8`` alone is weight-only fp8 (W8A16): the weights stream at one byte each and are dequantised to the
16-bit activations, so the GEMMs run at the 16-bit peak. vLLM and TensorRT-LLM run an fp8 checkpoint on Hopper and
newer as W8A8 (fp8 activations too, at the fp8 peak): vLLM's fp8 method quantises activations to fp8 and calls a
scaled fp8 GEMM where the device has fp8 tensor cores, and keeps the weight-only FP8 Marlin kernel "for GPUs that lack
FP8 hardware support" (vllm/model_executor/layers/quantization/utils/marlin_utils_fp8.py). Saying which one ran is
the difference between 20 and 12 H100s for 70B at 20 requests/s. Used by ``report``, ``plan``
and the explorer's scenario line; no Textual here.
"""

from __future__ import annotations

from collections.abc import Mapping

SIXTEEN_BIT = ("bf16", "fp16")


def precision_line(weights: str, activations: str, kv: str, expert_weights: str | None = None) -> str:
    """``weights fp8 (experts fp4), activations bf16 (weight-only), kv bf16``."""
    experts = f" (experts {expert_weights})" if expert_weights not in (None, weights) else ""
    weight_only = " (weight-only: dequantised to 16-bit)" if _weight_only_fp8(weights, expert_weights,
                                                                              activations) else ""
    return f"weights {weights}{experts}, activations {activations}{weight_only}, kv {kv}"


def _weight_only_fp8(weights: str, expert_weights: str | None, activations: str) -> bool:
    return activations in SIXTEEN_BIT and "fp8" in (weights, expert_weights)


def weight_only_fp8_warning(weights: str, activations: str, dense_peak_flops_per_s: Mapping[str, float],
                            device_name: str, expert_weights: str | None = None) -> str | None:
    """A one-line warning when fp8 weights run with 16-bit activations on a part whose tensor cores take fp8
    (its preset states an fp8 peak above the 16-bit one); None otherwise."""
    if not _weight_only_fp8(weights, expert_weights, activations):
        return None
    fp8 = dense_peak_flops_per_s.get("fp8")
    sixteen = dense_peak_flops_per_s.get(activations) or dense_peak_flops_per_s.get("bf16")
    if not fp8 or not sixteen or fp8 <= sixteen:
        return None
    return (f"fp8 weights with {activations} activations is weight-only fp8 (W8A16: GEMMs at the {activations} "
            f"peak); {device_name} has fp8 tensor cores ({fp8 / sixteen:.1f}x the {activations} rate), and vLLM "
            "and TensorRT-LLM run fp8 checkpoints there as W8A8: add --activations fp8")


def scenario_precision_warning(scenario) -> str | None:
    """:func:`weight_only_fp8_warning` for a :class:`~roofline.models.scenario.Scenario`."""
    p, hw = scenario.precisions, scenario.hardware
    return weight_only_fp8_warning(p.weights, p.activations, hw.dense_peak_flops_per_s, hw.name,
                                   getattr(p, "expert_weights", None))
