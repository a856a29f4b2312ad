"""Every view, described once: the explorer's tabs and number keys, the deck's ``view =`` values, the slides, the
handout, the screenshot script and the README's view table all loop over :data:`VIEWS`
(tests/views/test_registry.py checks the README and the deck's list against it).

A :class:`View` says what the view shows, which plot function draws it (:mod:`roofline.tui.views.plots`: a plotext
figure, a size and the data) and which function turns an :class:`~roofline.tui.views.state.ExplorerState` into that
data, whether slides and the handout can show it, and whether the explorer mounts it only after the first frame.
No Textual here: the explorer's widget for a view is chosen by ``widget`` (tui/explorer/view_widgets.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from roofline.tui.views import plots
from roofline.tui.views.chart_data import (
    batch_args,
    compare_lines,
    context_args,
    history_for,
    memory_by_batch,
    ops_table_lines,
    roofline_args,
)
from roofline.tui.views.history_charts import callout_lines
from roofline.tui.views.state import ExplorerState

PlotData = Callable[[ExplorerState], tuple | None]


@dataclass(frozen=True, slots=True, kw_only=True)
class View:
    id: str
    key: str  # the number key that shows it
    title: str  # the tab's title after its key
    shows: str  # what it draws (the README's view table)
    plot: Callable | None = None  # plot(plt, size, *data): the view's chart (None: no chart)
    data: PlotData | None = None  # the plot's data from a state, or None when there is nothing to draw
    slide_text: Callable[[ExplorerState, object], list[str]] | None = None  # lines a slide shows under it
    on_slides: bool = True  # a deck's ``view =`` may name it
    in_handout: bool = True  # the handout draws its chart as text
    after_first_frame: bool = False  # the explorer mounts it just after the first frame (start-up time)
    widget: str = "chart"  # which explorer widget shows it: "chart" (one plot) or the view's own

    @property
    def tab_title(self) -> str:
        return f"{self.key} {self.title}"


def _roofline(s: ExplorerState) -> tuple:
    return (*roofline_args(s.results, s.achievable, s.baseline), list(s.live_points))


def _serving(s: ExplorerState) -> tuple | None:
    """The explorer's serving numbers (its ceiling's estimate); a slide computes its own under ``expected``."""
    from roofline.tui.views.serving_data import chart_data
    from roofline.tui.views.slide_serving import serving_chart_args

    if s.serving is not None:
        return (chart_data(s.serving),)
    return serving_chart_args(s.form, s.results)


def _history(s: ExplorerState) -> tuple | None:
    data = history_for(s.catalog, s.results)
    return None if data is None else (data,)


def _compare_text(s: ExplorerState, slide) -> list[str]:
    from roofline.tui.views.slide_claims import bandwidth_compare_lines

    if "mem_bw_tb_per_s" in slide.numbers:  # the slide is about bandwidth: the table sorted by it
        return bandwidth_compare_lines(s.catalog, s.results, list(slide.compare))
    return compare_lines(s.catalog, s.results, list(slide.compare))


def _history_text(s: ExplorerState, slide) -> list[str]:
    data = history_for(s.catalog, s.results)
    return callout_lines(data)[:2] if data else []


VIEWS: tuple[View, ...] = (
    View(id="roofline", key="1", title="Roofline", plot=plots.draw_roofline, data=_roofline,
         shows="log-log intensity vs FLOP/s: spec and achievable roofs, the ridge, every prefill (`+`) and decode "
               "(`o`) op, the decode step (`@`); a pinned baseline's step as `B`"),
    View(id="batch", key="2", title="Batch", plot=plots.draw_batch, after_first_frame=True,
         data=lambda s: batch_args(s.results, s.achievable),
         shows="aggregate and per-sequence decode tokens/s against batch, with the memory limit and the "
               "compute-bound crossover; this batch as `@` on both curves"),
    View(id="context", key="3", title="Context", plot=plots.draw_context, after_first_frame=True,
         data=lambda s: context_args(s.results, s.achievable),
         shows="tokens/s per sequence against context, and the share of the step spent moving the KV cache; the "
               "context the step is shown at as `@`"),
    View(id="memory", key="4", title="Memory", plot=plots.draw_memory, after_first_frame=True,
         data=lambda s: (memory_by_batch(s.results),),
         shows="weights, KV cache, activations and reserve per device against capacity"),
    View(id="ops", key="5", title="Ops", widget="ops", after_first_frame=True,
         slide_text=lambda s, slide: ops_table_lines(s.results),
         shows="every op (FLOPs, bytes by kind, intensity, limit, time, share); the selected op's formulas with the "
               "numbers substituted"),
    View(id="compare", key="6", title="Compare", widget="compare", after_first_frame=True, slide_text=_compare_text,
         shows="the same workload on other accelerators (tokens/s, TTFT, idle %, fit, $ per million tokens when a "
               "price is set)"),
    View(id="history", key="7", title="History", widget="history", after_first_frame=True,
         plot=plots.draw_history_growth, data=_history, slide_text=_history_text,
         shows="compute vs bandwidth since 2011 and the ridge point over time, the selected device highlighted (see "
               "below)"),
    View(id="serving", key="8", title="Serving", widget="serving", after_first_frame=True, plot=plots.draw_serving,
         data=_serving,
         shows="the continuous-batching frontier: tokens/s per user against tokens/s per device over concurrency, "
               "the ITL target, the operating point `@`, the most users meeting the targets `T`, the memory limit "
               "`M`, a pinned baseline as a second curve"),
)
BY_ID: dict[str, View] = {v.id: v for v in VIEWS}
VIEW_IDS: tuple[str, ...] = tuple(BY_ID)
NO_VIEW = "none"  # a slide without a view
CHART_VIEWS: tuple[View, ...] = tuple(v for v in VIEWS if v.plot is not None)


def readme_rows() -> list[tuple[str, str, str]]:
    """(key, title, shows) of the README's view table."""
    return [(v.key, v.title, v.shows) for v in VIEWS]
