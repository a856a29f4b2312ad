"""plotext charts over the model's numbers.

plotext 5 breaks on log scales when a plot is rebuilt (it takes the log twice), so the log
axes here plot log10 (or log2) of the values on linear axes and label the ticks themselves.
Chart text stays ASCII: wide characters misalign plotext output.
"""

from __future__ import annotations

import math

import numpy as np
from rich.style import Style
from textual.geometry import Region
from textual.strip import Strip
from textual_plotext import PlotextPlot

from roofline.models.estimate import Ceilings
from roofline.models.sweeps import BatchSweep, ContextSweep
from roofline.tui.explorer.chart_rows import (  # noqa: F401 (re-exported for tests)
    MIN_CHART_HEIGHT,
    MIN_CHART_WIDTH,
    PLOT_FRAME_ROWS,
    UNBUILT_CHART_SIZE,
    even_decades,
    message_rows,
    rows_to_text,
)
from roofline.tui.perf import switch
from roofline.tui.perf.plotext_rows import ChartRow
from roofline.tui.views.chart_data import MemoryByBatch
from roofline.tui.views.chart_series import (  # noqa: F401 (re-exported for tests)
    RooflinePoints,
    decade_ticks,
    power_of_two_label,
    power_of_two_ticks,
    roofline_points,
)
from roofline.tui.views.formatting import flop_per_byte, si
from roofline.tui.views.results import ExpectedRange

switch.install_plotext_speedups()  # a rebuild per keystroke: plotext's slowest helpers, when verified

class _Chart(PlotextPlot):
    """A plot redrawn from its last data; a new data set repaints only the rows that changed.

    plotext keeps state between builds (ticks, scales), so a figure built twice at two sizes
    can differ from one built once; replaying the drawing commands before each build makes
    what is shown depend only on the data and the size.

    ``show`` builds the new figure at once and compares it row by row with the one on screen:
    only changed rows are refreshed, so a keystroke that moves a few points writes a few rows
    to the terminal instead of the whole chart (over SSH that is most of the traffic).
    """

    _last: tuple | None = None
    _shown: tuple[tuple[int, int, str], list[ChartRow]] | None = None  # (width, height, theme), rows

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._strips: dict[int, Strip] = {}  # row -> its rendered Strip, for the rows shown
        self._strip_style = Style.null()  # the widget's style, looked up when all strips are rebuilt
        # the last build's (width, height, theme), each row's plotext cells (its matrix's row lists, never changed
        # after the build) and segments: rows whose cells did not change are not converted again
        self._last_build: tuple[tuple, list[tuple], list[ChartRow]] | None = None

    def show(self, *args) -> None:
        self._last = args
        previous = self._shown
        width, height = self.size
        if previous is None or previous[0] != (width, height, self.app.theme) or not width or not height:
            self._shown = None
            self.refresh()
            return
        rows = self._build_rows(width, height)
        changed = [y for y, (old, new) in enumerate(zip(previous[1], rows, strict=True)) if old != new]
        self._shown = ((width, height, self.app.theme), rows)
        for y in changed:
            self._strips.pop(y, None)
        if changed:
            self.refresh(*(Region(0, y, width, 1) for y in changed))

    def _build_rows(self, width: int, height: int) -> list[ChartRow]:
        if width < MIN_CHART_WIDTH or height < MIN_CHART_HEIGHT:  # plotext draws garbage below this
            self._last_build = None
            return message_rows(f"enlarge the terminal: this chart needs {MIN_CHART_WIDTH}x{MIN_CHART_HEIGHT} "
                                f"cells, it has {width}x{height}", width, height, self.rich_style)
        plt = self.plt
        self._build_size = (width, height)  # draw() lays out rows for this size (legend room, even ticks)
        key = (width, height, self.app.theme)
        previous = self._last_build[1:] if self._last_build is not None and self._last_build[0] == key else None
        try:
            if self._last is not None:
                switch.reset_plot(plt)
                self.draw(*self._last)
            cells, rows = switch.plot_rows(plt, width, height, self._get_plotext_theme_name(self.app.theme),
                                           previous, light=not self.app.current_theme.dark, console=self.app.console,
                                           public=lambda: PlotextPlot.render(self))  # textual-plotext's own
        except (ArithmeticError, IndexError, ValueError) as err:  # plotext on numbers it cannot place: say so
            self._last_build = None
            return message_rows(f"this chart cannot be drawn for these numbers ({type(err).__name__}); the "
                                "numbers above still hold", width, height, self.rich_style)
        self._last_build = (key, cells, rows)
        return rows

    def _current_rows(self) -> list[ChartRow]:
        width, height = self.size
        key = (width, height, self.app.theme)
        if self._shown is None or self._shown[0] != key:
            self._shown = (key, self._build_rows(width, height))
            self._strips = {}
        return self._shown[1]

    def render(self):
        return rows_to_text(self._current_rows())

    def render_lines(self, crop: Region) -> list[Strip]:
        """The chart's rows for ``crop``; the rows and width are looked up once for all lines."""
        self._painting = (self._current_rows(), self.size.width)
        try:
            return super().render_lines(crop)
        finally:
            self._painting = None

    _painting: tuple[list[ChartRow], int] | None = None

    def render_line(self, y: int) -> Strip:
        """One row as a Strip, converted once per change (the line API: a paint of a few changed
        rows does not turn the whole figure into Textual content again)."""
        rows, width = self._painting or (self._current_rows(), self.size.width)
        if not 0 <= y < len(rows):
            return Strip.blank(width, self.rich_style)
        strip = self._strips.get(y)
        if strip is None:
            if not self._strips:  # the whole figure is new (first paint, resize, theme): look the style up again
                self._strip_style = self.rich_style  # per row it would cost more than the row itself
            strip = Strip(rows[y])
            if strip.cell_length != width:
                strip = strip.crop_extend(0, width, self._strip_style)
            self._strips[y] = strip
        return strip

    # the size draw() lays rows out for; a chart drawn outside a build (the handout calls draw, then sizes the plot)
    # lays out for a plain-text page's chart
    _build_size: tuple[int, int] = UNBUILT_CHART_SIZE

    def title(self, *variants: str) -> None:
        """The first title that fits the chart's width (plotext drops a title wider than the chart), else the last
        one cut short."""
        width = max(1, self._build_size[0] - 2)
        chosen = next((v for v in variants if len(v) <= width), variants[-1][:width])
        self.plt.title(chosen)

    def label_beside(self, centred: str, *variants: str) -> str:
        """The first of ``variants`` that fits left of the centred x label ``centred`` (plotext writes the left y
        label first and drops a label that would touch another), else the last one."""
        room = self._build_size[0] // 2 - len(centred) // 2 - 2
        return next((v for v in variants if len(v) <= room), variants[-1])

    def canvas_rows(self) -> int:
        """Rows of the plot area in the build under way: the chart's height less the title, the frame's two lines,
        the x ticks and the axis labels (plotext 5's layout for a chart with a title and labels)."""
        return max(1, self._build_size[1] - PLOT_FRAME_ROWS)

    def draw(self, *args) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


class RooflineChart(_Chart):
    """Arithmetic intensity against FLOP/s, log-log: the roof, the ridge, every op."""

    def draw(self, points: RooflinePoints, spec: Ceilings, achievable: Ceilings,
             baseline: tuple[float, float] | None = None, use_achievable: bool = False,
             live: list[tuple[float, float]] = ()) -> None:
        """``live``: the running workload's recent (log10 FLOP/B, log10 FLOP/s), oldest first. The roof in use
        (``use_achievable``: the achievable one) is drawn last and strong; the other dim, with another marker, so
        the two stay apart where they nearly coincide, in every theme and under NO_COLOR.

        plotext writes its legend over the plot's top-left rows, so the y axis reaches high enough that every
        roof and point sits below the legend, with one row for the ridge's label above the highest roof; each
        decade takes the same whole number of rows (even ticks). A chart too short for that drops the legend."""
        plt = self.plt
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
        rows = self.canvas_rows()
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
            self.title(f"roofline at {chosen.compute_dtype} ({which}): {peaks}", f"{which} roofline: {peaks}")
        else:  # no room for the legend: the title names the markers
            self.title(f"{which} roofline, {chosen.compute_dtype}: o decode ops, + prefill ops, @ decode step",
                       f"{which} roofline: o decode, + prefill, @ step")


class BatchSweepChart(_Chart):
    """Aggregate and per-sequence decode tokens/s against batch (log2 x, log10 y)."""

    def draw(self, sweep: BatchSweep, current_batch: int, current_tokens_per_s: float,
             current_tokens_per_s_per_seq: float, band: ExpectedRange | None = None) -> None:
        """The scenario's own batch is marked on both curves (``@``, named in the title), not by a line across
        the plot: a line would move through every row of the chart on each ``+``/``-``. The markers are named in
        the title and the y label rather than a legend, which would cover the start of the per-sequence curve.
        ``band`` (achievable ceilings only): ``expected``'s range on each curve, drawn under it."""
        plt = self.plt
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
            plt.ylabel(self.label_beside("batch", f"decode tok/s: o aggregate, x per sequence; {BAND_LABEL}",
                                         f"tok/s: o aggregate, x per sequence, {BAND_LABEL}",
                                         "tok/s: o aggregate, x per sequence, . expected range",
                                         "o aggregate, x per seq., . expected range",
                                         "o aggregate, x per seq., . range"))
        crossover = ("never compute-bound" if sweep.compute_bound_batch is None
                     else f"compute-bound from B={sweep.compute_bound_batch:,}")
        self.title(f"batch sweep: o aggregate grows, x per-sequence falls; @ B={current_batch:,}; {crossover}",
                   f"o aggregate grows, x per-sequence falls; @ B={current_batch:,}; {crossover}",
                   f"o aggregate, x per sequence; @ B={current_batch:,}")


class ContextSweepChart(_Chart):
    """Decode tokens/s per sequence against context, and the share of the step spent on KV traffic."""

    def draw(self, sweep: ContextSweep, current_context: float, current_tokens_per_s_per_seq: float,
             current_kv_time_share: float, max_context: int | None = None, band: ExpectedRange | None = None
             ) -> None:
        """The context the decode step is shown at is marked with an ``@`` on each curve; the model's maximum
        context (when inside the sweep) as a vertical line. No plotext legend: it covers the top-left, where the
        tok/s curve starts, and marks which axis a series uses with ``L``-shaped glyphs; the axis labels name
        each curve's marker and the title the rest. ``band`` (achievable ceilings only): ``expected``'s range of
        the tok/s curve, drawn under it."""
        plt = self.plt
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
        plt.ylabel("o tok/s per sequence" if band is None else self.label_beside(
            "context (tokens)", f"o tok/s per sequence; {BAND_LABEL}", "o tok/s per sequence; . expected range",
            "o tok/s/seq; . expected range", "o tok/s/seq, . range"), yside="left")
        plt.ylabel("x KV traffic % of step", yside="right")
        plt.ylim(0, 100, yside="right")
        self.title(f"context sweep: the KV cache takes over; @ this step, context {current_context:,.0f}{limit}",
                   f"KV takes over; @ this step, context {current_context:,.0f}{limit}",
                   f"@ context {current_context:,.0f}{limit}")


BAND_LABEL = ". expected range (engines x ceilings)"  # names the band's marker where the markers are named


def draw_band(plt, x: np.ndarray, curves: list[tuple[np.ndarray, np.ndarray, str]]) -> None:
    """``expected``'s band (models/band.py): a low and a high line of ``.`` in each curve's own colour, drawn before
    the curves so that each curve stays on top where they share a cell (the marker tells them apart under
    NO_COLOR)."""
    for low, high, color in curves:
        for edge in (low, high):
            plt.plot(x.tolist(), np.asarray(edge).tolist(), marker=".", color=color)


class MemoryChart(_Chart):
    """Per-device memory against batch: the weights flat, the total growing with the KV cache, the capacity, the
    largest batch that fits and the scenario's own batch (what fits is the question, not five bars)."""

    def draw(self, data: MemoryByBatch) -> None:
        """x: batch (log2); y: GiB per device. Markers are ASCII and named in the y label and the title (no
        plotext legend over the data)."""
        plt = self.plt
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
        row = y_high / max(1, self.canvas_rows() - 1)  # one row of the plot, in GiB
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
        self.title(f"@ B={data.batch:,}: weights {p['weights']:,.1f} + KV {p['KV']:,.1f} + act. {p['act.']:,.1f} + "
                   f"reserve {p['reserve']:,.1f} = {used:,.1f} of {data.capacity_gib:,.1f} GiB/device, {verdict}",
                   f"@ B={data.batch:,}: {used:,.1f} of {data.capacity_gib:,.1f} GiB/device, {verdict}; weights "
                   f"{p['weights']:,.1f}, KV {p['KV']:,.1f}",
                   f"@ B={data.batch:,}: {used:,.1f} of {data.capacity_gib:,.1f} GiB/device, {verdict}")


class HistoryGrowthChart(_Chart):
    """Compute and bandwidth growth since 2011, normalised to a baseline device."""

    def draw(self, data) -> None:
        from roofline.tui.views.history_charts import draw_growth

        draw_growth(self.plt, data)


class HistoryRidgeChart(_Chart):
    """The ridge point per device and year."""

    def draw(self, data) -> None:
        from roofline.tui.views.history_charts import draw_ridge

        draw_ridge(self.plt, data)
