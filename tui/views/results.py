"""Everything one screen of the explorer shows, computed from a scenario (no Textual here)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum

import numpy as np

from roofline.models.estimate import Ceilings, scenario_ceilings
from roofline.models.inference import Estimate, compute_bound_batch, estimate, generation_ops, mean_decode_context
from roofline.models.memory import MemoryFootprint, memory_footprint
from roofline.models.ops import Op, build_ops
from roofline.models.scenario import Scenario
from roofline.models.sweeps import BatchSweep, ContextSweep, batch_sweep, context_sweep, powers_of_two


class Ceiling(Enum):
    """Which ceilings the numbers use: the spec sheet's (the ``bound`` estimate) or the achievable ones (the
    ``expected`` estimate). One choice for the explorer, the slides and the report."""

    SPEC = "bound"
    ACHIEVABLE = "expected"

    @property
    def achievable(self) -> bool:
        return self is Ceiling.ACHIEVABLE

    @property
    def estimate_name(self) -> str:
        return self.value

    @property
    def label(self) -> str:
        return "achievable (expected)" if self.achievable else "spec (bound)"

    def toggled(self) -> Ceiling:
        return Ceiling.SPEC if self.achievable else Ceiling.ACHIEVABLE


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpectedRange:
    """``expected``'s uncertainty band along a sweep (models/band.py): at each point of ``x`` (the sweep's batches or
    contexts) the fastest and slowest decode step over the band's engines x corner ceilings, and the rates the charts
    plot from them (tokens/s per sequence = 1 / step, aggregate = batch / step: the low rate is the slow step's)."""

    x: np.ndarray
    step_time_s_low: np.ndarray
    step_time_s_high: np.ndarray
    tokens_per_s_per_seq_low: np.ndarray
    tokens_per_s_per_seq_high: np.ndarray
    tokens_per_s_low: np.ndarray
    tokens_per_s_high: np.ndarray


def _expected_range(x: np.ndarray, batch: np.ndarray | float, steps: list[np.ndarray]) -> ExpectedRange:
    from roofline.models.band import sweep_span

    fast, slow = sweep_span(steps)
    return ExpectedRange(x=x, step_time_s_low=fast, step_time_s_high=slow, tokens_per_s_per_seq_low=1.0 / slow,
                         tokens_per_s_per_seq_high=1.0 / fast, tokens_per_s_low=batch / slow,
                         tokens_per_s_high=batch / fast)


@dataclass(frozen=True, slots=True)
class ExplorerResults:
    scenario: Scenario
    bound: Estimate
    expected: Estimate
    memory: MemoryFootprint
    shown_context: float
    spec: Ceilings
    achievable: Ceilings
    decode_ops: list[Op]
    prefill_ops: list[Op]
    _sweeps: dict = field(default_factory=dict, repr=False, compare=False)

    def chosen(self, achievable: bool) -> Estimate:
        return self.expected if achievable else self.bound

    def chosen_ceilings(self, achievable: bool) -> Ceilings:
        """The ceilings the chosen estimate uses (the ridge, the roof and the ops' limits follow them)."""
        return self.achievable if achievable else self.spec

    def batch_sweep(self, achievable: bool) -> BatchSweep:
        """Batch sweep up to twice the largest batch that fits (computed once per estimate)."""
        key = ("batch", achievable)
        if key not in self._sweeps:
            # the memory limit and the crossover are already known here (the headline asks for the crossover)
            self._sweeps[key] = batch_sweep(self.scenario, self._batch_range(), "expected" if achievable else "bound",
                                            max_batch_that_fits=self.memory.max_batch,
                                            crossover_batch=self.compute_bound_batch(achievable))
        return self._sweeps[key]

    def batch_band(self) -> ExpectedRange:
        """``expected``'s band over the batch sweep's batches (models/band.py; computed once, when a chart asks):
        the sweep's decode steps, its ops built once, timed under each band scenario's ceilings. ``bound`` has no
        band: it is a ceiling."""
        key = ("batch band",)
        if key not in self._sweeps:
            from roofline.models.band import band_ceilings
            from roofline.models.inference import decode_step_samples, mean_decode_step_from_ops

            batches = self.batch_sweep(True).batches
            samples = decode_step_samples(self.scenario, batches)
            steps = [mean_decode_step_from_ops(samples, c) for c in band_ceilings(self.scenario)]
            self._sweeps[key] = _expected_range(batches, batches, steps)
        return self._sweeps[key]

    def context_band(self) -> ExpectedRange:
        """``expected``'s band over the context sweep's contexts at the scenario's batch (as :meth:`batch_band`)."""
        key = ("context band",)
        if key not in self._sweeps:
            from roofline.models.band import band_ceilings
            from roofline.models.estimate import pass_totals

            contexts = self.context_sweep(True).contexts
            batch = self.scenario.batching.batch_size
            ops = build_ops(self.scenario, "decode", batch=batch, context=contexts)  # as context_sweep's, built once
            steps = [np.broadcast_to(pass_totals(ops, c).time_s, contexts.shape) for c in band_ceilings(self.scenario)]
            self._sweeps[key] = _expected_range(contexts, float(batch), steps)
        return self._sweeps[key]

    def carry_over(self, previous: ExplorerResults | None) -> None:
        """Take the batch sweeps, their band and the compute-bound batches of ``previous`` when only the batch size
        differs.

        None depends on the batch size: the sweep spans batch sizes (up to twice the largest that fits, which
        the batch size does not change) and the crossover is searched over them. So ``+``/``-`` need not sweep
        again; a sweep is taken only when it spans the same batch sizes as this scenario's would.
        """
        if previous is None or not previous._sweeps:
            return
        b = self.scenario.batching
        same_but_batch = replace(self.scenario, batching=replace(b, batch_size=previous.scenario.batching.batch_size))
        if same_but_batch != previous.scenario:
            return
        for key, value in previous._sweeps.items():
            swept = value.batches if key[0] == "batch" else value.x if key[0] == "batch band" else None
            if key[0] == "crossover" or (swept is not None and np.array_equal(swept, self._batch_range())):
                self._sweeps.setdefault(key, value)

    def _batch_range(self) -> np.ndarray:
        limit = max(self.memory.max_batch, self.scenario.batching.batch_size, 64) * 2
        return powers_of_two(min(limit, 1 << 16))

    def compute_bound_batch(self, achievable: bool) -> int | None:
        """The batch from which decode is compute-bound (searched once; the batch sweep takes it from here)."""
        key = ("crossover", achievable)
        if key not in self._sweeps:
            self._sweeps[key] = compute_bound_batch(self.scenario, estimate_name="expected" if achievable else "bound")
        return self._sweeps[key]

    def context_sweep(self, achievable: bool) -> ContextSweep:
        """Decode over contexts from 64 to 128k (or twice the generation's end), and, from the same vectorised call,
        the point at the shown context (``context_point``): each context is evaluated on its own, element by
        element, so the point is what a sweep over it alone would give."""
        key = ("context", achievable)
        if key not in self._sweeps:
            b = self.scenario.batching
            top = max(131072, 2 * (b.prompt_tokens + b.output_tokens))
            contexts = np.unique(np.round(np.geomspace(64, top, 96)))
            both = context_sweep(self.scenario, np.append(contexts, self.shown_context),
                                 "expected" if achievable else "bound")
            self._sweeps[key] = _sweep_part(both, slice(None, -1))
            self._sweeps[("context point", achievable)] = _sweep_part(both, slice(-1, None))
        return self._sweeps[key]

    def context_point(self, achievable: bool) -> ContextSweep:
        """The context sweep at the shown context alone (where the decode step is shown), by the same formulas."""
        key = ("context point", achievable)
        if key not in self._sweeps:
            self.context_sweep(achievable)  # evaluated with the sweep, as one more context
        return self._sweeps[key]

def _sweep_part(sweep: ContextSweep, part: slice) -> ContextSweep:
    return ContextSweep(contexts=sweep.contexts[part], step_time_s=sweep.step_time_s[part],
                        tokens_per_s_per_seq=sweep.tokens_per_s_per_seq[part], tokens_per_s=sweep.tokens_per_s[part],
                        kv_time_share=sweep.kv_time_share[part])


def compute_results(scenario: Scenario, shown_context: float | None = None) -> ExplorerResults:
    context = mean_decode_context(scenario) if shown_context is None else float(shown_context)
    b = scenario.batching.batch_size
    ops = generation_ops(scenario)  # built once: both estimates time the same ops, and prefill is shown as is
    return ExplorerResults(
        scenario=scenario,
        bound=estimate(scenario, "bound", ops),
        expected=estimate(scenario, "expected", ops),
        memory=memory_footprint(scenario),
        shown_context=context,
        spec=scenario_ceilings(scenario, "bound"),
        achievable=scenario_ceilings(scenario, "expected"),
        decode_ops=build_ops(scenario, "decode", batch=b, context=context),
        prefill_ops=ops.prefill,
    )
