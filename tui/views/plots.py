"""The explorer's charts as plot functions: each takes a plotext figure, the chart's size and the view's data, and
draws (no Textual here). The explorer's chart widget, the slides and the handout call the same functions
(:mod:`roofline.tui.views.registry` says which view uses which).

plotext 5 breaks on log scales when a plot is rebuilt (it takes the log twice), so the log axes here plot log10 (or
log2) of the values on linear axes and label the ticks themselves. Chart text stays ASCII: wide characters
misalign plotext output.
"""

from __future__ import annotations

import math

import numpy as np

from roofline.models.estimate import Ceilings
from roofline.models.sweeps import BatchSweep, ContextSweep
from roofline.tui.views.chart_data import MemoryByBatch
from roofline.tui.views.chart_series import RooflinePoints, decade_ticks, power_of_two_label, power_of_two_ticks
from roofline.tui.views.formatting import flop_per_byte, si
from roofline.tui.views.history_charts import DEFAULT_CHART_SIZE, HistoryData, draw_growth, draw_ridge
from roofline.tui.views.plot_layout import Size, canvas_rows, even_decades, fitting_title, label_beside
from roofline.tui.views.results import ExpectedRange
from roofline.tui.views.serving_data import ServingChartData


def _title(plt, size: Size, *variants: str) -> None:
    plt.title(fitting_title(size, *variants))


def draw_roofline(plt, size: Size, points: RooflinePoints, spec: Ceilings, achievable: Ceilings,
                  baseline: tuple[float, float] | None = None, use_achievable: bool = False,
                  live: list[tuple[float, float]] = ()) -> None:
    """Arithmetic intensity against FLOP/s, log-log: the roof, the ridge, every op.

    ``live``: the running workload's recent (log10 FLOP/B, log10 FLOP/s), oldest first. The roof in use
    (``use_achievable``: the achievable one) is drawn last and strong; the other dim, with another marker, so
    the two stay apart where they nearly coincide, in every theme and under NO_COLOR.

    plotext writes its legend over the plot's top-left rows, so the y axis reaches high enough that every
    roof and point sits below the legend, with one row for the ridge's label above the highest roof; each
    decade takes the same whole number of rows (even ticks). A chart too short for that drops the legend."""
    xs_all = points.decode_x + points.prefill_x + [points.step_x] + [x for x, _ in live]
    ys_all = points.decode_y + points.prefill_y + [points.step_y] + [y for _, y in live]
    chosen = achievable if use_achievable else spec
    ridge = chosen.ridge_flops_per_byte
    knees = [math.log10(c.ridge_flops_per_byte) for c in (spec, achievable)]
    x_low = min(-1.0, math.floor(min(xs_all)), math.floor(min(knees)) - 1.0)
    x_high = max(math.ceil(max(knees)) + 1.0, math.ceil(max(xs_all)))
    int8_peak = spec.integer_gemm_flops_per_s if points.integer_gemms else None
    peak_log = math.log10(max(spec.matmul_flops_per_s, achievable.matmul_flops_per_s, int8_peak or 0.0))
    y_low = math.floor(min(min(ys_all), np.log10(min(spec.mem_bw_bytes_per_s, achievable.mem_bw_bytes_per_s))
                           + x_low))
    top = max(peak_log, *ys_all)
    entries = (2 + bool(int8_peak) + bool(points.prefill_x) + bool(points.decode_x) + (baseline is not None) + 1
               + (len(live) > 1) + bool(live))
    rows = canvas_rows(size)
    legend = rows - 1 - (entries + 1) >= top - y_low  # at least a row per decade under the legend
    y_high, per_decade = even_decades(y_low, top, rows, entries + 1 if legend else 1)

    def label(text: str) -> str | None:
        return text if legend else None

    other = (spec, "spec roof (bound)", "dot") if use_achievable else (achievable, "achievable roof", "dot")
    active = (achievable, "achievable roof (in use)", "braille") if use_achievable else (
        spec, "spec roof (in use)", "braille")
    for (ceil_, name, marker), color in ((other, "gray"), (active, "red")):
        # three points: plotext joins them with straight segments (slope, then flat roof)
        knee = math.log10(ceil_.ridge_flops_per_byte)
        x = [x_low, knee, x_high]
        roof = [math.log10(ceil_.mem_bw_bytes_per_s) + x_low, math.log10(ceil_.matmul_flops_per_s),
                math.log10(ceil_.matmul_flops_per_s)]
        plt.plot(x, roof, label=label(name), color=color, marker=marker)
    if int8_peak:  # GGUF weights: llama.cpp's int8 GEMMs may run up to the int8 peak
        knee = math.log10(int8_peak / spec.mem_bw_bytes_per_s)
        plt.plot([knee, x_high], [math.log10(int8_peak)] * 2, label=label("int8 roof (GGUF GEMMs)"),
                 color="orange", marker="braille")
    if points.prefill_x:
        plt.scatter(points.prefill_x, points.prefill_y, label=label("prefill ops"), marker="+", color="cyan")
    if points.decode_x:
        plt.scatter(points.decode_x, points.decode_y, label=label("decode ops"), marker="o", color="yellow")
    if baseline is not None:
        plt.scatter([baseline[0]], [baseline[1]], label=label("baseline step"), marker="B", color="gray")
    plt.scatter([points.step_x], [points.step_y], label=label("decode step"), marker="@", color="green")
    if len(live) > 1:
        plt.scatter([x for x, _ in live[:-1]], [y for _, y in live[:-1]], label=label("live trail"), marker=".",
                    color="magenta")
    if live:
        plt.scatter([live[-1][0]], [live[-1][1]], label=label("live GPU now"), marker="L", color="magenta")
    plt.vline(math.log10(ridge), color="gray")
    # the ridge's value one row above the highest roof or point (never written over the roof)
    roof_row = round((top - y_low) * per_decade)
    plt.text(f"ridge {flop_per_byte(ridge)} FLOP/B", math.log10(ridge), y_low + (roof_row + 1) / per_decade,
             color="red")
    plt.xlim(x_low, x_high)
    plt.ylim(y_low, y_high)
    plt.xticks(*decade_ticks(x_low, x_high))
    plt.yticks(*decade_ticks(y_low, math.floor(y_high + 1e-9)))
    plt.xlabel("arithmetic intensity (FLOP/B)")
    plt.ylabel("FLOP/s")
    which = "achievable" if use_achievable else "spec"
    peaks = f"peak {si(chosen.matmul_flops_per_s, 'FLOP/s')}, bandwidth {si(chosen.mem_bw_bytes_per_s, 'B/s')}"
    if legend:
        _title(plt, size, f"roofline at {chosen.compute_dtype} ({which}): {peaks}", f"{which} roofline: {peaks}")
    else:  # no room for the legend: the title names the markers
        _title(plt, size, f"{which} roofline, {chosen.compute_dtype}: o decode ops, + prefill ops, @ decode step",
                   f"{which} roofline: o decode, + prefill, @ step")



def draw_batch(plt, size: Size, sweep: BatchSweep, current_batch: int, current_tokens_per_s: float,
               current_tokens_per_s_per_seq: float, band: ExpectedRange | None = None) -> None:
    """Aggregate and per-sequence decode tokens/s against batch (log2 x, log10 y).

    The scenario's own batch is marked on both curves (``@``, named in the title), not by a line across
    the plot: a line would move through every row of the chart on each ``+``/``-``. The markers are named in
    the title and the y label rather than a legend, which would cover the start of the per-sequence curve.
    ``band`` (achievable ceilings only): ``expected``'s range on each curve, drawn under it."""
    x = np.log2(sweep.batches)
    agg, per_seq = np.log10(sweep.tokens_per_s), np.log10(sweep.tokens_per_s_per_seq)
    lowest, highest = float(per_seq.min()), float(agg.max())
    if band is not None:
        pairs = ((band.tokens_per_s_low, band.tokens_per_s_high, "green"),
                 (band.tokens_per_s_per_seq_low, band.tokens_per_s_per_seq_high, "cyan"))
        draw_band(plt, np.log2(band.x), [(np.log10(lo), np.log10(hi), color) for lo, hi, color in pairs])
        lowest = min(lowest, float(np.log10(band.tokens_per_s_per_seq_low).min()))
        highest = max(highest, float(np.log10(band.tokens_per_s_high).max()))
    # no plotext legend (it sits over the plot's top-left, where the per-sequence curve starts): the y label
    # and the title name the markers
    plt.plot(x.tolist(), agg.tolist(), marker="o", color="green")
    plt.plot(x.tolist(), per_seq.tolist(), marker="x", color="cyan")
    here = math.log2(current_batch)
    plt.scatter([here, here], [math.log10(current_tokens_per_s), math.log10(current_tokens_per_s_per_seq)],
                marker="@", color="orange")
    y_low, y_high = math.floor(lowest), math.ceil(highest)
    span = y_high - y_low
    # labels in the top and bottom margins of the plot, clear of the curves (which span min..max)
    if sweep.max_batch_that_fits >= 1:
        plt.vline(math.log2(sweep.max_batch_that_fits), color="red")
        plt.text(f"memory limit B={sweep.max_batch_that_fits:,}", math.log2(sweep.max_batch_that_fits),
                 y_high + 0.04 * span, color="red")
    if sweep.compute_bound_batch is not None and sweep.compute_bound_batch <= sweep.batches[-1]:
        plt.vline(math.log2(sweep.compute_bound_batch), color="yellow")
        plt.text(f"compute-bound from B={sweep.compute_bound_batch:,}", math.log2(sweep.compute_bound_batch),
                 y_low - 0.04 * span, color="yellow")
    ticks = decade_ticks(y_low, y_high)
    y_low, y_high = y_low - 0.08 * span, y_high + 0.08 * span
    plt.ylim(y_low, y_high)
    plt.xticks(*power_of_two_ticks(float(x[0]), float(x[-1])))
    plt.yticks(*ticks)
    plt.xlabel("batch")
    if band is None:
        plt.ylabel("decode tok/s: o aggregate, x per sequence")
    else:
        plt.ylabel(label_beside(size, "batch", f"decode tok/s: o aggregate, x per sequence; {BAND_LABEL}",
                                     f"tok/s: o aggregate, x per sequence, {BAND_LABEL}",
                                     "tok/s: o aggregate, x per sequence, . expected range",
                                     "o aggregate, x per seq., . expected range",
                                     "o aggregate, x per seq., . range"))
    crossover = ("never compute-bound" if sweep.compute_bound_batch is None
                 else f"compute-bound from B={sweep.compute_bound_batch:,}")
    _title(plt, size, f"batch sweep: o aggregate grows, x per-sequence falls; @ B={current_batch:,}; {crossover}",
               f"o aggregate grows, x per-sequence falls; @ B={current_batch:,}; {crossover}",
               f"o aggregate, x per sequence; @ B={current_batch:,}")



def draw_context(plt, size: Size, sweep: ContextSweep, current_context: float, current_tokens_per_s_per_seq: float,
                 current_kv_time_share: float, max_context: int | None = None,
                 band: ExpectedRange | None = None) -> None:
    """Decode tokens/s per sequence against context, and the share of the step spent on KV traffic.

    The context the decode step is shown at is marked with an ``@`` on each curve; the model's maximum
    context (when inside the sweep) as a vertical line. No plotext legend: it covers the top-left, where the
    tok/s curve starts, and marks which axis a series uses with ``L``-shaped glyphs; the axis labels name
    each curve's marker and the title the rest. ``band`` (achievable ceilings only): ``expected``'s range of
    the tok/s curve, drawn under it."""
    x = np.log2(sweep.contexts)
    if band is not None:
        draw_band(plt, np.log2(band.x),
                  [(band.tokens_per_s_per_seq_low, band.tokens_per_s_per_seq_high, "green")])
    plt.plot(x.tolist(), sweep.tokens_per_s_per_seq.tolist(), marker="o", color="green")
    plt.plot(x.tolist(), (100 * sweep.kv_time_share).tolist(), marker="x", color="yellow", yside="right")
    here = math.log2(current_context)
    plt.scatter([here], [current_tokens_per_s_per_seq], marker="@", color="orange")
    plt.scatter([here], [100 * current_kv_time_share], marker="@", color="orange", yside="right")
    limit = ""
    if max_context and x[0] <= math.log2(max_context) <= x[-1]:
        plt.vline(math.log2(max_context), color="red")
        exponent = round(math.log2(max_context))
        shown = power_of_two_label(exponent) if max_context == 2**exponent else f"{max_context:,}"
        limit = f"; | model max {shown}"
    plt.xticks(*power_of_two_ticks(float(x[0]), float(x[-1])))
    plt.xlabel("context (tokens)")
    plt.ylabel("o tok/s per sequence" if band is None else label_beside(
        size, "context (tokens)", f"o tok/s per sequence; {BAND_LABEL}", "o tok/s per sequence; . expected range",
        "o tok/s/seq; . expected range", "o tok/s/seq, . range"), yside="left")
    plt.ylabel("x KV traffic % of step", yside="right")
    plt.ylim(0, 100, yside="right")
    _title(plt, size, f"context sweep: the KV cache takes over; @ this step, context {current_context:,.0f}{limit}",
               f"KV takes over; @ this step, context {current_context:,.0f}{limit}",
               f"@ context {current_context:,.0f}{limit}")



def draw_memory(plt, size: Size, data: MemoryByBatch) -> None:
    """Per-device memory against batch: the weights flat, the total growing with the KV cache, the capacity, the
    largest batch that fits and the scenario's own batch (what fits is the question, not five bars).

    x: batch (log2); y: GiB per device. Markers are ASCII and named in the y label and the title (no
    plotext legend over the data)."""
    x = np.log2(data.batches)
    total = data.total_gib
    plt.plot(x.tolist(), [data.weights_gib] * len(x), marker="=", color="blue")
    over = total > data.capacity_gib
    plt.plot(x.tolist(), total.tolist(), marker="*", color="green")
    if over.any():  # past the capacity: the same curve in red
        plt.scatter(x[over].tolist(), total[over].tolist(), marker="*", color="red")
    here = math.log2(data.batch)
    p = data.parts_gib
    used = sum(p.values())
    plt.scatter([here], [used], marker="@", color="orange")
    plt.hline(data.capacity_gib, color="red")
    y_high = max(data.capacity_gib, float(total.max()), used) * 1.12
    row = y_high / max(1, canvas_rows(size) - 1)  # one row of the plot, in GiB
    plt.text(f"capacity {data.capacity_gib:,.1f} GiB", float(x[0]), data.capacity_gib + row, color="red",
             alignment="left")
    if data.max_batch >= 1:
        limit = math.log2(data.max_batch)
        plt.vline(limit, color="yellow")
        plt.text(f"max batch {data.max_batch:,}", limit, y_high - row, color="yellow")
    plt.xlim(float(x[0]), float(x[-1]))
    plt.ylim(0, y_high)
    plt.xticks(*power_of_two_ticks(float(x[0]), float(x[-1])))
    plt.xlabel("batch")
    plt.ylabel("GiB: = weights, * total")
    verdict = "fits" if used <= data.capacity_gib else (
        f"DOES NOT FIT (fits at TP {data.fits_at_tp})" if data.fits_at_tp else "DOES NOT FIT")
    _title(plt, size, f"@ B={data.batch:,}: weights {p['weights']:,.1f} + KV {p['KV']:,.1f} + act. {p['act.']:,.1f} + "
               f"reserve {p['reserve']:,.1f} = {used:,.1f} of {data.capacity_gib:,.1f} GiB/device, {verdict}",
               f"@ B={data.batch:,}: {used:,.1f} of {data.capacity_gib:,.1f} GiB/device, {verdict}; weights "
               f"{p['weights']:,.1f}, KV {p['KV']:,.1f}",
               f"@ B={data.batch:,}: {used:,.1f} of {data.capacity_gib:,.1f} GiB/device, {verdict}")


BAND_LABEL = ". expected range (engines x ceilings)"  # names the band's marker where the markers are named


def draw_band(plt, x: np.ndarray, curves: list[tuple[np.ndarray, np.ndarray, str]]) -> None:
    """``expected``'s band (models/band.py): a low and a high line of ``.`` in each curve's own colour, drawn before
    the curves so that each curve stays on top where they share a cell (the marker tells them apart under
    NO_COLOR)."""
    for low, high, color in curves:
        for edge in (low, high):
            plt.plot(x.tolist(), np.asarray(edge).tolist(), marker=".", color=color)


def draw_serving(plt, size: Size, d: ServingChartData) -> None:
    """Tokens/s per user against output tokens/s per device over concurrency (log10 on linear axes): the frontier,
    the part past the memory limit, a pinned baseline, the ITL target, the operating point."""
    if d.baseline_xy is not None:
        plt.plot(*d.baseline_xy, label="baseline", marker="braille", color="gray")
    plt.plot(*d.fits_xy, label="frontier (fits)", marker="o", color="green")
    if d.beyond_xy[0]:
        plt.plot(*d.beyond_xy, label="past the memory limit", marker=".", color="red")
    plt.hline(d.itl_target_y, color="yellow")
    plt.text("ITL target", d.x_range[0], d.itl_target_y, color="yellow", alignment="left")
    if d.limit_xy is not None:
        plt.scatter([d.limit_xy[0]], [d.limit_xy[1]], label=d.limit_label, marker="M", color="red")
    if d.targets_xy is not None:
        plt.scatter([d.targets_xy[0]], [d.targets_xy[1]], label=d.targets_label, marker="T", color="yellow")
    plt.scatter([d.point_xy[0]], [d.point_xy[1]], label=d.point_label, marker="@", color="orange")
    if d.measured_xy is not None:
        plt.scatter(*d.measured_xy, label="your runs (--measured)", marker="x", color="cyan")
    if d.engine_xy is not None:
        if len(d.engine_xy[0]) > 1:
            plt.scatter(d.engine_xy[0][:-1], d.engine_xy[1][:-1], label="engine, last minute", marker=".",
                        color="magenta")
        plt.scatter([d.engine_xy[0][-1]], [d.engine_xy[1][-1]], label="engine now", marker="L", color="magenta")
    plt.xlim(*d.x_range)
    plt.ylim(*d.y_range)
    plt.xticks(*d.x_ticks)
    plt.yticks(*d.y_ticks)
    plt.xlabel("output tok/s per device")
    plt.ylabel("tok/s per user")
    plt.title(d.title)


def draw_history_growth(plt, size: Size, data: HistoryData) -> None:
    """Compute and bandwidth growth since 2011, normalised to a baseline device (views/history_charts.py). Its
    labels are laid out for the default chart size, whatever the chart's (as they always were)."""
    draw_growth(plt, data, DEFAULT_CHART_SIZE)


def draw_history_ridge(plt, size: Size, data: HistoryData) -> None:
    """The ridge point per device and year (views/history_charts.py)."""
    draw_ridge(plt, data, DEFAULT_CHART_SIZE)
