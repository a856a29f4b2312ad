"""Drawing the explorer's results: the inputs' summaries, the headline, verdict and memory bar, and each view.

A mixin of :class:`~roofline.tui.explorer.screen.ExplorerScreen` (it reads the screen's results, ceiling, baseline
and compare list); what each view shows comes from :mod:`roofline.tui.views`, written once for the explorer, the
slides, the handout and the report.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable, Select, Static, TabbedContent

from roofline.models.history import METRIC_LABELS
from roofline.tui.explorer.charts import (
    BatchSweepChart,
    ContextSweepChart,
    HistoryGrowthChart,
    HistoryRidgeChart,
    MemoryChart,
    RooflineChart,
)
from roofline.tui.explorer.headline import Headline, Verdict, WrappedText
from roofline.tui.explorer.ops_table import OPS_HEADER, OpsTable, ops_caption, ops_rows
from roofline.tui.explorer.quiet_update import set_text
from roofline.tui.views.chart_data import CHART_VIEWS, chart_args, history_for, live_points_log10
from roofline.tui.views.compare_data import COLUMN_KEYS as COMPARE_KEYS
from roofline.tui.views.compare_data import COLUMNS as COMPARE_COLUMNS
from roofline.tui.views.compare_data import PRICE_CAPTION, compare_rows, number_in, sorted_by
from roofline.tui.views.explain import explain_op
from roofline.tui.views.formatting import duration, flop_per_byte, gib, si
from roofline.tui.views.history_charts import callout_lines
from roofline.tui.views.results import ExplorerResults
from roofline.tui.views.serving_data import COMPARE_COLUMNS as SERVING_COMPARE_COLUMNS
from roofline.tui.views.summary import context_warning, scenario_summary

_CHARTS = {"roofline": RooflineChart, "batch": BatchSweepChart, "context": ContextSweepChart, "memory": MemoryChart}


def relative_change(now: float, before: float | None) -> str:
    """``+12%`` for small changes, ``x71`` past +200 % (a percentage in the thousands reads badly)."""
    if before is None or before == 0:
        return ""
    ratio = now / before
    if ratio >= 3:
        return f"x{ratio:,.1f}" if ratio < 10 else f"x{ratio:,.0f}"
    return f"{100 * (ratio - 1):+.0f}%"


class ViewDrawing:
    """The drawing half of the explorer's screen."""

    def redraw(self) -> None:
        r = self.results
        if r is None:
            return
        self._draw_inputs_summary(r)
        if not self.draw_serving_headline(r):  # serving mode: the frontier's numbers (serving_view.py)
            self._draw_headline(r)
        # the top line says what is on screen (set_text: a repaint of that line, no layout)
        set_text(self._w("#scenario-line", Static), scenario_summary(r.scenario, self.ceiling.estimate_name))
        self.draw_view(self._w("#views", TabbedContent).active)

    def draw_view(self, view: str) -> None:
        r = self.results
        if r is None or (view in ("ops", "compare", "history", "serving") and view not in self._ready_views):
            return  # a lazy view draws itself once mounted
        if view in CHART_VIEWS:
            args = chart_args(view, r, self.achievable, self.baseline)
            if view == "roofline":
                args = (*args, live_points_log10(self.live_trail))
            self._w(_CHARTS[view]).show(*args)
        elif view == "ops":
            self._draw_ops(r)
        elif view == "compare":
            self._draw_compare(r)
        elif view == "history":
            self._draw_history(r)
        elif view == "serving":
            self.draw_serving_view()

    def _draw_history(self, r: ExplorerResults) -> None:
        """Datacenter parts of the chosen vendors (and the selected device), vs the earliest part with the metric."""
        metric = self._w("#history-metric", Select).value
        data = history_for(self.catalog, r, metric, self._w("#history-vendor", Select).value)
        if data is None:
            self._w("#history-callout", Static).update(Text(f"no device here has a {METRIC_LABELS[metric]} peak"))
            return
        self._w("#history-growth", HistoryGrowthChart).show(data)
        self._w("#history-ridge", HistoryRidgeChart).show(data)
        self._w("#history-callout", Static).update(Text("\n".join(callout_lines(data))))

    # handlers by name, not @on: Textual collects @on handlers only from the message pump's own class body
    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id not in ("history-metric", "history-vendor"):
            return
        event.stop()
        if self.results is not None and self._w("#views", TabbedContent).active == "history":
            self._draw_history(self.results)

    def _draw_inputs_summary(self, r: ExplorerResults) -> None:
        hw, m = r.scenario.hardware, r.scenario.model
        c = r.chosen_ceilings(self.achievable)
        set_text(self._w("#hardware-figures", Static),
                 f"{si(c.mem_bw_bytes_per_s, 'B/s')} | {c.compute_dtype} {si(c.matmul_flops_per_s, 'FLOP/s')}\n"
                 f"{gib(hw.memory_capacity_bytes)} | ridge {flop_per_byte(c.ridge_flops_per_byte)} FLOP/B"
                 f"{' (achievable)' if self.achievable else ''}")
        a = m.attention
        moe = f" | {m.moe.num_experts} experts, top-{m.moe.top_k}" if m.moe else ""
        set_text(self._w("#model-summary", Static),
                 f"{m.params / 1e9:,.1f} B params, {m.active_params / 1e9:,.1f} B active\n"
                 f"{m.num_layers} layers, {a.num_heads} heads, {a.num_kv_heads} KV heads"
                 f"{' (MLA)' if a.is_mla else ''}{moe}")

    def _draw_headline(self, r: ExplorerResults) -> None:
        e = r.chosen(self.achievable)
        other = r.bound if self.achievable else r.expected
        base = self.baseline.chosen(self.achievable) if self.baseline else None

        def delta(now: float, before: float | None) -> str:
            change = relative_change(now, before)
            return f"{change} vs base" if change else ""

        d, bd = e.decode, (base.decode if base else None)
        per_seq, total = d.tokens_per_s_per_seq, d.tokens_per_s
        idle = d.phase.idle_core_pct
        idle_delta = "" if bd is None else f"{idle - bd.phase.idle_core_pct:+.1f} pt vs base"
        ttft_ms = e.ttft_s * 1e3
        in_seconds = ttft_ms >= 10_000  # 51,758 ms reads as 51.8 s (the verdict switches too)
        ttft_value, ttft_text = (e.ttft_s, f"{e.ttft_s:,.1f}") if in_seconds else (ttft_ms, f"{ttft_ms:,.1f}")
        ttft_label = f"TTFT {'s' if in_seconds else 'ms'} (static)"  # the static batch's, not serving's
        self._w("#headline", Headline).show_all({
            "m-per-seq": (per_seq, f"{per_seq:,.1f}", delta(per_seq, bd and bd.tokens_per_s_per_seq)),
            "m-aggregate": (total, f"{total:,.1f}" if total < 1000 else f"{total:,.0f}",
                            delta(total, bd and bd.tokens_per_s)),
            "m-idle": (idle, f"{idle:.1f}", idle_delta),
            "m-ttft": (ttft_value, ttft_text, delta(e.ttft_s, base and base.ttft_s), ttft_label),
        })
        other_label = "spec bound" if self.achievable else "expected"
        crossover = r.compute_bound_batch(self.achievable)
        m = r.memory
        if crossover is None:
            turn = "never turns compute-bound"
        else:
            beyond = " (beyond the memory limit)" if crossover > m.max_batch else ""
            turn = f"turns compute-bound at batch {crossover:,}{beyond}"
        c = r.chosen_ceilings(self.achievable)
        self._w("#verdict", Verdict).show(
            f"[b]{self.ceiling.label}[/b]: decode is [b]{d.phase.limited_by}-bound[/b] "
            f"({d.phase.arithmetic_intensity_flops_per_byte:,.1f} FLOP/B vs ridge "
            f"{flop_per_byte(c.ridge_flops_per_byte)}), {turn}; "
            f"{other_label}: {other.decode.tokens_per_s_per_seq:,.1f} tok/s/seq, TTFT {duration(other.ttft_s)}",
            markup=True)
        used, cap = m.per_device_bytes, m.capacity_bytes
        width = 30
        filled = min(width, round(width * used / cap)) if cap else width
        bar = "#" * filled + "." * (width - filled)
        verdict = "fits" if m.fits else "DOES NOT FIT: the numbers above cannot run as set"
        mem_bar = self._w("#memory-bar", WrappedText)
        self._w("#headline", Headline).set_class(not m.fits, "-overflow")
        past_context = context_warning(r.scenario)
        mem_bar.set_class(bool(past_context) or not m.fits, "-overflow")
        mem_bar.show(f"memory/device [{bar}] {gib(used)} / {gib(cap)} {verdict}, max batch {m.max_batch:,}"
                     + (f"\n{past_context}" if past_context else ""))

    def _draw_ops(self, r: ExplorerResults) -> None:
        """Fill the ops table (the cursor stays on the same op when it is still listed) and say what it shows."""
        rows, keys, self._op_rows = ops_rows(r, r.chosen_ceilings(self.achievable))
        table = self._w("#ops-table", OpsTable)
        table.set_rows(list(OPS_HEADER), rows, keys)
        set_text(self._w("#ops-caption", Static), ops_caption(r))
        self._show_formula(table.cursor_row)  # the highlighted row's formula, with this scenario's numbers

    def on_ops_table_row_highlighted(self, event: OpsTable.RowHighlighted) -> None:
        self._show_formula(event.row)

    def _show_formula(self, row: int) -> None:
        rows = getattr(self, "_op_rows", [])
        if self.results is None or not 0 <= row < len(rows):
            return
        c = self.results.chosen_ceilings(self.achievable)
        self._w("#op-formula", WrappedText).show(explain_op(rows[row], c, self.results.scenario.parallelism.pp))

    compare_sort: tuple[str, bool] | None = None  # (column key, largest first); None: the compare list's order

    def _compare_columns(self) -> list[tuple[str, str]]:
        """(key, label) of Compare's columns: the static ones, then the serving ones in serving mode."""
        static = [(c.key, c.label) for c in COMPARE_COLUMNS]
        serving = [(f"serving {label}", label) for label in SERVING_COMPARE_COLUMNS] if self.form.serving else []
        return static + serving

    def _draw_compare(self, r: ExplorerResults) -> None:
        """The workload on each device (tui/views/compare_data.py): no throughput or price where it does not fit,
        the smallest TP that would fit instead; each device's own price; sorted on the chosen column."""
        table = self._w("#compare-table", DataTable)
        columns = self._compare_columns()
        sort_key, descending = self.compare_sort or (None, False)
        arrow = {True: " v", False: " ^"}
        labels = [(key, label + (arrow[descending] if key == sort_key else "")) for key, label in columns]
        shown = [(str(key.value), str(col.label)) for key, col in table.columns.items()]
        cursor_key = None
        if table.row_count:
            cursor_key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        if shown != labels:
            table.clear(columns=True)
            for key, label in labels:
                table.add_column(label, key=key)
        else:
            table.clear()
        rows = compare_rows(r, self.catalog.hardware, self.compare_ids, achievable=self.achievable,
                            price_usd_per_hour=self.form.price_per_device_hour)
        lines = []
        for row in rows:
            serving = (self.serving_compare_cells(row.scenario, current=row.current) if row.scenario is not None
                       else self.serving_compare_cells())
            lines.append((row, row.cells() + tuple(serving)))
        if sort_key in COMPARE_KEYS:
            lines = sorted_by(lines, sort_key, lambda line: line[0].sort_value(sort_key), descending=descending)
        elif sort_key is not None and sort_key in dict(columns):
            index = [key for key, _ in columns].index(sort_key)
            lines = sorted_by(lines, sort_key, lambda line: number_in(line[1][index]), descending=descending)
        for row, cells in lines:
            name, tp, *numbers = cells
            fits = numbers[4]
            numbers[4] = Text(fits, style="" if row.fits else "bold")
            table.add_row(Text(name), tp, *numbers, key=row.hardware_id)
        if cursor_key is not None and cursor_key in table.rows:
            table.move_cursor(row=table.get_row_index(cursor_key), animate=False)
        if sort_key is None:
            order = "list order; s or a header click sorts (again: reverse); x removes a device"
        else:
            way = "largest" if descending else "smallest"
            order = (f"sorted by {dict(columns).get(sort_key, sort_key)} ({way} first); s: next column, "
                     "the header again: reverse")
        set_text(self._w("#compare-caption", Static), f"{order}\n{PRICE_CAPTION}")

    def action_compare_sort(self) -> None:
        """Sort Compare by the next column (after the last, back to the compare list's order)."""
        if self._w("#views", TabbedContent).active != "compare" or "compare" not in self._ready_views:
            return
        keys = [key for key, _ in self._compare_columns()]
        current = self.compare_sort[0] if self.compare_sort else None
        following = keys[0] if current not in keys else (keys[keys.index(current) + 1]
                                                          if keys.index(current) + 1 < len(keys) else None)
        self._sort_compare(following)

    def _sort_compare(self, key: str | None, descending: bool | None = None) -> None:
        if key is None:
            self.compare_sort = None
        else:
            first = next((c.descending for c in COMPARE_COLUMNS if c.key == key), key != "device")
            self.compare_sort = (key, first if descending is None else descending)
        if self.results is not None:
            self._draw_compare(self.results)

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        """A click on a Compare header sorts by that column; a second click on it reverses the order."""
        if event.data_table.id != "compare-table":
            return
        event.stop()
        key = str(event.column_key.value)
        if self.compare_sort is not None and self.compare_sort[0] == key:
            self._sort_compare(key, not self.compare_sort[1])
        else:
            self._sort_compare(key)

    def action_explain_gap(self) -> None:
        from roofline.models.report import decode_gap_dict, expected_assumption_rows
        from roofline.tui.explorer.dialogs import GapScreen
        from roofline.tui.views.report_text import assumption_lines, gap_lines

        if self.results is None:
            return
        scenario = self.results.scenario
        lines = [*gap_lines(decode_gap_dict(scenario)), "", *assumption_lines(expected_assumption_rows(scenario))]
        self.app.push_screen(GapScreen(lines))
