"""The widgets of each view's tab, by the registry's ``widget``: a chart view is one chart (:mod:`.charts`), the
Roofline's with the live counters' line under it; the others are their own modules. Views the first frame does not
show are mounted just after it (start-up time)."""

from __future__ import annotations

from textual.lazy import Lazy
from textual.widget import Widget

from roofline.presets.loader import PresetCatalog
from roofline.tui.explorer.charts import chart_for
from roofline.tui.views.registry import View


def view_widgets(view: View, catalog: PresetCatalog) -> list[Widget]:
    """The tab's contents: the view's widget (which posts ViewReady once mounted) first."""
    from roofline.tui.explorer.compare_view import CompareView
    from roofline.tui.explorer.history_view import HistoryView
    from roofline.tui.explorer.live_status import LiveStatus
    from roofline.tui.explorer.ops_view import OpsView
    from roofline.tui.explorer.serving_view import ServingView

    makers = {"ops": OpsView, "compare": CompareView, "history": lambda: HistoryView(catalog), "serving": ServingView}
    widget = chart_for(view) if view.widget == "chart" else makers[view.widget]()
    contents = [Lazy(widget) if view.after_first_frame else widget]
    if view.id == "roofline":
        contents.append(LiveStatus())  # what the live counters read, under the roofline
    return contents
