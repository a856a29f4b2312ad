"""The Serving view: the continuous-batching frontier (views/plots.py's ``draw_serving`` on views/serving_data.py's
numbers) over a summary line. The screen computes the serving numbers once per change
(:mod:`roofline.tui.explorer.serving_numbers`) and hands them down in the state; a live engine point or another series
is one more field of the chart's data (``views/serving_data.chart_data``)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Static

from roofline.tui.explorer.charts import ServingChart
from roofline.tui.explorer.engine_line import EngineLine, EngineUpdate, engine_chart_data
from roofline.tui.explorer.quiet_update import set_text
from roofline.tui.explorer.view_body import ViewBody
from roofline.tui.views.registry import BY_ID
from roofline.tui.views.serving_data import chart_data, summary_line
from roofline.tui.views.state import ExplorerState


class ServingView(ViewBody):
    def __init__(self) -> None:
        super().__init__(BY_ID["serving"])

    def compose(self) -> ComposeResult:
        yield ServingChart(id="serving-chart")
        yield Static(id="serving-summary", markup=False)
        yield EngineLine()

    _visible = False  # Show and Hide events (asking is_on_screen maps the whole screen when hidden)

    def on_show(self) -> None:
        self._visible = True
        self.query_one(EngineLine).tab_shown(True)

    def on_hide(self) -> None:
        self._visible = False
        self.query_one(EngineLine).tab_shown(False)

    def on_engine_update(self, message: EngineUpdate) -> None:
        """A poll's status (from the engine line below): the live point moves on the chart, nothing else redraws."""
        message.stop()  # nothing above needs it
        sr = self.state.serving if self.state is not None else None
        if sr is not None and self._visible:  # a hidden tab draws the trail when it is shown
            line = self.query_one(EngineLine)
            self.query_one(ServingChart).show(engine_chart_data(chart_data(sr), line.status, self.state))

    def draw(self, state: ExplorerState) -> None:
        summary = self.query_one("#serving-summary", Static)
        sr = state.serving
        if sr is None:
            set_text(summary, state.serving_problem or "no serving numbers")
            return
        line = self.query_one(EngineLine)
        line.state = state
        line.autostart(state.engine_url)
        self.query_one(ServingChart).show(engine_chart_data(chart_data(sr), line.status, state))
        problem = f"{state.serving_problem} (showing the last good serving numbers)\n" if state.serving_problem else ""
        set_text(summary, problem + summary_line(sr))
