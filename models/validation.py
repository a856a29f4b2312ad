"""Predictions for published measurements, and how far off they are (pure: rows in, numbers out).

Metric -> prediction (``measured-dev.md``, "Metric vocabulary"):
- ``decode_tokens_per_s_per_seq``: G / (prefill + sum of decode steps), one sequence's view of
  a whole generation (gpt-fast's tok/s includes its tiny prefill);
- ``prefill_tokens_per_s``: B*P / prefill time;
- ``ttft_ms``: prefill time (its LM head yields the first token);
- ``itl_ms``: the mean decode step over the generation;
- ``output_tokens_per_s``: B*G / (prefill + sum of decode steps), static batch, all devices;
- ``output_tokens_per_s_per_gpu``: the same / (tp * pp);
- ``e2e_s``: prefill + sum of decode steps.
The bound holds when it is at least as fast as the measurement (rates >=, times <=).

Uncertainty band (:func:`with_band`, band.py): each row's ``expected`` recomputed over the engine profiles for its
device's vendor and the measured / default bandwidth and matmul fractions; ``in_band`` says whether the measurement
falls between the lowest and highest of those predictions, and :class:`Summary` gives the share that does.

Honesty checks (:func:`leave_one_group_out`, :func:`memory_flags`, :func:`context_flag`): the engine factors
fitted on the development set are refitted without each source family, or each source document, and that group is
scored with the refit; rows whose configuration does not fit in memory as stated, or whose prompt (+ output) is
past the model's maximum context, are flagged with the reason.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .band import band_scenarios, metric_band
from .context_sums import context_pieces, context_sums
from .dtypes import WEIGHT_BITS_PER_ELEMENT
from .engines import (
    WEIGHT_ONLY_STREAM_EFFICIENCY_4BIT,
    WEIGHT_ONLY_STREAM_EFFICIENCY_8BIT,
    engine_profile,
)
from .estimate import Ceilings, pass_totals, scenario_ceilings
from .inference import Estimate, GenerationOps, estimate, generation_ops
from .memory import GIB, memory_footprint
from .scenario import Scenario
from .serving import at_rate, frontier, kv_cache_plan
from .serving.band import SERVING_BAND_METRICS, serving_band
from .serving.inputs import ServingMix, ServingOptions

RATE_METRICS = ("decode_tokens_per_s_per_seq", "prefill_tokens_per_s", "output_tokens_per_s",
                "output_tokens_per_s_per_gpu")
TIME_METRICS = ("ttft_ms", "itl_ms", "e2e_s")
METRICS = RATE_METRICS + TIME_METRICS
# A serving benchmark's metrics (rows with a concurrency: continuous batching, serving/), SI units.
# ``saturated_output_tokens_per_s_per_device``: an engine's maximum-throughput table (an offline run with every
# request queued at once, e.g. trtllm-bench throughput): the frontier at the memory or token-budget limit.
SATURATED_METRIC = "saturated_output_tokens_per_s_per_device"
SERVING_METRICS = ("ttft_s", "itl_s", "output_tokens_per_s_per_device", SATURATED_METRIC)
SERVING_RATE_METRICS = ("output_tokens_per_s_per_device", SATURATED_METRIC)


def predict(scenario: Scenario, e: Estimate, metric: str) -> float:
    return _metric_value(scenario, e.prefill.time_s, e.decode.step_time_s, e.generation_time_s, metric)


def _metric_value(scenario: Scenario, prefill_s: float, step_s: float, generation_s: float, metric: str) -> float:
    b = scenario.batching
    if metric == "decode_tokens_per_s_per_seq":
        return b.output_tokens / generation_s
    if metric == "prefill_tokens_per_s":
        return b.batch_size * b.prompt_tokens / prefill_s
    if metric == "ttft_ms":
        return prefill_s * 1e3
    if metric == "itl_ms":
        return step_s * 1e3
    if metric == "output_tokens_per_s":
        return b.batch_size * b.output_tokens / generation_s
    if metric == "output_tokens_per_s_per_gpu":
        return b.batch_size * b.output_tokens / generation_s / scenario.parallelism.devices
    if metric == "e2e_s":
        return generation_s
    raise ValueError(f"unknown metric {metric!r} (known: {', '.join(METRICS)})")


def generation_times(scenario: Scenario, c: Ceilings, ops: GenerationOps | None = None
                     ) -> tuple[float, float, float]:
    """(prefill s, mean decode step s, generation s) under ceilings ``c``: the sums :func:`inference.estimate`
    makes (prefill pass; decode steps summed in closed form over the contexts), for ceilings it was not given."""
    ops = generation_ops(scenario) if ops is None else ops
    prefill_s = float(pass_totals(ops.prefill, c).time_s)
    sums = context_sums(ops.decode_steps, c, context_pieces(scenario))
    decode_s = sums.total.time_s if scenario.batching.output_tokens > 1 else 0.0
    return prefill_s, sums.total.time_s / sums.steps, prefill_s + decode_s


def predict_under(scenario: Scenario, c: Ceilings, metric: str, ops: GenerationOps | None = None) -> float:
    """The metric's prediction under ceilings ``c`` (e.g. ``expected`` with a refitted factor)."""
    return _metric_value(scenario, *generation_times(scenario, c, ops), metric)


@dataclass(frozen=True, slots=True, kw_only=True)
class RowResult:
    id: str
    metric: str
    measured: float
    expected: float
    bound: float
    # the uncertainty band of ``expected`` for this row's metric (band.py); None: not computed
    expected_low: float | None = None
    expected_high: float | None = None

    @property
    def in_band(self) -> bool | None:
        """Whether the measurement lies in [expected_low, expected_high]; None without a band."""
        if self.expected_low is None or self.expected_high is None:
            return None
        return self.expected_low <= self.measured <= self.expected_high

    @property
    def expected_error(self) -> float:
        """Signed relative error of ``expected``: (predicted - measured) / measured."""
        return (self.expected - self.measured) / self.measured

    @property
    def bound_held(self) -> bool:
        if self.metric in RATE_METRICS or self.metric in SERVING_RATE_METRICS:
            return self.bound >= self.measured
        return self.bound <= self.measured


def evaluate(row_id: str, scenario: Scenario, metric: str, measured: float) -> RowResult:
    return RowResult(id=row_id, metric=metric, measured=measured,
                     expected=predict(scenario, estimate(scenario, "expected"), metric),
                     bound=predict(scenario, estimate(scenario, "bound"), metric))


def with_band(result: RowResult, scenario: Scenario) -> RowResult:
    """``result`` with the band of its static metric (:func:`band.metric_band` over :func:`predict`)."""
    low, high = metric_band(scenario, lambda s, e: predict(s, e, result.metric))
    return dataclasses.replace(result, expected_low=low, expected_high=high)


def with_serving_band(result: RowResult, scenario: Scenario, concurrency: int, rate_per_s: float | None
                      ) -> RowResult:
    """``result`` with the band of its serving metric: TTFT, ITL and output tokens/s over the band scenarios and the
    arrival patterns the row admits (:func:`serving.band.serving_band`); a saturated table under every band
    scenario by :func:`predict_serving` (a variant whose point does not fit, so whose figure is infinite, is left out
    of the band; none finite: no band)."""
    if result.metric in SERVING_BAND_METRICS:
        b = scenario.batching
        mix = ServingMix(prompt_tokens=b.prompt_tokens, output_tokens=b.output_tokens)
        span = serving_band(scenario, mix, result.metric, concurrency, rate_per_s)
        if span is None:
            return result
        return dataclasses.replace(result, expected_low=span[0], expected_high=span[1])
    values = []
    for s in band_scenarios(scenario):
        value, fits = predict_serving(s, result.metric, concurrency, rate_per_s)
        if fits:
            values.append(value)
    if not values:
        return result
    return dataclasses.replace(result, expected_low=min(values), expected_high=max(values))


def predict_serving(scenario: Scenario, metric: str, concurrency: int, rate_per_s: float | None,
                    estimate_name: str = "expected") -> tuple[float, bool]:
    """(prediction, fits) of a serving benchmark's metric by the continuous-batching model (serving/): the mean
    prompt and output of the row, at ``concurrency`` requests in flight (closed loop, :func:`serving.frontier`), or
    at ``rate_per_s`` arrivals (:func:`serving.at_rate`) when the row states a rate. ``ttft_s`` and ``itl_s`` per
    request, ``output_tokens_per_s_per_device`` over the replica's TP x PP devices; a saturated-throughput row
    (:data:`SATURATED_METRIC`) at the memory or budget limit (:func:`saturated_throughput`, ``concurrency`` = the
    run's request count). ``fits``: the concurrency fits the engine's KV blocks and the replica carries the rate
    (else TTFT is infinite)."""
    b = scenario.batching
    mix = ServingMix(prompt_tokens=b.prompt_tokens, output_tokens=b.output_tokens)
    if metric == SATURATED_METRIC:
        value, fits = saturated_throughput(scenario, mix, concurrency, estimate_name)
        return value, fits
    if rate_per_s is not None:
        point = at_rate(scenario, mix, rate_per_s, estimate_name, ServingOptions())
    else:
        point = frontier(scenario, mix, [concurrency], estimate_name, ServingOptions()).points[0]
    values = {"ttft_s": point.ttft_s, "itl_s": point.itl_s,
              "output_tokens_per_s_per_device": point.tokens_per_s_per_device}
    if metric not in values:
        raise ValueError(f"unknown serving metric {metric!r} (known: {', '.join(SERVING_METRICS)})")
    value = float(values[metric])
    return value, bool(point.fits) and math.isfinite(value)


def saturated_throughput(scenario: Scenario, mix: ServingMix, requests: int, estimate_name: str = "expected"
                         ) -> tuple[float, bool]:
    """(output tokens/s per device, fits) of an offline maximum-throughput run of ``requests`` requests queued at
    once: the engine keeps min(requests, the requests its KV blocks hold) in flight (:func:`serving.kv_cache_plan`),
    and of those at most the token budget's share decode each step (:func:`serving.frontier` caps the decoding
    count at B / (1 + P/G)), so the figure is the frontier's point at that concurrency. The run's ramp-up and drain
    are not modelled (the tables run enough requests to reach a steady state). ``fits``: at least one request fits."""
    limit = kv_cache_plan(scenario, mix, ServingOptions()).max_concurrency
    if limit < 1:
        return math.inf, False
    point = frontier(scenario, mix, [min(max(requests, 1), limit)], estimate_name, ServingOptions()).points[0]
    value = float(point.tokens_per_s_per_device)
    return value, math.isfinite(value)


def evaluate_serving(row_id: str, scenario: Scenario, metric: str, measured: float, concurrency: int,
                     rate_per_s: float | None = None) -> tuple[RowResult, bool]:
    """A serving row scored like a static one (expected and bound), and whether the expected point fits."""
    expected, fits = predict_serving(scenario, metric, concurrency, rate_per_s, "expected")
    bound, _ = predict_serving(scenario, metric, concurrency, rate_per_s, "bound")
    return RowResult(id=row_id, metric=metric, measured=measured, expected=expected, bound=bound), fits


@dataclass(frozen=True, slots=True, kw_only=True)
class Summary:
    rows: int
    median_abs_error: float
    p80_abs_error: float
    bound_held_share: float
    # share of the rows with a band whose measurement falls inside it; None: no row has a band
    band_coverage: float | None = None

    def as_dict(self) -> dict:
        return {"rows": self.rows, "median_abs_error": self.median_abs_error, "p80_abs_error": self.p80_abs_error,
                "bound_held_share": self.bound_held_share, "band_coverage": self.band_coverage}


def summarize(results: list[RowResult]) -> Summary:
    errors = np.abs([r.expected_error for r in results])
    banded = [r.in_band for r in results if r.in_band is not None]
    return Summary(rows=len(results), median_abs_error=float(np.median(errors)),
                   p80_abs_error=float(np.percentile(errors, 80)),
                   bound_held_share=float(np.mean([r.bound_held for r in results])),
                   band_coverage=float(np.mean(banded)) if banded else None)


# --- leave-one-family-out -------------------------------------------------------------------------------------

# The engine factors fitted on the development set: the generic weight-only streaming efficiencies, derived from
# gpt-fast's A100 int8/int4 vs bf16 rows (measured-dev GF-01..03; engines.py). Every other factor of ``expected``
# comes from published kernel or device measurements outside the set.
FITTED_FACTORS: dict[str, float] = {
    "weight_only_8bit": WEIGHT_ONLY_STREAM_EFFICIENCY_8BIT,
    "weight_only_narrow": WEIGHT_ONLY_STREAM_EFFICIENCY_4BIT,
}
# A factor with no rows to fit it from takes the value the model would assume without data: no penalty.
UNFITTED_PRIOR = 1.0
_MAX_SECANT_STEPS = 20


@dataclass(frozen=True, slots=True, kw_only=True)
class ValidationCase:
    """One published measurement to score: ``family`` is its source family (the id's prefix, e.g. GF, TR);
    ``source`` the document it comes from (:func:`source_of`; empty: the family is the source)."""

    id: str
    family: str
    scenario: Scenario
    metric: str
    measured: float
    source: str = ""


def family_of(row_id: str) -> str:
    """The source family of a row id: the part before the first '-' (``GF-01`` -> ``GF``)."""
    return row_id.split("-", 1)[0]


def source_of(source: str) -> str:
    """The document a ``source`` column cites, without the commit, section or comment that follow it:
    ``github:owner/repo path @commit (section)`` -> ``github:owner/repo path`` (one file of one repository); a URL
    -> the URL; anything else -> its text up to the first `` (``, `` @`` or ``;``. Rows of one document form one
    source for leave-one-source-out."""
    text = source.strip()
    words = text.split()
    if not words:
        return ""
    if words[0].startswith("github:"):
        return " ".join(w.rstrip(",;") for w in words[:2]) if len(words) > 1 and not words[1].startswith(("@", "(")) \
            else words[0].rstrip(",;")
    if words[0].startswith(("http://", "https://")):
        return words[0].rstrip(",;")
    for stop in (" (", " @", ";"):
        text = text.split(stop, 1)[0]
    return text.strip()


def factor_of(scenario: Scenario) -> str | None:
    """The fitted factor this scenario's ``expected`` depends on: its weight format's generic weight-only class,
    when its engine uses the generic (fitted) figure for that format; ``None`` otherwise."""
    profile = engine_profile(scenario.engine)
    compute = scenario.precisions.compute_dtype
    for dtype in (scenario.precisions.weights, scenario.precisions.expert_weights_or_weights):
        if profile.uses_generic_dequant(dtype, compute):
            return "weight_only_8bit" if WEIGHT_BITS_PER_ELEMENT[dtype] >= 8 else "weight_only_narrow"
    return None


def ceilings_with_factor(scenario: Scenario, factor: str, value: float) -> Ceilings:
    """``expected`` ceilings for the scenario with the fitted ``factor`` set to ``value`` (times the engine's GEMV
    share, as :meth:`engines.Engine.weight_stream_efficiency` combines them)."""
    c = scenario_ceilings(scenario, "expected")
    profile = engine_profile(scenario.engine)
    compute = scenario.precisions.compute_dtype
    efficiency = dict(c.weight_stream_efficiency)
    for dtype in WEIGHT_BITS_PER_ELEMENT:
        if profile.uses_generic_dequant(dtype, compute):
            wide = WEIGHT_BITS_PER_ELEMENT[dtype] >= 8
            if (factor == "weight_only_8bit") == wide:
                efficiency[dtype] = value * profile.gemv_share(scenario.hardware)
    return dataclasses.replace(c, weight_stream_efficiency=efficiency)


def _time_like(metric: str, value: float) -> float:
    """Rates are reciprocals of a time; with ``expected``'s additive terms, the time is linear in 1/efficiency."""
    return 1.0 / value if metric in RATE_METRICS or metric in SERVING_RATE_METRICS else value


def _solve_efficiency(case: ValidationCase, ceilings_at: Callable[[float], Ceilings]) -> float | None:
    """The efficiency at which ``expected`` under ``ceilings_at(efficiency)`` equals the measurement (secant on
    u = 1/efficiency: exact in one step when the compute and memory terms add, as ``expected`` has them); ``None``
    when no value does (the row moves no weight bytes of that class, or is faster than zero weight time)."""
    ops = generation_ops(case.scenario)
    target = _time_like(case.metric, case.measured)

    def q(u: float) -> float:
        return _time_like(case.metric, predict_under(case.scenario, ceilings_at(1.0 / u), case.metric, ops))

    u0, u1 = 1.0, 2.0
    q0, q1 = q(u0), q(u1)
    for _ in range(_MAX_SECANT_STEPS):
        if q1 == q0:
            return None
        u2 = u1 + (target - q1) * (u1 - u0) / (q1 - q0)
        if not u2 > 0.0:
            return None
        u0, q0, u1 = u1, q1, u2
        q1 = q(u1)
        if abs(q1 - target) <= 1e-9 * abs(target):
            return 1.0 / u1
    return 1.0 / u1


def solve_factor(case: ValidationCase, factor: str) -> float | None:
    """The value of the fitted ``factor`` at which ``expected`` equals the measurement (:func:`_solve_efficiency`)."""
    return _solve_efficiency(case, lambda value: ceilings_with_factor(case.scenario, factor, value))


def ceilings_with_matmul_fraction(scenario: Scenario, fraction: float) -> Ceilings:
    """``expected`` ceilings with every GEMM and attention rate at ``fraction`` of its spec peak (the one the
    engine's GEMMs use: FP16-accumulate where it applies); the vector rate and the rest kept."""
    c = scenario_ceilings(scenario, "expected")
    scale = fraction / (c.matmul_flops_per_s / c.spec_matmul_flops_per_s)
    return dataclasses.replace(
        c, matmul_flops_per_s=c.matmul_flops_per_s * scale,
        attention_flops_per_s=None if c.attention_flops_per_s is None else c.attention_flops_per_s * scale,
        matmul_flops_per_s_by_dtype={d: r * scale for d, r in c.matmul_flops_per_s_by_dtype.items()})


def solve_matmul_fraction(case: ValidationCase) -> float | None:
    """The GEMM share of the tensor peak at which ``expected`` equals the measurement: a prompt benchmark's figure
    turned into an engine factor (engines.LLAMACPP_CUBLAS_PP512)."""
    return _solve_efficiency(case, lambda value: ceilings_with_matmul_fraction(case.scenario, value))


def ceilings_with_gemv_share(scenario: Scenario, share: float) -> Ceilings:
    """``expected`` ceilings with the engine's decode GEMV bandwidth share set to ``share`` (its per-format
    dequantisation figures kept): :meth:`engines.Engine.weight_stream_efficiency` with another share."""
    c = scenario_ceilings(scenario, "expected")
    profile = engine_profile(scenario.engine)
    compute = scenario.precisions.compute_dtype
    efficiency = {d: profile.weight_stream_efficiency(d, compute, scenario.hardware)
                  / profile.gemv_share(scenario.hardware) * share
                  for d in WEIGHT_BITS_PER_ELEMENT}
    return dataclasses.replace(c, weight_stream_efficiency=efficiency)


def solve_gemv_share(case: ValidationCase) -> float | None:
    """The decode GEMV bandwidth share of the case's engine at which ``expected`` equals the measurement: a kernel
    benchmark's figure turned into an engine factor (engines.LLAMACPP_TG128_SHARES)."""
    return _solve_efficiency(case, lambda value: ceilings_with_gemv_share(case.scenario, value))


def fit_factor(cases: Sequence[ValidationCase], factor: str) -> float | None:
    """The median of the per-row solutions over the cases that depend on ``factor``; ``None`` without any."""
    solved = [v for case in cases if factor_of(case.scenario) == factor
              if (v := solve_factor(case, factor)) is not None]
    return float(np.median(solved)) if solved else None


@dataclass(frozen=True, slots=True, kw_only=True)
class FactorFit:
    """A fitted factor: its shipped value, its fit on all cases, and its refit without each group (a source family,
    or one source document; ``None``: no case outside that group depends on it, so the prior
    :data:`UNFITTED_PRIOR` is used)."""

    name: str
    shipped: float
    in_sample_fit: float | None
    without_group: dict[str, float | None]

    @property
    def without_family(self) -> dict[str, float | None]:
        """The refits without each group (the name from when families were the only groups)."""
        return self.without_group


@dataclass(frozen=True, slots=True, kw_only=True)
class HoldoutReport:
    """In-sample (shipped factors) and held-out (each group scored with factors refitted without it) results;
    ``group`` says what a group is: ``family`` (a source family) or ``source`` (one cited document)."""

    refitted: bool
    note: str
    factors: tuple[FactorFit, ...]
    in_sample: list[RowResult]
    held_out: list[RowResult]
    in_sample_summary: Summary
    held_out_summary: Summary
    by_group: dict[str, tuple[Summary, Summary]]
    group: str = "family"

    @property
    def by_family(self) -> dict[str, tuple[Summary, Summary]]:
        """(in-sample, held-out) per group (the name from when families were the only groups)."""
        return self.by_group


def _group_of(case: ValidationCase, group: str) -> str:
    if group == "family":
        return case.family
    if group == "source":
        return case.source or case.family
    raise ValueError(f"unknown holdout group {group!r} (known: family, source)")


def leave_one_group_out(cases: Sequence[ValidationCase], group: str = "family") -> HoldoutReport:
    """Score every group of cases (``family``: a source family; ``source``: one cited document) with the fitted
    factors refitted on the other groups' cases.

    Rows that depend on no fitted factor score the same in both. When no case depends on any fitted factor,
    nothing is refitted: the held-out results are the in-sample ones and ``refitted`` is False, ``note`` says so.
    """
    if not cases:
        raise ValueError(f"leave_one_{group}_out: no cases")
    in_sample = [evaluate(c.id, c.scenario, c.metric, c.measured) for c in cases]
    names = [_group_of(c, group) for c in cases]
    groups = sorted(set(names))
    used = sorted({f for c in cases if (f := factor_of(c.scenario)) is not None})
    fits: list[FactorFit] = []
    held_out = list(in_sample)
    if used:
        for name in used:
            without = {g: fit_factor([c for c, n in zip(cases, names, strict=True) if n != g], name) for g in groups}
            fits.append(FactorFit(name=name, shipped=FITTED_FACTORS[name], in_sample_fit=fit_factor(cases, name),
                                  without_group=without))
        by_name = {f.name: f for f in fits}
        for i, case in enumerate(cases):
            factor = factor_of(case.scenario)
            if factor is None:
                continue
            refit = by_name[factor].without_group[names[i]]
            value = UNFITTED_PRIOR if refit is None else refit
            expected = predict_under(case.scenario, ceilings_with_factor(case.scenario, factor, value), case.metric)
            held_out[i] = dataclasses.replace(in_sample[i], expected=expected)
        note = (f"refitted {', '.join(used)} without each {group}; a {group} whose rows alone fit a factor is scored "
                f"with the unfitted prior {UNFITTED_PRIOR}")
    else:
        note = "no fitted factor applies to these rows: held-out error equals in-sample error (nothing refitted)"
    by_group = {g: (summarize([r for r, n in zip(in_sample, names, strict=True) if n == g]),
                    summarize([r for r, n in zip(held_out, names, strict=True) if n == g]))
                for g in groups}
    return HoldoutReport(refitted=bool(used), note=note, factors=tuple(fits), in_sample=in_sample,
                         held_out=held_out, in_sample_summary=summarize(in_sample),
                         held_out_summary=summarize(held_out), by_group=by_group, group=group)


def leave_one_family_out(cases: Sequence[ValidationCase]) -> HoldoutReport:
    """:func:`leave_one_group_out` by source family."""
    return leave_one_group_out(cases, "family")


def leave_one_source_out(cases: Sequence[ValidationCase]) -> HoldoutReport:
    """:func:`leave_one_group_out` by source document (:attr:`ValidationCase.source`)."""
    return leave_one_group_out(cases, "source")


def serving_factor_rows(cases: Sequence[ValidationCase]) -> list[str]:
    """Ids of serving cases whose ``expected`` depends on a fitted factor. The serving model computes its own
    ceilings (serving/), so those rows cannot be refitted there; a caller reports them instead of pretending."""
    return [c.id for c in cases if factor_of(c.scenario) is not None]


# --- prompts past the model's context ------------------------------------------------------------------------


def context_flag(scenario: Scenario) -> str | None:
    """Why a row's prompt, or prompt + output, does not fit the model's maximum context
    (``max_position_embeddings`` of the preset); ``None`` when it fits or the preset states no maximum. Such a
    row did not run as stated (the engine refused, truncated or extended the context), so it is reported apart."""
    limit = scenario.model.max_position_embeddings
    if not limit:
        return None
    b = scenario.batching
    if b.prompt_tokens > limit:
        return (f"prompt {b.prompt_tokens:,} tokens is past {scenario.model.id}'s maximum context of {limit:,}: "
                f"not run as stated")
    if b.prompt_tokens + b.output_tokens > limit:
        return (f"prompt + output {b.prompt_tokens + b.output_tokens:,} tokens is past {scenario.model.id}'s maximum "
                f"context of {limit:,}: not run as stated")
    return None


# --- configurations that do not fit --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryFlag:
    """A row whose stated configuration does not fit in device memory (it ran in waves, preempted, or offloaded)."""

    id: str
    per_device_bytes: float
    capacity_bytes: float
    max_batch: int
    reason: str


def memory_flags(cases: Sequence[ValidationCase]) -> list[MemoryFlag]:
    """Every case whose footprint per device exceeds the device's memory (:func:`memory.memory_footprint`), with
    the reason, so the caller can report it or leave it out."""
    flags = []
    for case in cases:
        m = memory_footprint(case.scenario, engine_profile(case.scenario.engine).prefill_chunk_tokens)
        if m.fits:
            continue
        b = case.scenario.batching
        reason = (f"needs {m.per_device_bytes / GIB:.1f} GiB per device, {case.scenario.hardware.id} has "
                  f"{m.capacity_bytes / GIB:.1f} GiB (batch {b.batch_size}, largest that fits {m.max_batch}): "
                  f"it ran in waves or with preemption, not as stated")
        flags.append(MemoryFlag(id=case.id, per_device_bytes=m.per_device_bytes, capacity_bytes=m.capacity_bytes,
                                max_batch=m.max_batch, reason=reason))
    return flags
