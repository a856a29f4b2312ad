"""The History view: compute against bandwidth growth since 2011 and the ridge point per year, for the chosen metric
and vendors (its own two selects), the selected device highlighted, and a callout with the numbers."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Select, Static

from roofline.models.history import METRIC_LABELS
from roofline.presets.loader import PresetCatalog
from roofline.tui.explorer.charts import HistoryGrowthChart, HistoryRidgeChart
from roofline.tui.explorer.view_body import ViewBody
from roofline.tui.views.chart_data import history_for
from roofline.tui.views.history_charts import callout_lines
from roofline.tui.views.registry import BY_ID
from roofline.tui.views.state import ExplorerState


class HistoryView(ViewBody):
    def __init__(self, catalog: PresetCatalog) -> None:
        super().__init__(BY_ID["history"])
        self.vendors = sorted({hw.vendor for hw in catalog.hardware.values()})

    def compose(self) -> ComposeResult:
        with Horizontal(id="history-controls"):
            yield Select([(name, m) for m, name in METRIC_LABELS.items()], value="bf16", allow_blank=False,
                         id="history-metric", compact=True)
            yield Select([("all vendors", "all"), *((Text(v), v) for v in self.vendors)], value="all",
                         allow_blank=False, id="history-vendor", compact=True)
        yield HistoryGrowthChart(id="history-growth")
        yield HistoryRidgeChart(id="history-ridge")
        yield Static(id="history-callout", markup=False)

    @on(Select.Changed, "#history-metric, #history-vendor")
    def _choice_changed(self, event: Select.Changed) -> None:
        event.stop()
        if self.state is not None:
            self.draw(self.state)

    def draw(self, state: ExplorerState) -> None:
        """Datacenter parts of the chosen vendors (and the selected device), vs the earliest part with the metric."""
        metric = self.query_one("#history-metric", Select).value
        data = history_for(state.catalog, state.results, metric, self.query_one("#history-vendor", Select).value)
        callout = self.query_one("#history-callout", Static)
        if data is None:
            callout.update(Text(f"no device here has a {METRIC_LABELS[metric]} peak"))
            return
        self.query_one(HistoryGrowthChart).show(data)
        self.query_one(HistoryRidgeChart).show(data)
        callout.update(Text("\n".join(callout_lines(data))))
