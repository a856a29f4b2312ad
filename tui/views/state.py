"""What every view draws from: one frozen :class:`ExplorerState`, made by the explorer's screen on every change (and
by a slide for its own scenario) and handed down to each view. No Textual here."""

from __future__ import annotations

from dataclasses import dataclass

from roofline.presets.loader import PresetCatalog
from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.views.results import Ceiling, ExplorerResults
from roofline.tui.views.serving_data import ServingResults

Sort = tuple[str, bool]  # (column key, largest first)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ExplorerState:
    """The scenario (its form and its results), the serving numbers, the ceiling chosen, the pinned baseline, the
    compare list and its sort, and the live counters' points. Compared by identity: a change is a new state."""

    form: ScenarioForm
    results: ExplorerResults
    catalog: PresetCatalog
    ceiling: Ceiling = Ceiling.SPEC
    baseline: ExplorerResults | None = None
    serving: ServingResults | None = None  # the last serving numbers that computed (serving mode or view)
    serving_problem: str = ""  # why they are not the current ones ("" when they are)
    compare_ids: tuple[str, ...] = ()
    compare_sort: Sort | None = None  # None: the compare list's order
    live_points: tuple[tuple[float, float], ...] = ()
    # --engine-url and --measured (views/live_engine.py draws them on the Serving view): the URL polled while the
    # engine line is on, and the benchmark runs (presets/bench_files.BenchRun) beside the frontier
    engine_url: str | None = None
    measured_runs: tuple = ()  # (log10 FLOP/B, log10 FLOP/s) of live counters, oldest first

    @property
    def achievable(self) -> bool:
        """True when the achievable ceilings (the ``expected`` estimate) are chosen."""
        return self.ceiling.achievable
