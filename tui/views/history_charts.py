"""The History charts, drawn on any plotext figure (the CLI's or a PlotextPlot's); no Textual here.

Log axes are drawn as log10 values on linear axes with hand-made decade labels (plotext 5
breaks when a log scale is rebuilt).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from roofline.models.hardware import Hardware
from roofline.models.history import (
    CLAIM,
    METRIC_LABELS,
    Growth,
    Trend,
    closest_pairs_to_claim,
    growth,
    metric_value,
    package_bandwidth_bytes_per_s,
    ridge_flops_per_byte,
    trend,
)

_X_LABELS = {0: "1x", 1: "10x", 2: "100x", 3: "1000x", 4: "10^4x", 5: "10^5x", -1: "0.1x", -2: "0.01x"}


@dataclass(frozen=True, slots=True)
class HistoryData:
    devices: list[Hardware]
    metric: str
    baseline: Hardware
    highlight: str | None
    growth: Growth | None
    trend: Trend | None
    close_pairs: list[Growth]
    claim_checks: dict[str, Growth | None]


def history_data(devices: list[Hardware], metric: str, baseline: Hardware, to: Hardware,
                 highlight: str | None = None) -> HistoryData:
    with_metric = [hw for hw in devices if metric_value(hw, metric)]
    checks = {m: growth(baseline, to, m) for m in ("fp64", "fp64-matrix", "bf16")}
    return HistoryData(
        devices=sorted(with_metric, key=lambda hw: (hw.year, hw.id)),
        metric=metric,
        baseline=baseline,
        highlight=highlight,
        growth=growth(baseline, to, metric),
        trend=trend(with_metric, metric),
        close_pairs=closest_pairs_to_claim(devices, "fp64-matrix"),
        claim_checks=checks,
    )


def _year_ticks(plt, years: list[int]) -> None:
    first, last = min(years), max(years)
    step = 2 if last - first <= 16 else 4
    ticks = list(range(first, last + 1, step))
    plt.xticks([float(y) for y in ticks], [str(y) for y in ticks])


def draw_growth(plt, data: HistoryData) -> None:
    """Compute and bandwidth against year, normalised to the baseline device, with trend lines."""
    base = metric_value(data.baseline, data.metric)
    if base is None:
        plt.title(f"{data.baseline.name} has no {METRIC_LABELS[data.metric]} peak: pick another baseline")
        return
    years = [hw.year for hw in data.devices]
    compute = [math.log10(metric_value(hw, data.metric)[0] / base[0]) for hw in data.devices]
    bandwidth = [math.log10(package_bandwidth_bytes_per_s(hw) / package_bandwidth_bytes_per_s(data.baseline))
                 for hw in data.devices]
    plt.scatter(years, compute, marker="c", color="red", label=f"compute ({data.metric})")
    plt.scatter(years, bandwidth, marker="b", color="cyan", label="memory bandwidth")
    if data.trend is not None:
        span = np.array([data.trend.first_year, data.trend.last_year], dtype=float)
        for per_2y, value_at, color in ((data.trend.compute_per_2y, compute, "red"),
                                        (data.trend.bandwidth_per_2y, bandwidth, "cyan")):
            slope = math.log10(per_2y) / 2
            intercept = float(np.mean(value_at) - slope * np.mean(years))
            plt.plot(span.tolist(), (intercept + slope * span).tolist(), color=color, marker="braille")
    if data.highlight:
        for hw in data.devices:
            if hw.id == data.highlight:
                y = math.log10(metric_value(hw, data.metric)[0] / base[0])
                plt.scatter([hw.year], [y], marker="@", color="green", label=f"selected: {hw.id}")
    low = math.floor(min(compute + bandwidth))
    high = math.ceil(max(compute + bandwidth))
    plt.ylim(low, high)
    plt.yticks([float(p) for p in range(low, high + 1)], [_X_LABELS.get(p, f"10^{p}x") for p in range(low, high + 1)])
    _year_ticks(plt, years)
    rate = ""
    if data.trend is not None:
        rate = (f"; trend per 2 years: compute x{data.trend.compute_per_2y:.2f}, "
                f"bandwidth x{data.trend.bandwidth_per_2y:.2f}")
    plt.title(f"growth vs {data.baseline.id} ({METRIC_LABELS[data.metric]}){rate}")
    plt.xlabel("year")


def draw_ridge(plt, data: HistoryData) -> None:
    """The ridge point (16-bit peak / bandwidth) per device and year, log10 FLOP/byte."""
    points = [(hw.year, math.log10(r), hw.id) for hw in data.devices if (r := ridge_flops_per_byte(hw))]
    if not points:
        return
    plt.scatter([p[0] for p in points], [p[1] for p in points], marker="r", color="yellow", label="ridge")
    for year, y, hw_id in points:
        if hw_id == data.highlight:
            plt.scatter([year], [y], marker="@", color="green", label=f"selected: {hw_id}")
    low, high = math.floor(min(p[1] for p in points)), math.ceil(max(p[1] for p in points))
    _year_ticks(plt, [p[0] for p in points])
    plt.ylim(low, high)
    plt.yticks([float(p) for p in range(low, high + 1)], [f"{10 ** p:g}" for p in range(low, high + 1)])
    plt.title("ridge point: FLOP/byte a kernel needs to be compute-bound (16-bit peak / bandwidth)")
    plt.xlabel("year")


def callout_lines(data: HistoryData) -> list[str]:
    """The claim, and what the data gives, in plain sentences."""
    lines = []
    g = data.growth
    if g is not None:
        lines.append(f"{g.from_id} -> {g.to_id}: compute x{g.compute_x:,.1f} ({g.metric}), bandwidth "
                     f"x{g.bandwidth_x:,.1f}; compute grew {g.ratio:,.1f}x faster")
    lines.append(f"claim: \"{CLAIM['text']}\". The data, {data.baseline.id} -> "
                 f"{g.to_id if g else '?'}: " + ", ".join(
                     f"{m} x{c.compute_x:,.0f}" for m, c in data.claim_checks.items() if c is not None)
                 + (f"; bandwidth x{g.bandwidth_x:,.1f}" if g else ""))
    if data.close_pairs:
        lines.append("pairs that come close (FP64 incl. matrix, 2011-13 -> 2020-22): " + "; ".join(
            f"{p.from_id} -> {p.to_id} x{p.compute_x:,.0f} / x{p.bandwidth_x:,.1f}" for p in data.close_pairs))
    lines.append("the direction is right: compute outgrew bandwidth in every pairing; the multipliers depend on "
                 "the pair and the precision")
    return lines
