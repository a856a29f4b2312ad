"""What each chart view draws, from explorer results (shared by the explorer, talk mode and handouts)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from roofline.models.estimate import time_op
from roofline.models.history import default_endpoints, metric_value
from roofline.models.sweeps import powers_of_two
from roofline.presets.loader import PresetCatalog
from roofline.tui.inputs.registry import BY_NAME
from roofline.tui.views.chart_series import roofline_points
from roofline.tui.views.formatting import duration
from roofline.tui.views.history_charts import HistoryData, history_data
from roofline.tui.views.results import ExplorerResults

GIB = 1024**3


def roofline_args(r: ExplorerResults, achievable: bool = False, baseline: ExplorerResults | None = None) -> tuple:
    """The Roofline plot's data: the ops' points, both ceilings, a pinned baseline's decode step, which roof is used."""
    base = None
    if baseline is not None:
        bp = roofline_points(baseline.decode_ops, baseline.prefill_ops, baseline.spec)
        base = (bp.step_x, bp.step_y)
    return (roofline_points(r.decode_ops, r.prefill_ops, r.spec), r.spec, r.achievable, base, bool(achievable))


def batch_args(r: ExplorerResults, achievable: bool = False) -> tuple:
    """The Batch plot's data. Under the achievable ceilings one more, ``expected``'s band along the sweep
    (ExplorerResults.batch_band, computed the first time it is shown); under the spec ones none (``bound`` is a
    ceiling)."""
    decode = r.chosen(achievable).decode
    args = (r.batch_sweep(achievable), r.scenario.batching.batch_size, decode.tokens_per_s,
            decode.tokens_per_s_per_seq)
    return (*args, r.batch_band()) if achievable else args


def context_args(r: ExplorerResults, achievable: bool = False) -> tuple:
    """The Context plot's data (and, under the achievable ceilings, ``expected``'s band as for the Batch plot)."""
    point = r.context_point(achievable)
    args = (r.context_sweep(achievable), r.shown_context, float(point.tokens_per_s_per_seq[0]),
            float(point.kv_time_share[0]), r.scenario.model.max_position_embeddings)
    return (*args, r.context_band()) if achievable else args


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryByBatch:
    """Memory per device (GiB) against batch, for the Memory view: what fits is the question.

    ``total_gib[i]`` = weights + runtime reserve + activation workspace(B) + B x KV per sequence (prompt + output
    tokens), at ``batches[i]`` (powers of two, 1 to past the largest batch that fits); the parts at the scenario's
    own batch for the title."""

    batches: np.ndarray
    total_gib: np.ndarray
    weights_gib: float
    capacity_gib: float
    max_batch: int
    batch: int
    parts_gib: dict[str, float]  # weights, KV cache, activations, reserve at ``batch``
    fits_at_tp: int | None  # where the scenario does not fit: the smallest TP that would (None: none up to 8)


def memory_by_batch(r: ExplorerResults) -> MemoryByBatch:
    from roofline.models.memory import activation_bytes_per_device, kv_cache_bytes_per_sequence_per_device
    from roofline.tui.views.compare_data import smallest_fitting_tp

    s, m = r.scenario, r.memory
    b = s.batching
    top = max(m.max_batch, b.batch_size, 32) * 2  # past the largest batch that fits; the growth shows even at 0
    batches = powers_of_two(min(top, int(BY_NAME["batch"].high)))  # no further than a batch can be set
    kv_per_seq = kv_cache_bytes_per_sequence_per_device(s, b.prompt_tokens + b.output_tokens)
    fixed = m.per_device_weights_bytes + m.per_device_runtime_reserve_bytes
    total = np.array([fixed + int(n) * kv_per_seq + activation_bytes_per_device(s, int(n)) for n in batches])
    return MemoryByBatch(
        batches=batches, total_gib=total / GIB, weights_gib=m.per_device_weights_bytes / GIB,
        capacity_gib=m.capacity_bytes / GIB, max_batch=m.max_batch, batch=b.batch_size,
        parts_gib={"weights": m.per_device_weights_bytes / GIB, "KV": m.per_device_kv_cache_bytes / GIB,
                   "act.": m.per_device_activation_bytes / GIB, "reserve": m.per_device_runtime_reserve_bytes / GIB},
        fits_at_tp=None if m.fits else smallest_fitting_tp(s))


def live_points_log10(trail) -> tuple[tuple[float, float], ...]:
    """The live trail (oldest first) as (log10 FLOP/B, log10 FLOP/s); idle or all-compute samples are left out."""
    if trail is None:
        return ()
    return tuple((math.log10(p.arithmetic_intensity_flop_per_byte), math.log10(p.achieved_flops_per_s))
                 for p in trail.points if p.arithmetic_intensity_flop_per_byte and p.achieved_flops_per_s > 0)


def history_for(catalog: PresetCatalog, r: ExplorerResults, metric: str = "bf16", vendor: str = "all"
                ) -> HistoryData | None:
    """Datacenter parts (and the selected device) against the first 2012 NVIDIA part."""
    current = r.scenario.hardware
    devices = [hw for hw in catalog.hardware.values()
               if (hw.category == "datacenter" or hw.id == current.id) and vendor in ("all", hw.vendor)]
    first, last = default_endpoints(catalog.hardware.values())
    if first is None or last is None:
        return None
    baseline = catalog.hardware[first]
    if metric_value(baseline, metric) is None:
        candidates = sorted((hw for hw in devices if metric_value(hw, metric)), key=lambda hw: hw.year)
        if not candidates:
            return None
        baseline = candidates[0]
    return history_data(devices or [current], metric, baseline, catalog.hardware[last], current.id)


def ops_table_lines(r: ExplorerResults, top: int = 10) -> list[str]:
    """The decode step's most expensive ops as plain text."""
    timed = [(op, float(time_op(op, r.spec).time_s) * op.count) for op in r.decode_ops]
    total = sum(t for _, t in timed)
    lines = [f"{'decode op':24} {'x':>4} {'FLOP/B':>8} {'limited by':>12} {'time':>10} {'share':>6}"]
    for op, t in sorted(timed, key=lambda item: -item[1])[:top]:
        ai = "-" if op.kind == "collective" else f"{float(op.arithmetic_intensity_flops_per_byte):,.1f}"
        lines.append(f"{op.name[:24]:24} {op.count:>4} {ai:>8} {time_op(op, r.spec).limited_by:>12} "
                     f"{duration(t):>10} {100 * t / total:5.1f}%")
    return lines


def compare_lines(catalog: PresetCatalog, r: ExplorerResults, hardware_ids: list[str],
                  achievable: bool = False) -> list[str]:
    """The slide's workload on other devices, as plain text: the Compare view's rows (tui/views/compare_data.py),
    with no throughput where it does not fit and the smallest TP that would."""
    from roofline.tui.views.compare_data import compare_rows

    lines = [f"{'device':24} {'TP':>3} {'tok/s/seq':>10} {'tok/s total':>12} {'TTFT':>10}  fits"]  # 80 columns
    for row in compare_rows(r, catalog.hardware, hardware_ids, achievable=achievable):
        name, tp, per_seq, total, ttft, _idle, fits, *_rest = row.cells()
        lines.append(f"{name.strip()[:24]:24} {tp:>3} {per_seq:>10} {total:>12} {ttft:>10}  {fits}")
    return lines
