"""Serving: a continuous-batching engine in steady state, on the same ops and estimates as the static batch.

The model (mean values of the request mix: prompt P, output G tokens; no distribution of lengths):

- **A step** (one forward pass per device, :func:`step.mixed_step_ops`) decodes one token for each of the D
  running requests and prefills a chunk under a token budget B (``max_num_batched_tokens``, default 8192: vLLM's
  OpenAI-server default on H100/H200/MI300X, ``EngineArgs.get_batch_defaults`` in vllm/engine/arg_utils.py; V1
  chunks prefills by default). Weights are read once per step; decode attention reads each request's KV at its
  own context, and in steady state contexts spread uniformly over P..P+G, so the KV terms use the mean context
  P + G/2 (exact for the linear KV bytes, an approximation where an attention kernel switches roofline branch
  within the range). Each request's prompt is prefilled once over its G/tau steps, so a step carries on average
  r = D*tau/G prompts' worth of prefill (tau = 1 without speculation): D*tau*P/G prompt tokens, with the prompt's
  causal attention pairs. Step time t = sum over the ops of the ``bound`` or ``expected`` op time
  (:func:`estimate.pass_totals`).
- **Concurrency C** is the number of requests in flight (a closed loop, as ``vllm bench serve --max-concurrency``).
  The budget holds D*(q + tau*P_c/G) tokens per step (q tokens per request verified, P_c = P - h*S prompt tokens
  computed), so at most D_max = B / (q + tau*P_c/G) requests decode; D = min(C, D_max, max_num_seqs) and the rest
  wait for a slot: Little's law gives their wait, (C - D) / (D*tau / (G*t)).
- **Per request:** ITL = t / tau (the step time without speculation). TTFT = wait + n * t_chunk: the prompt goes
  in n = ceil(P_c / (B - D*q)) chunks, each in a step holding the D decodes plus 1/n of this prompt (its share of the
  prompt's tokens and causal pairs). e2e = TTFT + (G - 1) * ITL.
- **Per device:** output tokens/s = D*tau / t / devices; total tokens/s adds the P prompt tokens of each completed
  request (cached or not). Per user: 1 / ITL.
- **At an arrival rate** lambda (:func:`at_rate`): D solves lambda = D*tau / (G*t(D)) (completions per second
  equal arrivals); concurrency is lambda * e2e (Little's law). Queueing for prefill is M/D/1 (Poisson arrivals,
  deterministic service): the prefill budget left beside the decodes, B - D*q tokens per step, is a server with
  utilisation rho = r*P_c / (B - D*q) and service time S = P_c / (B - D*q) * t; the mean wait is
  rho*S / (2*(1 - rho)), plus half a step until the next step boundary. Limits: mean lengths only, no burstiness
  beyond Poisson, no preemption, no admission queue for KV memory; rho -> 1 sends the wait to infinity, which is
  where the budget, not the memory, limits the rate.
- **Memory** (:mod:`memory`): paged KV blocks of 16 tokens under ``gpu_memory_utilization`` 0.9, after
  weights, the activation workspace of one budget-sized pass and the runtime reserve (vLLM's
  ``determine_num_available_blocks``); the frontier runs from 1 to the number of whole requests the blocks hold.
- **Prefix caching:** S shared prefix tokens hit with probability h: each request computes P - h*S prompt tokens
  and pairs(P) - h*pairs(S) attention pairs, reads the prefix's KV instead, and the prefix's blocks are stored once.
  Decode still reads every request's whole context (no cascade attention).
- **Speculative decoding** (:class:`inputs.Speculation`): k drafted tokens, acceptance a, tau = (1 -
  a^(k+1)) / (1 - a) tokens per verification step (Leviathan et al. 2023, arXiv:2211.17192). A step verifies k+1
  tokens per request in the target (GEMMs over D*(k+1) tokens, attention FLOPs for D*(k+1) queries, each request's
  KV read once) and runs k draft decode steps of D tokens (a draft model, or the target's MTP layer). Memory-bound
  (small D), the verification costs about one step and yields tau tokens: it pays. Compute-bound (large D), it
  costs k+1 steps' FLOPs for tau tokens: it loses.
- **Energy and cost:** J per output token = power * devices * t / (D*tau), power per device = a measured figure
  (``ServingOptions.power_w``) or the preset's board power ``tdp_w`` (a ceiling: a real run draws less, so this is
  an upper bound). $ per million output tokens = price per device-hour * devices / 3600 / (output tokens/s) * 1e6,
  the price the device's own (``Hardware.price_usd_per_hour``, sourced on-demand list price) or an override; None
  where no price is known.
- **Targets:** :func:`max_concurrency_for_targets` (largest C with ITL <= x and TTFT <= y, closed loop) and
  :func:`devices_for_rate` (TP x replicas carrying a request rate within the targets at the lowest cost, each
  replica at lambda / replicas with M/D/1 queueing). Pipeline parallelism runs stage after stage, as in the static
  model (no micro-batch pipelining).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..errors import ModelInputError
from ..estimate import pass_totals, scenario_ceilings
from ..ops import build_ops
from ..scenario import Parallelism, Scenario
from .inputs import ServingMix, ServingOptions, draft_scenario
from .memory import KvCachePlan, kv_cache_plan
from .step import mixed_step_ops

SECONDS_PER_HOUR = 3600.0
MAX_FRONTIER_POINTS = 4096
RATE_GRID_POINTS = 512


@dataclass(frozen=True, slots=True, kw_only=True)
class FrontierPoint:
    """One operating point of one replica (TP x PP devices); per-device figures divide by its devices."""

    concurrency: float
    decoding_requests: float
    tokens_per_s_per_user: float
    tokens_per_s_per_device: float  # output tokens
    total_tokens_per_s_per_device: float  # output + prompt tokens
    ttft_s: float
    itl_s: float
    e2e_s: float
    step_time_s: float
    queue_s: float
    prefill_chunks: int
    requests_per_s: float
    joules_per_token: float | None
    usd_per_million_tokens: float | None
    fits: bool
    limited_by: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Frontier:
    estimate_name: str
    devices: int
    memory: KvCachePlan
    points: tuple[FrontierPoint, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class TargetResult:
    """The largest concurrency meeting the targets (0 and no point when even one request misses them)."""

    max_concurrency: int
    point: FrontierPoint | None


@dataclass(frozen=True, slots=True, kw_only=True)
class DevicePlan:
    tp: int
    replicas: int
    devices: int
    max_requests_per_s_per_replica: float
    usd_per_hour: float | None
    point: FrontierPoint  # one replica at rate / replicas


def _power_w(scenario: Scenario, options: ServingOptions) -> float | None:
    if options.power_w is not None:
        return options.power_w
    hw = scenario.hardware
    return None if hw.tdp_w is None else hw.tdp_w / hw.devices_per_package  # tdp_w is the package's


def _price(scenario: Scenario, options: ServingOptions) -> float | None:
    if options.price_usd_per_hour is not None:
        return options.price_usd_per_hour
    return scenario.hardware.price_usd_per_hour


@dataclass(frozen=True, slots=True)
class _Arrays:
    concurrency: np.ndarray
    decoding: np.ndarray
    step_s: np.ndarray
    chunk_step_s: np.ndarray
    chunks: np.ndarray
    leftover_tokens: np.ndarray
    compute_heavier: np.ndarray


def _evaluate(scenario: Scenario, mix: ServingMix, concurrency: np.ndarray, estimate_name: str,
              options: ServingOptions) -> _Arrays:
    """Step, chunk step and chunk count for each concurrency (vectorised)."""
    c = scenario_ceilings(scenario, estimate_name)
    spec = options.speculation
    tau = spec.tokens_per_step if spec else 1.0
    q = spec.tokens + 1 if spec else 1
    p_c, g, ctx = mix.computed_prompt_tokens, mix.output_tokens, mix.mean_context_tokens
    budget = options.max_num_batched_tokens
    d_max = budget / (q + tau * p_c / g)
    decoding = np.minimum(concurrency, d_max)
    if options.max_num_seqs is not None:
        decoding = np.minimum(decoding, options.max_num_seqs)
    common = dict(context_tokens=ctx, prompt_tokens=mix.prompt_tokens, prefix_tokens=mix.prefix_tokens,
                  prefix_hit_rate=mix.prefix_hit_rate, query_tokens_per_request=q)
    totals = pass_totals(mixed_step_ops(scenario, decode_requests=decoding, prefill_prompts=decoding * tau / g,
                                       **common), c)
    leftover = np.maximum(budget - decoding * q, 1.0)
    chunks = np.maximum(np.ceil(p_c / leftover - 1e-9), 1.0)
    chunk_s = pass_totals(mixed_step_ops(scenario, decode_requests=decoding, prefill_prompts=1.0 / chunks,
                                         **common), c).time_s
    draft_s = 0.0
    if spec:
        draft = draft_scenario(scenario, spec)
        dc = scenario_ceilings(draft, estimate_name)
        draft_s = spec.tokens * pass_totals(build_ops(draft, "decode", batch=decoding, context=ctx), dc).time_s
    shape = np.shape(concurrency)
    return _Arrays(concurrency=concurrency, decoding=decoding,
                   step_s=np.broadcast_to(totals.time_s + draft_s, shape).astype(float),
                   chunk_step_s=np.broadcast_to(chunk_s + draft_s, shape).astype(float), chunks=chunks,
                   leftover_tokens=leftover,
                   compute_heavier=np.broadcast_to(np.asarray(totals.compute_s) > np.asarray(totals.memory_s), shape))


def _points(scenario: Scenario, mix: ServingMix, options: ServingOptions, a: _Arrays, queue_s: np.ndarray,
            ttft_s: np.ndarray, concurrency: np.ndarray, max_concurrency: int) -> tuple[FrontierPoint, ...]:
    spec = options.speculation
    tau = spec.tokens_per_step if spec else 1.0
    g, p = mix.output_tokens, mix.prompt_tokens
    devices = scenario.parallelism.devices
    itl = a.step_s / tau
    out_per_s = a.decoding * tau / a.step_s  # output tokens/s of the replica
    e2e = ttft_s + (g - 1.0) * itl
    power, price = _power_w(scenario, options), _price(scenario, options)
    joules = None if power is None else power * devices / out_per_s
    usd = None if price is None else price * devices / SECONDS_PER_HOUR / out_per_s * 1e6
    points = []
    for i in range(len(concurrency)):
        points.append(FrontierPoint(
            concurrency=float(concurrency[i]), decoding_requests=float(a.decoding[i]),
            tokens_per_s_per_user=float(1.0 / itl[i]), tokens_per_s_per_device=float(out_per_s[i] / devices),
            total_tokens_per_s_per_device=float(out_per_s[i] * (1.0 + p / g) / devices),
            ttft_s=float(ttft_s[i]), itl_s=float(itl[i]), e2e_s=float(e2e[i]), step_time_s=float(a.step_s[i]),
            queue_s=float(queue_s[i]), prefill_chunks=int(a.chunks[i]), requests_per_s=float(out_per_s[i] / g),
            joules_per_token=None if joules is None else float(joules[i]),
            usd_per_million_tokens=None if usd is None else float(usd[i]),
            fits=bool(concurrency[i] <= max_concurrency), limited_by="compute" if a.compute_heavier[i] else "memory",
        ))
    return tuple(points)


def _closed_loop(a: _Arrays, mix: ServingMix, options: ServingOptions) -> tuple[np.ndarray, np.ndarray]:
    """(queue s, TTFT s): requests beyond the decoding slots wait by Little's law; then the chunked prefill."""
    tau = options.speculation.tokens_per_step if options.speculation else 1.0
    completions_per_s = a.decoding * tau / (mix.output_tokens * a.step_s)
    queue = (a.concurrency - a.decoding) / completions_per_s
    return queue, queue + a.chunks * a.chunk_step_s


def default_concurrencies(limit: int) -> list[int]:
    """Powers of two from 1 up to ``limit``, and ``limit`` itself (just 1 when nothing fits)."""
    if limit < 1:
        return [1]
    values = [1 << i for i in range(limit.bit_length()) if 1 << i <= limit]
    return values if values[-1] == limit else [*values, limit]


def frontier(scenario: Scenario, mix: ServingMix, concurrencies: list[int] | None = None,
             estimate_name: str = "expected", options: ServingOptions | None = None) -> Frontier:
    """The latency-throughput frontier of one replica over concurrency (default: powers of two to the memory
    limit). Points past the memory limit are evaluated too and carry ``fits=False``."""
    options = options or ServingOptions()
    plan = kv_cache_plan(scenario, mix, options)
    values = default_concurrencies(plan.max_concurrency) if concurrencies is None else list(concurrencies)
    if not values or any(v < 1 for v in values):
        raise ModelInputError("concurrency", "needs whole numbers >= 1")
    if len(values) > MAX_FRONTIER_POINTS:
        raise ModelInputError("concurrency", f"at most {MAX_FRONTIER_POINTS} points")
    conc = np.asarray(values, dtype=float)
    a = _evaluate(scenario, mix, conc, estimate_name, options)
    queue, ttft = _closed_loop(a, mix, options)
    return Frontier(estimate_name=estimate_name, devices=scenario.parallelism.devices, memory=plan,
                    points=_points(scenario, mix, options, a, queue, ttft, conc, plan.max_concurrency))


def step_time_s(scenario: Scenario, mix: ServingMix, concurrency: float, estimate_name: str = "expected",
                options: ServingOptions | None = None) -> float:
    """The mean step time at one concurrency (draft steps included)."""
    a = _evaluate(scenario, mix, np.asarray([float(concurrency)]), estimate_name, options or ServingOptions())
    return float(a.step_s[0])


def max_concurrency_for_targets(scenario: Scenario, mix: ServingMix, *, itl_s: float, ttft_s: float,
                                estimate_name: str = "expected", options: ServingOptions | None = None
                                ) -> TargetResult:
    """The largest concurrency (closed loop, within the memory limit) whose ITL <= ``itl_s`` and TTFT <= ``ttft_s``.

    Both latencies grow with concurrency, so candidates are narrowed bracket by bracket (64 evaluated at once)."""
    options = options or ServingOptions()
    plan = kv_cache_plan(scenario, mix, options)

    def ok(conc: np.ndarray) -> tuple[np.ndarray, _Arrays, np.ndarray, np.ndarray]:
        a = _evaluate(scenario, mix, conc, estimate_name, options)
        queue, ttft = _closed_loop(a, mix, options)
        tau = options.speculation.tokens_per_step if options.speculation else 1.0
        return (a.step_s / tau <= itl_s) & (ttft <= ttft_s), a, queue, ttft

    lo, hi = 0, plan.max_concurrency  # lo meets the targets (0: vacuously), answer in [lo, hi]
    while hi > lo:
        cand = np.unique(np.linspace(lo + 1, hi, min(64, hi - lo)).round()).astype(float)
        good = ok(cand)[0]
        passed = cand[good]
        if passed.size and passed[-1] == hi:
            lo = hi
            break
        first_bad = cand[~good][0] if (~good).any() else hi + 1
        lo = int(passed[passed < first_bad].max()) if (passed < first_bad).any() else lo
        hi = int(first_bad) - 1
    if lo == 0:
        return TargetResult(max_concurrency=0, point=None)
    conc = np.asarray([float(lo)])
    _good, a, queue, ttft = ok(conc)
    return TargetResult(max_concurrency=lo,
                        point=_points(scenario, mix, options, a, queue, ttft, conc, plan.max_concurrency)[0])


def _rate_arrays(scenario: Scenario, mix: ServingMix, decoding: np.ndarray, estimate_name: str,
                 options: ServingOptions) -> tuple[_Arrays, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """At the arrival rate each decoding count sustains: (arrays, rate, queue s, TTFT s, concurrency)."""
    spec = options.speculation
    tau = spec.tokens_per_step if spec else 1.0
    a = _evaluate(scenario, mix, decoding, estimate_name, options)
    g, p_c = mix.output_tokens, mix.computed_prompt_tokens
    rate = a.decoding * tau / (g * a.step_s)
    prefill_steps = p_c / a.leftover_tokens  # service of one prompt in the prefill budget, in steps
    rho = np.minimum(a.decoding * tau / g * prefill_steps, 1.0)
    with np.errstate(divide="ignore"):
        wait = np.where(rho < 1.0, rho * prefill_steps * a.step_s / (2.0 * (1.0 - rho)), np.inf)
    queue = 0.5 * a.step_s + wait
    ttft = queue + a.chunks * a.chunk_step_s
    concurrency = rate * (ttft + (g - 1.0) * a.step_s / tau)
    return a, rate, queue, ttft, concurrency


def _rate_limit(scenario: Scenario, mix: ServingMix, options: ServingOptions, plan: KvCachePlan) -> float:
    """The most requests decoding at once: the memory limit, the budget, ``max_num_seqs``."""
    tau = options.speculation.tokens_per_step if options.speculation else 1.0
    q = options.speculation.tokens + 1 if options.speculation else 1
    limit = min(float(plan.max_concurrency),
                options.max_num_batched_tokens / (q + tau * mix.computed_prompt_tokens / mix.output_tokens))
    return min(limit, float(options.max_num_seqs)) if options.max_num_seqs else limit


def at_rate(scenario: Scenario, mix: ServingMix, rate_per_s: float, estimate_name: str = "expected",
            options: ServingOptions | None = None) -> FrontierPoint:
    """One replica at an arrival rate (requests/s): the decoding count that completes as many as arrive, M/D/1
    queueing for prefill. Beyond the replica's capacity the TTFT is infinite and the point does not fit."""
    options = options or ServingOptions()
    if not rate_per_s > 0:
        raise ModelInputError("rate", f"must be > 0, got {rate_per_s!r}")
    plan = kv_cache_plan(scenario, mix, options)
    limit = max(_rate_limit(scenario, mix, options, plan), 1e-6)
    grid = np.geomspace(min(1e-3, limit), limit, RATE_GRID_POINTS)
    _a, rates, *_ = _rate_arrays(scenario, mix, grid, estimate_name, options)
    over = rate_per_s > rates[-1]
    decoding = limit if over else float(np.interp(rate_per_s, rates, grid))
    a, _rate, queue, ttft, concurrency = _rate_arrays(scenario, mix, np.asarray([decoding]), estimate_name, options)
    if over:
        queue, ttft = np.asarray([np.inf]), np.asarray([np.inf])
        concurrency = np.asarray([np.inf])
    point = _points(scenario, mix, options, a, queue, ttft, concurrency, plan.max_concurrency)[0]
    return replace(point, requests_per_s=rate_per_s if not over else point.requests_per_s)


def devices_for_rate(scenario: Scenario, mix: ServingMix, rate_per_s: float, *, itl_s: float, ttft_s: float,
                     tp_options: tuple[int, ...] = (1, 2, 4, 8), estimate_name: str = "expected",
                     options: ServingOptions | None = None) -> DevicePlan | None:
    """The TP degree and replica count that carry ``rate_per_s`` within both targets at the lowest cost (fewest
    devices where the device has no price). None when no TP degree meets the targets at any rate."""
    options = options or ServingOptions()
    if not rate_per_s > 0:
        raise ModelInputError("rate", f"must be > 0, got {rate_per_s!r}")
    best: DevicePlan | None = None
    price = _price(scenario, options)
    for tp in tp_options:
        try:
            s = replace(scenario, parallelism=Parallelism(tp=tp, pp=1))
        except ModelInputError:
            continue
        plan = kv_cache_plan(s, mix, options)
        if plan.max_concurrency < 1:
            continue
        limit = _rate_limit(s, mix, options, plan)
        grid = np.geomspace(min(1e-3, limit), limit, RATE_GRID_POINTS)
        a, rates, _queue, ttft, concurrency = _rate_arrays(s, mix, grid, estimate_name, options)
        tau = options.speculation.tokens_per_step if options.speculation else 1.0
        good = (a.step_s / tau <= itl_s) & (ttft <= ttft_s) & (concurrency <= plan.max_concurrency)
        if not good.any():
            continue
        capacity = float(rates[good].max())
        replicas = math.ceil(rate_per_s / capacity - 1e-12)
        devices = tp * replicas
        cost = None if price is None else price * devices
        candidate = DevicePlan(tp=tp, replicas=replicas, devices=devices, max_requests_per_s_per_replica=capacity,
                               usd_per_hour=cost, point=at_rate(s, mix, rate_per_s / replicas, estimate_name, options))
        key = (cost if cost is not None else devices, devices)
        if best is None or key < ((best.usd_per_hour if best.usd_per_hour is not None else best.devices),
                                  best.devices):
            best = candidate
    return best
