"""The named headline numbers a slide can show, computed from the slide's scenario (no Textual here)."""

from __future__ import annotations

from roofline.models.history import growth
from roofline.presets.loader import PresetCatalog
from roofline.tui.views.formatting import flop_per_byte
from roofline.tui.views.results import ExplorerResults

LABELS = {
    "decode_tokens_per_s_per_seq": "tok/s per user",
    "decode_tokens_per_s": "tok/s total",
    "idle_core_pct": "idle cores %",
    "ttft_ms": "TTFT ms",
    "ridge_flops_per_byte": "ridge FLOP/B",
    "memory_fit": "memory / device",
    "growth_compute_x": "compute growth x",
    "growth_bandwidth_x": "bandwidth growth x",
    "mbu_pct": "bandwidth used %",
    "max_batch": "largest batch",
}


def slide_number(name: str, r: ExplorerResults, catalog: PresetCatalog) -> tuple[str, str]:
    """(label, value as text) for a named number, from the bound estimate (the roofline's own numbers)."""
    e = r.bound
    if name == "decode_tokens_per_s_per_seq":
        return LABELS[name], f"{e.decode.tokens_per_s_per_seq:,.1f}"
    if name == "decode_tokens_per_s":
        return LABELS[name], f"{e.decode.tokens_per_s:,.0f}"
    if name == "idle_core_pct":
        return LABELS[name], f"{e.decode.phase.idle_core_pct:.1f}"
    if name == "mbu_pct":
        return LABELS[name], f"{e.decode.phase.mbu_pct:.1f}"
    if name == "ttft_ms":
        return LABELS[name], f"{e.ttft_s * 1e3:,.1f}"
    if name == "ridge_flops_per_byte":
        return LABELS[name], flop_per_byte(r.spec.ridge_flops_per_byte)
    if name == "max_batch":
        return LABELS[name], f"{r.memory.max_batch:,}"
    if name == "memory_fit":
        verdict = "fits" if r.memory.fits else "DOES NOT FIT"  # short: a slide's number box is about 20 columns
        gib_used, gib_cap = r.memory.per_device_bytes / 1024**3, r.memory.capacity_bytes / 1024**3
        return LABELS[name], f"{gib_used:,.1f}/{gib_cap:,.0f} GiB {verdict}"
    if name in ("growth_compute_x", "growth_bandwidth_x"):
        hw = catalog.hardware
        g = growth(hw["k20x"], hw["h100-sxm"], "bf16") if "k20x" in hw and "h100-sxm" in hw else None
        if g is None:
            return LABELS[name], "-"
        value = g.compute_x if name == "growth_compute_x" else g.bandwidth_x
        return LABELS[name] + " (K20X->H100)", f"{value:,.1f}"
    raise ValueError(f"unknown number {name!r}")
