"""Slide numbers that carry a talk's claims beyond the headline set of :mod:`.slide_numbers` (no Textual here).

Each name here is a number a slide's sentence is about: bound against expected (what the roofline cannot see),
TTFT with and without FlashAttention (it speeds prefill), a device's memory bandwidth (tokens/s follow it), the
arithmetic intensity of the weight GEMMs (grows with the batch) and of attention (stays near the GQA group size).
"""

from __future__ import annotations

from dataclasses import replace

from roofline.models.errors import ModelInputError
from roofline.models.inference import estimate
from roofline.models.scenario import Scenario
from roofline.presets.loader import PresetCatalog
from roofline.tui.views.formatting import flop_per_byte
from roofline.tui.views.results import ExplorerResults, compute_results
from roofline.tui.views.slide_numbers import slide_number

CLAIM_LABELS = {
    "decode_tokens_per_s_per_seq_expected": "tok/s per user, expected",
    "ttft_ms_no_flash": "TTFT ms, no FlashAttention",
    "mem_bw_tb_per_s": "bandwidth TB/s",
    "weight_gemm_flops_per_byte": "weight GEMMs FLOP/B",
    "attention_flops_per_byte": "attention FLOP/B",
}


def _intensity(r: ExplorerResults, kind: str) -> float:
    """Decode-step FLOPs over bytes moved for one kind of op, every layer together: sum(FLOPs) / sum(bytes)."""
    ops = [op for op in r.decode_ops if op.kind == kind and (kind != "matmul" or op.weight_bytes > 0)]
    flops = sum(float(op.flops) * op.count for op in ops)
    moved = sum(float(op.memory_bytes) * op.count for op in ops)
    return flops / moved if moved > 0 else 0.0


def slide_value(name: str, r: ExplorerResults, catalog: PresetCatalog) -> tuple[str, str]:
    """(label, value as text) for any number a slide may name; the bound estimate unless the label says otherwise."""
    if name not in CLAIM_LABELS:
        return slide_number(name, r, catalog)
    label = CLAIM_LABELS[name]
    if name == "decode_tokens_per_s_per_seq_expected":
        return label, f"{r.expected.decode.tokens_per_s_per_seq:,.1f}"
    if name == "ttft_ms_no_flash":
        s = r.scenario
        plain = replace(s, batching=replace(s.batching, flash_attention=False))
        return label, f"{estimate(plain, 'bound').ttft_s * 1e3:,.1f}"
    if name == "mem_bw_tb_per_s":
        return label, f"{r.scenario.hardware.mem_bw_bytes_per_s / 1e12:.2f}"
    if name == "weight_gemm_flops_per_byte":
        return label, flop_per_byte(_intensity(r, "matmul"))
    return label, flop_per_byte(_intensity(r, "attention"))


def bandwidth_compare_lines(catalog: PresetCatalog, r: ExplorerResults, hardware_ids: list[str]) -> list[str]:
    """The slide's workload on other devices, sorted by memory bandwidth: tokens/s per user follow the TB/s column
    far more than the peak FLOP/s column (bound estimate, the slide's own precisions and parallelism)."""
    dtype = r.scenario.precisions.activations
    rows = []
    for hw_id in dict.fromkeys([r.scenario.hardware.id, *hardware_ids]):
        hw = catalog.hardware.get(hw_id)
        if hw is None:
            continue
        s = r.scenario
        try:
            other = compute_results(Scenario(hardware=hw, model=s.model, precisions=s.precisions,
                                             batching=s.batching, parallelism=s.parallelism))
        except ModelInputError as err:
            rows.append((hw.mem_bw_bytes_per_s, f"{hw.name[:30]:30} n/a: {err}"))
            continue
        peak_flops_per_s = hw.matmul_peak(dtype)[1]
        rows.append((hw.mem_bw_bytes_per_s,
                     f"{hw.name[:30]:30} {hw.mem_bw_bytes_per_s / 1e12:6.2f} {peak_flops_per_s / 1e12:8,.0f} "
                     f"{other.bound.decode.tokens_per_s_per_seq:10,.1f} {'yes' if other.memory.fits else 'NO':>5}"))
    header = f"{'device':30} {'TB/s':>6} {'TFLOP/s':>8} {'tok/s/user':>10} {'fits':>5}"
    return [header, *(line for _, line in sorted(rows, key=lambda row: row[0]))]
