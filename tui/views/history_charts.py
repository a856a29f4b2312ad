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
# The claim's years ("2012 to 2022"), widened by one year as models.history.closest_pairs_to_claim does.
CLAIM_FROM_YEARS = (2011, 2013)
CLAIM_TO_YEARS = (2020, 2022)
# The claim's usual endpoint: the 2022 flagship, kept as the default endpoint whenever the selection has it.
DEFAULT_ENDPOINT_ID = "h100-sxm"
DEFAULT_CHART_SIZE = (100, 24)  # (columns, rows) when the caller does not say


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
    endpoint: Hardware | None = None
    # both ends in the selection, baseline from 2011-13, endpoint from 2020-22: only then do the claim's own
    # lines speak about this selection
    claim_applies: bool = False


def choose_endpoints(devices: list[Hardware], metric: str, preferred_from: str | None = None,
                     preferred_to: str | None = DEFAULT_ENDPOINT_ID) -> tuple[Hardware, Hardware] | None:
    """(baseline, endpoint) for a selection: the preferred parts when the selection has them with the metric,
    else the earliest part that has the metric (then by id) and the newest one (then by highest peak).
    None when no part in the selection has the metric."""
    with_metric = sorted((hw for hw in devices if metric_value(hw, metric)), key=lambda hw: (hw.year, hw.id))
    if not with_metric:
        return None
    by_id = {hw.id: hw for hw in with_metric}
    baseline = by_id.get(preferred_from or "") or with_metric[0]
    later = [hw for hw in with_metric if hw.year >= baseline.year and hw.id != baseline.id]
    endpoint = by_id.get(preferred_to or "")
    if endpoint is None or endpoint not in later:
        endpoint = max(later, key=lambda hw: (hw.year, metric_value(hw, metric)[0]), default=baseline)
    return baseline, endpoint


def history_data(devices: list[Hardware], metric: str, baseline: Hardware, to: Hardware,
                 highlight: str | None = None) -> HistoryData:
    with_metric = [hw for hw in devices if metric_value(hw, metric)]
    checks = {m: growth(baseline, to, m) for m in ("fp64", "fp64-matrix", "bf16")}
    ids = {hw.id for hw in devices}
    applies = (baseline.id in ids and to.id in ids and CLAIM_FROM_YEARS[0] <= baseline.year <= CLAIM_FROM_YEARS[1]
               and CLAIM_TO_YEARS[0] <= to.year <= CLAIM_TO_YEARS[1])
    return HistoryData(
        devices=sorted(with_metric, key=lambda hw: (hw.year, hw.id)),
        metric=metric,
        baseline=baseline,
        highlight=highlight,
        growth=growth(baseline, to, metric) if to.id != baseline.id else None,
        trend=trend(with_metric, metric),
        close_pairs=closest_pairs_to_claim(devices, "fp64-matrix", from_years=CLAIM_FROM_YEARS,
                                           to_years=CLAIM_TO_YEARS),
        claim_checks=checks,
        endpoint=to,
        claim_applies=applies,
    )


def _multiplier(x: float) -> str:
    """x250, x13.4, x1.05: three significant figures at most, no trailing noise."""
    return f"x{x:,.0f}" if x >= 100 else f"x{x:.3g}"


def _place_labels(plt, wanted: list[tuple[str, float, float, str]], points: list[tuple[float, float]],
                  x_range: tuple[float, float], y_range: tuple[float, float], size: tuple[int, int],
                  ytick_columns: int) -> list[str]:
    """Write labels beside points, best first, skipping any that would cover a point or touch a placed label.

    ``wanted``: (text, x, y, colour) in data units; ``points``: every marker. The plot area is ``size`` less the
    y tick labels and two borders across, less the title, the two borders, the x ticks and the x label down;
    a label starts two cells right of its point or ends one cell left of it (that side first in the right third).
    Returns the texts placed.
    """
    columns, rows = max(size[0] - ytick_columns - 2, 10), max(size[1] - 5, 4)
    (x0, x1), (y0, y1) = x_range, y_range
    x_span, y_span = (x1 - x0) or 1.0, (y1 - y0) or 1.0

    def cell(x: float, y: float) -> tuple[int, set[int]]:
        """The column, and the row or two rows the point may land on (plotext rounds on its own)."""
        row = (y - y0) / y_span * (rows - 1)
        return round((x - x0) / x_span * (columns - 1)), {math.floor(row), math.ceil(row)}

    markers: dict[int, set[int]] = {}
    for x, y in points:
        col, rows_at = cell(x, y)
        for row in rows_at:
            markers.setdefault(row, set()).add(col)
    labels: dict[int, list[tuple[int, int]]] = {}
    placed = []
    step = x_span / (columns - 1)
    for text, x, y, color in wanted:
        col, rows_at = cell(x, y)
        sides = (True, False) if col > columns * 2 // 3 else (False, True)  # the left side first on the right
        for left_of_point in sides:
            first = col - 1 - len(text) if left_of_point else col + 2
            last = first + len(text)  # one past the label's last cell
            if first < 0 or last > columns:
                continue
            if any(first <= c < last for row in rows_at for c in markers.get(row, ())):
                continue
            if any(a <= last and first <= b for row in rows_at for a, b in labels.get(row, [])):  # overlap/touch
                continue
            for row in rows_at:
                labels.setdefault(row, []).append((first, last))
            plt.text(text, x - step * (1 + len(text)) if left_of_point else x + 2 * step, y, color=color,
                     alignment="left")
            placed.append(text)
            break
    return placed


def _year_ticks(plt, years: list[int]) -> None:
    first, last = min(years), max(years)
    step = 2 if last - first <= 16 else 4
    ticks = list(range(first, last + 1, step))
    plt.xticks([float(y) for y in ticks], [str(y) for y in ticks])


def draw_growth(plt, data: HistoryData, size: tuple[int, int] = DEFAULT_CHART_SIZE) -> list[str]:
    """Compute and bandwidth against year, normalised to the baseline device, with trend lines.

    Points carry device ids where they fit (end points, the selected part first); the endpoint's two points
    carry their multipliers and the gap between them (compute x / bandwidth x) is drawn as a vertical line.
    Returns the labels placed (size = the chart's (columns, rows), for the label layout).
    """
    base = metric_value(data.baseline, data.metric)
    if base is None:
        plt.title(f"{data.baseline.name} has no {METRIC_LABELS[data.metric]} peak: pick another baseline")
        return []
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
    at = {hw.id: (hw.year, c, b) for hw, c, b in zip(data.devices, compute, bandwidth, strict=True)}
    wanted: list[tuple[str, float, float, str]] = []
    g, end = data.growth, data.endpoint
    if g is not None and end is not None and end.id in at:
        year, c, b = at[end.id]
        # the gap in the legend too, so it reads even where no label fits
        plt.plot([year, year], [b, c], color="white", marker="|",
                 label=f"{end.id}: compute {_multiplier(g.compute_x)}, bandwidth {_multiplier(g.bandwidth_x)}, "
                       f"gap {_multiplier(g.ratio)}")
        wanted += [(_multiplier(g.compute_x), year, c, "red"), (_multiplier(g.bandwidth_x), year, b, "cyan"),
                   (f"gap {_multiplier(g.ratio)}", year, (b + c) / 2, "white")]
    if data.baseline.id in at:
        year, c, _ = at[data.baseline.id]
        wanted.append((f"{data.baseline.id} = 1x", year, c, "white"))
    if data.highlight:
        for hw in data.devices:
            if hw.id == data.highlight:
                y = math.log10(metric_value(hw, data.metric)[0] / base[0])
                plt.scatter([hw.year], [y], marker="@", color="green", label=f"selected: {hw.id}")
                wanted.append((hw.id, hw.year, y, "green"))
    wanted += [(hw_id, year, c, "red") for hw_id, (year, c, _) in at.items()
               if hw_id not in (data.highlight, data.baseline.id, end.id if end else None)]
    low = math.floor(min(compute + bandwidth))
    high = math.ceil(max(compute + bandwidth))
    plt.ylim(low, high)
    ticks = [_X_LABELS.get(p, f"10^{p}x") for p in range(low, high + 1)]
    plt.yticks([float(p) for p in range(low, high + 1)], ticks)
    _year_ticks(plt, years)
    rate = ""
    if data.trend is not None:
        rate = (f"; per 2 years: compute x{data.trend.compute_per_2y:.2f}, "
                f"bandwidth x{data.trend.bandwidth_per_2y:.2f}")
    plt.title(f"growth vs {data.baseline.id} ({data.metric}){rate}")  # the metric's long label is in the callout
    plt.xlabel("year")
    points = [(y, v) for y, c, b in zip(years, compute, bandwidth, strict=True) for v in (c, b)]
    return _place_labels(plt, wanted, points, (min(years), max(years)), (low, high), size,
                         max(len(t) for t in ticks))


def draw_ridge(plt, data: HistoryData, size: tuple[int, int] = DEFAULT_CHART_SIZE) -> list[str]:
    """The ridge point (16-bit peak / bandwidth) per device and year, log10 FLOP/byte; points carry their ids
    where they fit (the selected part, the baseline and the endpoint first). Returns the labels placed."""
    points = [(hw.year, math.log10(r), hw.id) for hw in data.devices if (r := ridge_flops_per_byte(hw))]
    if not points:
        return []
    plt.scatter([p[0] for p in points], [p[1] for p in points], marker="r", color="yellow", label="ridge")
    for year, y, hw_id in points:
        if hw_id == data.highlight:
            plt.scatter([year], [y], marker="@", color="green", label=f"selected: {hw_id}")
    low, high = math.floor(min(p[1] for p in points)), math.ceil(max(p[1] for p in points))
    _year_ticks(plt, [p[0] for p in points])
    plt.ylim(low, high)
    ticks = [f"{10 ** p:g}" for p in range(low, high + 1)]
    plt.yticks([float(p) for p in range(low, high + 1)], ticks)
    plt.title("ridge point: FLOP/byte a kernel needs to be compute-bound (16-bit peak / bandwidth)")
    plt.xlabel("year")
    first = (data.highlight, data.baseline.id, data.endpoint.id if data.endpoint else None)
    ranked = sorted(points, key=lambda p: (p[2] not in first, first.index(p[2]) if p[2] in first else 0))
    wanted = [(f"{hw_id} {10 ** y:,.0f}", year, y, "green" if hw_id == data.highlight else "yellow")
              for year, y, hw_id in ranked]
    years = [p[0] for p in points]
    return _place_labels(plt, wanted, [(p[0], p[1]) for p in points], (min(years), max(years)), (low, high), size,
                         max(len(t) for t in ticks))


def callout_lines(data: HistoryData) -> list[str]:
    """What the data gives for this selection, in plain sentences; the claim's own lines only when the
    selection runs from the claim's start (2011-13) to its end (2020-22)."""
    lines = []
    g = data.growth
    if g is not None:
        lines.append(f"{g.from_id} -> {g.to_id}: compute x{g.compute_x:,.1f} ({g.metric}), bandwidth "
                     f"x{g.bandwidth_x:,.1f}; compute grew {g.ratio:,.1f}x faster")
    elif data.endpoint is not None and data.endpoint.id == data.baseline.id:
        lines.append(f"{data.baseline.id} is the only part here with a {METRIC_LABELS[data.metric]} peak: "
                     "nothing to compare")
    if not data.claim_applies:
        return lines
    checks = [(m, c) for m, c in data.claim_checks.items() if c is not None]
    lines.append(f"claim: \"{CLAIM['text']}\". The data, {data.baseline.id} -> {data.endpoint.id}: "
                 + ", ".join(f"{m} x{c.compute_x:,.0f}" for m, c in checks)
                 + (f"; bandwidth x{checks[0][1].bandwidth_x:,.1f}" if checks else ""))
    if data.close_pairs:
        lines.append("pairs that come close (FP64 incl. matrix, 2011-13 -> 2020-22): " + "; ".join(
            f"{p.from_id} -> {p.to_id} x{p.compute_x:,.0f} / x{p.bandwidth_x:,.1f}" for p in data.close_pairs))
    shown = [c for _, c in checks] + list(data.close_pairs) + ([g] if g else [])
    if shown and all(c.ratio > 1 for c in shown):
        lines.append("the direction is right: compute outgrew bandwidth in every pairing above; the multipliers "
                     "depend on the pair and the precision")
    return lines
