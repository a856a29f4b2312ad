"""The explorer's chart views: one plot widget (:mod:`roofline.tui.widgets.plot`) per chart view of the registry,
handed the explorer's state and drawing its view's plot function (:mod:`roofline.tui.views.plots`) on the view's data.

The named classes are how tests and the stylesheet find the charts; a new chart view needs no class here
(:func:`chart_for` makes a plain :class:`ChartView` for it).
"""

from __future__ import annotations

from textual.reactive import var

from roofline.tui.messages import ViewReady
from roofline.tui.views import plots
from roofline.tui.views.registry import BY_ID, View
from roofline.tui.views.state import ExplorerState
from roofline.tui.widgets.plot import PlotWidget


class ChartView(PlotWidget):
    """A view that is one chart: ``view.data(state)`` drawn by ``view.plot``."""

    state: var[ExplorerState | None] = var(None, init=False)

    def __init__(self, view: View, **kwargs) -> None:
        kwargs.setdefault("id", f"{view.id}-chart")
        super().__init__(view.plot, **kwargs)
        self.view = view

    def on_mount(self) -> None:
        self.post_message(ViewReady(self.view.id, self))

    def watch_state(self, state: ExplorerState | None) -> None:
        args = None if state is None else self.view.data(state)
        if args is not None:
            self.show(*args)


class RooflineChart(ChartView):
    def __init__(self, **kwargs) -> None:
        super().__init__(BY_ID["roofline"], **kwargs)


class BatchSweepChart(ChartView):
    def __init__(self, **kwargs) -> None:
        super().__init__(BY_ID["batch"], **kwargs)


class ContextSweepChart(ChartView):
    def __init__(self, **kwargs) -> None:
        super().__init__(BY_ID["context"], **kwargs)


class MemoryChart(ChartView):
    def __init__(self, **kwargs) -> None:
        super().__init__(BY_ID["memory"], **kwargs)


class HistoryGrowthChart(PlotWidget):
    plot = staticmethod(plots.draw_history_growth)


class HistoryRidgeChart(PlotWidget):
    plot = staticmethod(plots.draw_history_ridge)


class ServingChart(PlotWidget):
    """The serving frontier (the Serving view shows it the numbers that computed)."""

    plot = staticmethod(plots.draw_serving)


_NAMED = {"roofline": RooflineChart, "batch": BatchSweepChart, "context": ContextSweepChart, "memory": MemoryChart}


def chart_for(view: View) -> ChartView:
    """The chart widget of a chart view."""
    named = _NAMED.get(view.id)
    return named() if named is not None else ChartView(view)

