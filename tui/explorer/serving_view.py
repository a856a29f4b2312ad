"""The serving mode on the explorer's screen: the Serving view (the frontier chart and a summary line), the
headline, verdict and memory bar in serving mode, and Compare's serving columns.

:class:`ServingScreen` is a mixin of :class:`~roofline.tui.explorer.screen.ExplorerScreen` (it reads the screen's
form, results, ceiling and baseline); what it shows comes from :mod:`roofline.tui.views.serving_data`. The serving
numbers are computed when the serving mode is on or the Serving view is shown, once per change of what they
depend on.
"""

from __future__ import annotations

import math
from dataclasses import replace

from textual.lazy import Lazy
from textual.widgets import Checkbox, DataTable, Static, TabPane

from roofline.models.errors import ModelInputError
from roofline.tui.explorer.charts import _Chart
from roofline.tui.explorer.headline import HEADLINE_METRICS, Headline, Verdict, WrappedText
from roofline.tui.explorer.panes import ViewBody
from roofline.tui.explorer.quiet_update import set_text
from roofline.tui.explorer.view_drawing import relative_change
from roofline.tui.inputs.registry import SERVING_INPUTS, input_for_model_error
from roofline.tui.views.serving_data import (
    COMPARE_COLUMNS,
    SERVING_LABELS,
    ServingChartData,
    ServingMemo,
    ServingResults,
    chart_data,
    compare_cells,
    headline_values,
    memory_line,
    serving_results,
    serving_settings,
    summary_line,
    verdict_markup,
)

STATIC_LABELS = dict(HEADLINE_METRICS)


class ServingChart(_Chart):
    """Tokens/s per user against output tokens/s per device over concurrency (log10 on linear axes): the
    frontier, the part past the memory limit, a pinned baseline, the ITL target, the operating point."""

    def draw(self, d: ServingChartData) -> None:
        plt = self.plt
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
        plt.xlim(*d.x_range)
        plt.ylim(*d.y_range)
        plt.xticks(*d.x_ticks)
        plt.yticks(*d.y_ticks)
        plt.xlabel("output tok/s per device")
        plt.ylabel("tok/s per user")
        plt.title(d.title)


class ServingBody(ViewBody):
    """The Serving view's contents: the chart, and one summary line below it."""

    def __init__(self) -> None:
        super().__init__("serving")

    def compose(self):
        yield ServingChart(id="serving-chart")
        yield Static(id="serving-summary", markup=False)


def serving_tab_pane() -> TabPane:
    """The "8 Serving" tab, mounted just after the first frame (as Ops and Compare)."""
    return TabPane("8 Serving", Lazy(ServingBody()), id="serving")


def _relabel(headline: Headline, labels: dict[str, str]) -> None:
    changed = False
    for key, label in labels.items():
        old = headline.readings[key]
        if old.label != label:
            headline.readings[key] = replace(old, label=label)
            changed = True
    if changed:
        headline.refresh()


class ServingScreen:
    """The serving half of the explorer's screen (a mixin)."""

    serving: ServingResults | None = None  # the last serving numbers that computed
    serving_problem: str = ""  # why they are not the current ones ("" when they are)
    _serving_key: tuple | None = None
    _serving_memo: ServingMemo | None = None
    _compare_memo: ServingMemo | None = None

    def update_serving(self) -> ServingResults | None:
        """The serving numbers of the current results and serving inputs (computed once per change)."""
        r = self.results
        if r is None:
            return None
        key = (self.form, r, self.ceiling, self.baseline)
        if self._serving_key is not None and all(a is b for a, b in zip(key, self._serving_key, strict=True)):
            return self.serving
        self._serving_key = key
        if self._serving_memo is None:
            self._serving_memo = ServingMemo()
        try:
            settings = serving_settings(self.form, r.scenario)
            base = self.baseline.scenario if self.baseline is not None else None
            self.serving = serving_results(r.scenario, settings, self.ceiling.estimate_name, base, self._serving_memo)
        except ModelInputError as err:
            self.serving_problem = f"{err.field}: {err.message}"
            self._mark_invalid(input_for_model_error(err.field), err.message)
            return self.serving
        except (ArithmeticError, ValueError) as err:
            self.serving_problem = f"could not compute the serving numbers ({err})"
            return self.serving
        self.serving_problem = ""
        for field in self.problems.settled_by_model():
            if field in SERVING_INPUTS:
                self._clear_invalid(field)
        return self.serving

    def draw_serving_headline(self, r) -> bool:
        """In serving mode, the headline, verdict and memory bar at the operating point; False when static."""
        self.set_class(self.form.serving, "-serving")  # the Batching pane shows the serving fields
        headline = self._w("#headline", Headline)
        sr = self.update_serving() if self.form.serving else None
        if sr is None:
            _relabel(headline, STATIC_LABELS)
            return False
        values = headline_values(sr.point)
        base = headline_values(sr.baseline_point) if sr.baseline_point is not None else {}

        def delta(key: str, value: float) -> str:
            before = base.get(key, (None,))[0]
            ok = before is not None and math.isfinite(value) and math.isfinite(before)
            change = relative_change(value, before) if ok else ""
            return f"{change} vs base" if change else ""

        headline.show_all({k: (v if math.isfinite(v) else 0.0, text, delta(k, v), SERVING_LABELS[k])
                           for k, (v, text) in values.items()})
        self._w("#verdict", Verdict).show(verdict_markup(sr, self.ceiling.label), markup=True)
        share, text = memory_line(sr)
        width = 30
        filled = min(width, round(width * share))
        bar = "#" * filled + "." * (width - filled)
        overflow = not sr.point.fits
        mem_bar = self._w("#memory-bar", WrappedText)
        mem_bar.set_class(overflow, "-overflow")
        headline.set_class(overflow, "-overflow")
        mem_bar.show(f"KV blocks/device [{bar}] {text}")
        return True

    def draw_serving_view(self) -> None:
        if "serving" not in self._ready_views:
            return  # drawn once mounted
        sr = self.update_serving()
        summary = self._w("#serving-summary", Static)
        if sr is None:
            set_text(summary, self.serving_problem or "no serving numbers")
            return
        self._w("#serving-chart", ServingChart).show(chart_data(sr))
        problem = f"{self.serving_problem} (showing the last good serving numbers)\n" if self.serving_problem else ""
        set_text(summary, problem + summary_line(sr))

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        if event.checkbox.id == "serving":
            event.stop()
            self.set_form(replace(self.form, serving=event.value))

    # ---- Compare ----------------------------------------------------------------------------------------------
    def serving_compare_columns(self, table: DataTable) -> None:
        """Compare's serving columns after the static ones, in serving mode only."""
        labels = [str(c.label) for c in table.columns.values()]
        has = labels[-len(COMPARE_COLUMNS):] == list(COMPARE_COLUMNS)
        if self.form.serving and not has:
            table.add_columns(*COMPARE_COLUMNS)
        elif has and not self.form.serving:
            table.clear(columns=True)
            table.add_columns(*labels[:-len(COMPARE_COLUMNS)])

    def serving_compare_cells(self, scenario=None, *, current: bool = False) -> tuple[str, ...]:
        """The serving cells of one device's Compare row (none in static mode; dashes where it cannot compute):
        the form's price override for the current device, each other device's own price."""
        if not self.form.serving:
            return ()
        if scenario is None:
            return ("-",) * len(COMPARE_COLUMNS)
        if self._compare_memo is None:
            self._compare_memo = ServingMemo(size=64)
        try:
            settings = serving_settings(self.form, scenario)
            if not current:
                settings = replace(settings, options=replace(settings.options, price_usd_per_hour=None))
            return compare_cells(scenario, settings, self.ceiling.estimate_name, self._compare_memo)
        except (ModelInputError, ArithmeticError, ValueError):
            return ("-",) * len(COMPARE_COLUMNS)
