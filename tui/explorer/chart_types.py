"""Which chart draws which view, and with what arguments: one table for the explorer's slides and handouts.

``chart_show_args`` returns the arguments of the chart's ``show``/``draw`` for a slide's results (and its form, for
the serving view), or None when the view has nothing to draw.
"""

from __future__ import annotations

from roofline.presets.loader import PresetCatalog
from roofline.tui.explorer.charts import (
    BatchSweepChart,
    ContextSweepChart,
    HistoryGrowthChart,
    MemoryChart,
    RooflineChart,
)
from roofline.tui.explorer.serving_view import ServingChart
from roofline.tui.views.chart_data import CHART_VIEWS, chart_args, history_for
from roofline.tui.views.results import ExplorerResults

CHART_TYPES = {"roofline": RooflineChart, "batch": BatchSweepChart, "context": ContextSweepChart,
               "memory": MemoryChart, "history": HistoryGrowthChart, "serving": ServingChart}


def chart_show_args(view: str, results: ExplorerResults, catalog: PresetCatalog, form=None) -> tuple | None:
    if view in CHART_VIEWS:
        return chart_args(view, results)
    if view == "history":
        data = history_for(catalog, results)
        return None if data is None else (data,)
    if view == "serving" and form is not None:
        from roofline.tui.views.slide_serving import serving_chart_args

        return serving_chart_args(form, results)
    return None
