"""Serving: a continuous-batching engine in steady state, on the same ops and estimates as the static batch.

The model (mean values of the request mix: prompt P, P_c = P - h*S of it computed, output G tokens; tau tokens per
step, 1 without speculation; no distribution of lengths):

- **A step** (one forward pass per device, :func:`step.mixed_step_ops`) decodes one token for each of the D running
  requests and prefills prompt tokens under a token budget B (``max_num_batched_tokens``, default 8192: vLLM's
  OpenAI-server default on H100/H200/MI300X, ``EngineArgs.get_batch_defaults`` in vllm/engine/arg_utils.py; V1
  chunks prefills by default). Weights are read once per step; decode attention reads each request's KV at the mean
  context P + G/2. The budget left for prefill beside the decodes is B' = B - D*q (q tokens verified per request).
- **Concurrency C** is the number of requests in flight. At most D_cap = min(B / (q + tau*P_c/G), max_num_seqs)
  decode at once (the budget must also carry one prompt per request every G/tau steps); D = min(C, D_cap).
- **Closed loop** (``arrivals="closed"``: ``vllm bench serve --max-concurrency``, SGLang's ``bench_serving``,
  genai-perf): requests of near-fixed lengths that start together finish together and restart together, so a new
  prompt arrives with the others of its group and waits behind their prefill. The steady cycle: groups of
  g = min(D, max(B'/P_c, 1)) requests, as many prompts as one step's budget holds (the group that filled one step
  finishes in one step G/tau steps later and comes back together); a group's prefill takes s = ceil(g*P_c / B')
  steps, each with the D - g other requests decoding and g/s prompts of prefill. TTFT = the request's fixed path
  + s x that step (+ the queue, below). aiconfigurator's ``run_agg`` (NVIDIA/aiconfigurator,
  sdk/backends/base_backend.py) takes the same picture (a batch of b requests that arrive at once, ceil(isl*b /
  ctx_tokens) mixed steps) and multiplies the prefill time by a queueing factor; here the group is the budget's.
  The first cycle of a benchmark is one burst of all C (:func:`burst_ttft_s`: the band's slow end).
- **Open loop** (``arrivals="poisson"``, and every rate, :func:`at_rate`): arrivals are spread, groups of one.
  D solves lambda = D / (prefill + (G - 1)*ITL) (Little's law for the requests inside the engine); the prefill
  budget B' is an M/D/1 server with utilisation rho = lambda*P_c/B' * t and service P_c/B' steps: the wait
  rho*S / (2*(1 - rho)), plus half a step to the next step boundary, then the prompt's chunks. At a concurrency
  under ``poisson``, the rate whose Little's-law concurrency lambda*e2e is C.
- **ITL** is what the engines' benchmarks report as TPOT: (e2e - TTFT) / (G - 1), the time per output token after
  the first. A decoding request's steps carry only the *other* requests' prefill, never its own prompt (that one
  is in its TTFT): over its (G - 1)/tau decode steps the D - g others bring (D - g)*P_c*(G - 1)/G prompt tokens in
  chunks of g*P_c/s, so k = min(those tokens / chunk, (G - 1)/tau) of its steps are mixed and the rest decode
  only: ITL = ((N - k)*t_decode + k*t_mixed) / N / tau with N = (G - 1)/tau. At one request ITL is the decode
  step alone, flat in the prompt length but for the KV read (vLLM runs at one request: time per output token flat
  within a few per cent from 128 to 8,192 input tokens).
- **Fixed path per request**: HTTP, tokenising, scheduling, detokenising (``Engine.request_overhead_s``, sourced
  per engine profile in models/engines.py; 0 under ``bound`` and for an engine without a figure): once in TTFT.
- **Throughput**: a closed loop obeys Little's law, completions/s = C / e2e with e2e = TTFT + (G - 1)*ITL; the
  engine cannot complete more than lambda_cap = D_cap*tau / (G * t(D_cap)) requests/s, so e2e is at least
  C / lambda_cap and the difference waits in the queue (requests beyond the decode slots). Output tokens/s per
  device = G * completions/s / devices; total tokens/s adds the P prompt tokens of each completed request. Per
  user: 1 / ITL. Open loop: completions/s = lambda.
- **Memory** (:mod:`memory`): paged KV blocks of 16 tokens under ``gpu_memory_utilization`` 0.9, after
  weights, the activation workspace of one budget-sized pass and the runtime reserve (vLLM's
  ``determine_num_available_blocks``); the frontier runs from 1 to the number of whole requests the blocks hold.
- **Prefix caching:** S shared prefix tokens hit with probability h: each request computes P - h*S prompt tokens
  and pairs(P) - h*pairs(S) attention pairs, reads the prefix's KV instead, and the prefix's blocks are stored once.
  Decode still reads every request's whole context (no cascade attention).
- **Speculative decoding** (:class:`inputs.Speculation`): k drafted tokens, acceptance a, tau = (1 -
  a^(k+1)) / (1 - a) tokens per verification step (Leviathan et al. 2023, arXiv:2211.17192). A step verifies k+1
  tokens per request in the target and runs k draft decode steps of D tokens (a draft model, or the target's MTP
  layer), added to every step.
- **Energy and cost:** J per output token = power * devices / (output tokens/s of the replica), power per device =
  a measured figure (``ServingOptions.power_w``) or the preset's board power ``tdp_w`` (a ceiling: a real run draws
  less, so this is an upper bound). $ per million output tokens = price per device-hour * devices / 3600 / (output
  tokens/s) * 1e6, the device's own price (``Hardware.price_usd_per_hour``) or an override; None where none is known.
- **Targets:** :func:`max_concurrency_for_targets` (largest C with ITL <= x and TTFT <= y, under the options'
  arrival model) and :func:`devices_for_rate` (TP x replicas carrying a request rate within the targets at the
  lowest cost, each replica at lambda / replicas, Poisson arrivals). Pipeline parallelism runs stage after stage.

Limits: mean lengths only; no preemption; no admission queue for KV memory; the first burst of a closed-loop run is
left out of its steady cycle (it is the band's slow end); every figure is closed-form in G (no loop over tokens).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..engines import engine_profile
from ..errors import ModelInputError
from ..estimate import pass_totals, scenario_ceilings
from ..inference import idle_reference_flops_per_s
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
    itl_s: float  # time per output token after the first (the engines' TPOT)
    e2e_s: float
    step_time_s: float  # the mean step: D decodes and D*tau/G prompts of prefill
    queue_s: float
    prefill_chunks: int  # steps the request's prefill group takes
    requests_per_s: float
    joules_per_token: float | None
    usd_per_million_tokens: float | None
    fits: bool
    limited_by: str
    arrivals: str = "closed"  # the arrival model of this point's TTFT and ITL (inputs.ARRIVAL_MODELS)
    request_overhead_s: float = 0.0  # the fixed path per request in its TTFT
    prefill_group: float = 1.0  # requests whose prompts arrive and prefill together
    mixed_step_share: float = 0.0  # share of a request's decode steps carrying other requests' prefill
    # the mean mixed step (D decodes and D*tau/G prompts of prefill), as DESIGN.md defines them for a phase:
    # idle-core % = 100 x (1 - useful FLOP/s / spec peak FLOP/s), MBU % = 100 x bytes/s / spec bandwidth
    idle_core_pct: float = math.nan
    mbu_pct: float = math.nan


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


def request_overhead_s(scenario: Scenario, estimate_name: str, options: ServingOptions | None = None) -> float:
    """The fixed path of one request in its TTFT: 0 under ``bound`` (no overheads); else the options' figure, or
    the engine profile's (``Engine.request_overhead_s``)."""
    if estimate_name == "bound":
        return 0.0
    if options is not None and options.request_overhead_s is not None:
        return options.request_overhead_s
    return engine_profile(scenario.engine).request_overhead_s


def _tau_q(options: ServingOptions) -> tuple[float, int]:
    spec = options.speculation
    return (spec.tokens_per_step, spec.tokens + 1) if spec else (1.0, 1)


def decode_slots(mix: ServingMix, options: ServingOptions) -> float:
    """D_cap: the most requests decoding at once under the budget (each also brings P_c prompt tokens every
    G/tau steps) and ``max_num_seqs``."""
    tau, q = _tau_q(options)
    limit = options.max_num_batched_tokens / (q + tau * mix.computed_prompt_tokens / mix.output_tokens)
    return min(limit, float(options.max_num_seqs)) if options.max_num_seqs else limit


@dataclass(frozen=True, slots=True)
class _Steps:
    """What a sweep of decoding counts gives, per point (arrays): the steps and the per-request figures that do
    not depend on the queue."""

    decoding: np.ndarray
    mean_step_s: np.ndarray
    leftover_tokens: np.ndarray
    group: np.ndarray
    prefill_steps: np.ndarray
    prefill_s: np.ndarray  # the group's prefill: prefill_steps x its step
    itl_s: np.ndarray
    mixed_share: np.ndarray
    compute_heavier: np.ndarray
    capacity_step_s: float  # the mean step at D_cap (closed loops), else nan
    idle_core_pct: np.ndarray  # of the mean step (its FLOPs and bytes over its time, drafts included in the time)
    mbu_pct: np.ndarray


def _steps(scenario: Scenario, mix: ServingMix, decoding: np.ndarray, estimate_name: str, options: ServingOptions,
           arrivals: str, capacity_decoding: float | None = None) -> _Steps:
    """Steps and per-request latencies at each decoding count D (vectorised; see the module docstring).

    Two passes over the ops: every step that carries prefill (the mean step, the group's prefill step, the mixed
    decode step, and the mean step at ``capacity_decoding`` when given, last) in one, the decode-only step in the
    other (a pass without prefill has no prefill-only kernels)."""
    c = scenario_ceilings(scenario, estimate_name)
    tau, q = _tau_q(options)
    p_c, g_out, ctx = mix.computed_prompt_tokens, mix.output_tokens, mix.mean_context_tokens
    common = dict(context_tokens=ctx, prompt_tokens=mix.prompt_tokens, prefix_tokens=mix.prefix_tokens,
                  prefix_hit_rate=mix.prefix_hit_rate, query_tokens_per_request=q)
    decoding = np.asarray(decoding, dtype=float).reshape(-1)
    n = decoding.size
    leftover = np.maximum(options.max_num_batched_tokens - decoding * q, 1.0)
    # prompts that arrive together: a closed loop's group fills one step's budget (at most the D in flight); an
    # open loop's arrival is one whole prompt, however few requests are in the engine on average
    closed_group = np.minimum(decoding, np.maximum(leftover / p_c, 1.0))
    group = closed_group if arrivals == "closed" else np.ones_like(decoding)
    prefill_steps = np.maximum(np.ceil(group * p_c / leftover - 1e-9), 1.0)
    others = np.maximum(decoding - group, 0.0)
    # ITL: the other requests' prompts arrive in chunks of one group's step; the request's own prompt is in TTFT
    decode_steps = max((g_out - 1.0) / tau, 1.0)
    other_tokens = others * p_c * (g_out - 1.0) / g_out
    chunk_tokens = group * p_c / prefill_steps
    mixed = np.minimum(other_tokens / chunk_tokens, decode_steps)
    mixed_tokens = np.where(mixed > 0, other_tokens / np.maximum(mixed, 1e-30), chunk_tokens)
    extra = [] if capacity_decoding is None else [float(capacity_decoding)]
    decodes = np.concatenate([decoding, others, decoding, extra])
    prompts = np.concatenate([decoding * tau / g_out, group / prefill_steps, mixed_tokens / p_c,
                              [d * tau / g_out for d in extra]])
    with_prefill = pass_totals(mixed_step_ops(scenario, decode_requests=decodes, prefill_prompts=prompts, **common), c)
    decode_only = pass_totals(mixed_step_ops(scenario, decode_requests=decoding, prefill_prompts=0.0, **common), c)
    times = np.broadcast_to(with_prefill.time_s, decodes.shape).astype(float)
    decode_s = np.broadcast_to(decode_only.time_s, decoding.shape).astype(float)
    if options.speculation is not None:  # k draft decode steps of the step's decodes, in every step
        draft = draft_scenario(scenario, options.speculation)
        all_decodes = np.concatenate([decodes, decoding])
        drafts = pass_totals(build_ops(draft, "decode", batch=np.maximum(all_decodes, 1e-9), context=ctx),
                             scenario_ceilings(draft, estimate_name))
        draft_s = options.speculation.tokens * np.broadcast_to(drafts.time_s, all_decodes.shape)
        times, decode_s = times + draft_s[:decodes.size], decode_s + draft_s[decodes.size:]
    mean_s, group_s, mixed_s = times[:n], times[n:2 * n], times[2 * n:3 * n]
    heavier = np.broadcast_to(np.asarray(with_prefill.compute_s) > np.asarray(with_prefill.memory_s),
                              decodes.shape)[:n]
    itl = ((decode_steps - mixed) * decode_s + mixed * mixed_s) / decode_steps / tau
    pp = scenario.parallelism.pp  # the pass totals cover every stage; each stage's device runs its share
    mean_flops = np.broadcast_to(with_prefill.flops, decodes.shape)[:n] / pp
    mean_bytes = np.broadcast_to(with_prefill.memory_bytes, decodes.shape)[:n] / pp
    idle_pct = 100.0 * (1.0 - mean_flops / mean_s / idle_reference_flops_per_s(scenario, c))
    mbu_pct = 100.0 * mean_bytes / mean_s / c.spec_mem_bw_bytes_per_s
    return _Steps(decoding=decoding, mean_step_s=mean_s, leftover_tokens=leftover, group=group,
                  prefill_steps=prefill_steps, prefill_s=prefill_steps * group_s, itl_s=itl,
                  mixed_share=mixed / decode_steps, compute_heavier=heavier,
                  capacity_step_s=float(times[-1]) if extra else math.nan, idle_core_pct=idle_pct, mbu_pct=mbu_pct)


@dataclass(frozen=True, slots=True)
class _Result:
    """Per-point figures of a sweep (arrays) before they become :class:`FrontierPoint` s."""

    concurrency: np.ndarray
    steps: _Steps
    queue_s: np.ndarray
    ttft_s: np.ndarray
    e2e_s: np.ndarray
    requests_per_s: np.ndarray
    arrivals: str
    overhead_s: float


def _closed(scenario: Scenario, mix: ServingMix, concurrency: np.ndarray, estimate_name: str,
            options: ServingOptions) -> _Result:
    """A closed loop of C requests in flight (the steady cycle of the module docstring)."""
    overhead = request_overhead_s(scenario, estimate_name, options)
    tau, _q = _tau_q(options)
    d_cap = decode_slots(mix, options)
    st = _steps(scenario, mix, np.minimum(concurrency, d_cap), estimate_name, options, "closed", d_cap)
    engine_e2e = overhead + st.prefill_s + (mix.output_tokens - 1.0) * st.itl_s
    capacity_per_s = d_cap * tau / (mix.output_tokens * st.capacity_step_s)  # lambda_cap: the budget full each step
    e2e = np.maximum(engine_e2e, concurrency / capacity_per_s)
    queue = e2e - engine_e2e
    return _Result(concurrency=concurrency, steps=st, queue_s=queue, ttft_s=overhead + queue + st.prefill_s,
                   e2e_s=e2e, requests_per_s=concurrency / e2e, arrivals="closed", overhead_s=overhead)


def _poisson(scenario: Scenario, mix: ServingMix, decoding: np.ndarray, estimate_name: str,
          options: ServingOptions) -> _Result:
    """Poisson arrivals at the rate D requests in the engine sustain: lambda = D / (prefill + (G - 1)*ITL), Little's
    law inside the engine; M/D/1 queueing for prefill."""
    overhead = request_overhead_s(scenario, estimate_name, options)
    st = _steps(scenario, mix, decoding, estimate_name, options, "poisson")
    g, p_c = mix.output_tokens, mix.computed_prompt_tokens
    rate = st.decoding / (st.prefill_s + (g - 1.0) * st.itl_s)  # Little's law inside the engine: D = rate x time in it
    service_steps = p_c / st.leftover_tokens  # one prompt in the prefill budget, in steps
    rho = np.minimum(rate * st.mean_step_s * service_steps, 1.0)  # prompts arriving per step x steps per prompt
    with np.errstate(divide="ignore"):
        wait = np.where(rho < 1.0, rho * service_steps * st.mean_step_s / (2.0 * (1.0 - rho)), np.inf)
    queue = 0.5 * st.mean_step_s + wait
    ttft = overhead + queue + st.prefill_s
    e2e = ttft + (g - 1.0) * st.itl_s
    return _Result(concurrency=rate * e2e, steps=st, queue_s=queue, ttft_s=ttft, e2e_s=e2e, requests_per_s=rate,
                   arrivals="poisson", overhead_s=overhead)


def _rate_grid(limit: float) -> np.ndarray:
    return np.geomspace(min(1e-3, limit), limit, RATE_GRID_POINTS)


def _poisson_limit(mix: ServingMix, options: ServingOptions, plan: KvCachePlan) -> float:
    """The most requests decoding at once under Poisson arrivals: the memory limit, the budget, ``max_num_seqs``."""
    return max(min(float(plan.max_concurrency), decode_slots(mix, options)), 1e-6)


def _poisson_at_concurrency(scenario: Scenario, mix: ServingMix, concurrency: np.ndarray, estimate_name: str,
                         options: ServingOptions, plan: KvCachePlan) -> _Result:
    """Poisson arrivals at the rate whose mean number in flight (lambda * e2e) is each C; beyond what the replica
    carries, TTFT is infinite."""
    grid = _poisson(scenario, mix, _rate_grid(_poisson_limit(mix, options, plan)), estimate_name, options)
    finite = np.isfinite(grid.concurrency)
    conc_grid, dec_grid = grid.concurrency[finite], grid.steps.decoding[finite]
    decoding = np.interp(concurrency, conc_grid, dec_grid)
    r = _poisson(scenario, mix, decoding, estimate_name, options)
    over = concurrency > conc_grid[-1]
    inf = np.where(over, np.inf, 0.0)
    return replace(r, concurrency=concurrency, queue_s=r.queue_s + inf, ttft_s=r.ttft_s + inf, e2e_s=r.e2e_s + inf,
                   requests_per_s=np.where(over, r.requests_per_s, concurrency / r.e2e_s))


def _points(scenario: Scenario, mix: ServingMix, options: ServingOptions, r: _Result,
            max_concurrency: int) -> tuple[FrontierPoint, ...]:
    g, p = mix.output_tokens, mix.prompt_tokens
    devices = scenario.parallelism.devices
    st = r.steps
    out_per_s = r.requests_per_s * g  # output tokens/s of the replica
    power, price = _power_w(scenario, options), _price(scenario, options)
    joules = None if power is None else power * devices / out_per_s
    usd = None if price is None else price * devices / SECONDS_PER_HOUR / out_per_s * 1e6
    points = []
    for i in range(len(r.concurrency)):
        points.append(FrontierPoint(
            concurrency=float(r.concurrency[i]), decoding_requests=float(st.decoding[i]),
            tokens_per_s_per_user=float(1.0 / st.itl_s[i]), tokens_per_s_per_device=float(out_per_s[i] / devices),
            total_tokens_per_s_per_device=float(out_per_s[i] * (1.0 + p / g) / devices),
            ttft_s=float(r.ttft_s[i]), itl_s=float(st.itl_s[i]), e2e_s=float(r.e2e_s[i]),
            step_time_s=float(st.mean_step_s[i]), queue_s=float(r.queue_s[i]),
            prefill_chunks=int(st.prefill_steps[i]), requests_per_s=float(r.requests_per_s[i]),
            joules_per_token=None if joules is None else float(joules[i]),
            usd_per_million_tokens=None if usd is None else float(usd[i]),
            fits=bool(r.concurrency[i] <= max_concurrency and math.isfinite(r.ttft_s[i])),
            limited_by="compute" if st.compute_heavier[i] else "memory",
            arrivals=r.arrivals, request_overhead_s=r.overhead_s, prefill_group=float(st.group[i]),
            mixed_step_share=float(st.mixed_share[i]), idle_core_pct=float(st.idle_core_pct[i]),
            mbu_pct=float(st.mbu_pct[i]),
        ))
    return tuple(points)


def default_concurrencies(limit: int) -> list[int]:
    """Powers of two from 1 up to ``limit``, and ``limit`` itself (just 1 when nothing fits)."""
    if limit < 1:
        return [1]
    values = [1 << i for i in range(limit.bit_length()) if 1 << i <= limit]
    return values if values[-1] == limit else [*values, limit]


def _at_concurrency(scenario: Scenario, mix: ServingMix, conc: np.ndarray, estimate_name: str,
                    options: ServingOptions, plan: KvCachePlan) -> _Result:
    if options.arrivals == "poisson":
        return _poisson_at_concurrency(scenario, mix, conc, estimate_name, options, plan)
    return _closed(scenario, mix, conc, estimate_name, options)


def frontier(scenario: Scenario, mix: ServingMix, concurrencies: list[int] | None = None,
             estimate_name: str = "expected", options: ServingOptions | None = None) -> Frontier:
    """The latency-throughput frontier of one replica over concurrency (default: powers of two to the memory
    limit) under the options' arrival model. Points past the memory limit are evaluated too and carry
    ``fits=False``."""
    options = options or ServingOptions()
    plan = kv_cache_plan(scenario, mix, options)
    values = default_concurrencies(plan.max_concurrency) if concurrencies is None else list(concurrencies)
    if not values or any(v < 1 for v in values):
        raise ModelInputError("concurrency", "needs whole numbers >= 1")
    if len(values) > MAX_FRONTIER_POINTS:
        raise ModelInputError("concurrency", f"at most {MAX_FRONTIER_POINTS} points")
    conc = np.asarray(values, dtype=float)
    r = _at_concurrency(scenario, mix, conc, estimate_name, options, plan)
    return Frontier(estimate_name=estimate_name, devices=scenario.parallelism.devices, memory=plan,
                    points=_points(scenario, mix, options, r, plan.max_concurrency))


def burst_ttft_s(scenario: Scenario, mix: ServingMix, concurrency: float, estimate_name: str = "expected",
                 options: ServingOptions | None = None) -> float:
    """Mean TTFT of one burst: C requests sent at once into an idle engine (the first cycle of a closed-loop run,
    or ``--request-rate inf`` with as many prompts). The prompts queue for the budget B in order: request k's first
    token comes with step ceil(k*x), x = P_c / B, each step a full budget of prefill (or all C prompts when they fit
    one); the mean of ceil(k*x) over k = 1..C is taken as max(ceil(x), x*(C + 1)/2 + 1/2) (the midpoint of its
    bounds x*(C + 1)/2 and x*(C + 1)/2 + 1), plus the fixed path."""
    options = options or ServingOptions()
    p_c, budget = mix.computed_prompt_tokens, float(options.max_num_batched_tokens)
    x = p_c / budget
    mean_steps = max(math.ceil(x - 1e-9), x * (concurrency + 1.0) / 2.0 + 0.5) if concurrency * p_c > budget else 1.0
    prompts_per_step = min(concurrency, budget / p_c) if concurrency * p_c > budget else concurrency
    c = scenario_ceilings(scenario, estimate_name)
    step = pass_totals(mixed_step_ops(scenario, decode_requests=0.0, context_tokens=mix.mean_context_tokens,
                                      prefill_prompts=prompts_per_step, prompt_tokens=mix.prompt_tokens,
                                      prefix_tokens=mix.prefix_tokens, prefix_hit_rate=mix.prefix_hit_rate), c)
    return request_overhead_s(scenario, estimate_name, options) + mean_steps * float(step.time_s)


def step_time_s(scenario: Scenario, mix: ServingMix, concurrency: float, estimate_name: str = "expected",
                options: ServingOptions | None = None) -> float:
    """The mean step time at one concurrency (draft steps included)."""
    options = options or ServingOptions()
    decoding = np.asarray([min(float(concurrency), decode_slots(mix, options))])
    return float(_steps(scenario, mix, decoding, estimate_name, options, options.arrivals).mean_step_s[0])


def max_concurrency_for_targets(scenario: Scenario, mix: ServingMix, *, itl_s: float, ttft_s: float,
                                estimate_name: str = "expected", options: ServingOptions | None = None
                                ) -> TargetResult:
    """The largest concurrency (within the memory limit, under the options' arrival model) whose ITL <= ``itl_s``
    and TTFT <= ``ttft_s``.

    Both latencies grow with concurrency, so candidates are narrowed bracket by bracket (64 evaluated at once)."""
    options = options or ServingOptions()
    plan = kv_cache_plan(scenario, mix, options)

    def ok(conc: np.ndarray) -> tuple[np.ndarray, _Result]:
        r = _at_concurrency(scenario, mix, conc, estimate_name, options, plan)
        return (r.steps.itl_s <= itl_s) & (r.ttft_s <= ttft_s), r

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
    _good, r = ok(np.asarray([float(lo)]))
    return TargetResult(max_concurrency=lo, point=_points(scenario, mix, options, r, plan.max_concurrency)[0])


def at_rate(scenario: Scenario, mix: ServingMix, rate_per_s: float, estimate_name: str = "expected",
            options: ServingOptions | None = None) -> FrontierPoint:
    """One replica at an arrival rate (requests/s): the decoding count that completes as many as arrive, Poisson
    arrivals, M/D/1 queueing for prefill. Beyond the replica's capacity the TTFT is infinite and the point does not
    fit."""
    options = options or ServingOptions()
    if not rate_per_s > 0:
        raise ModelInputError("rate", f"must be > 0, got {rate_per_s!r}")
    plan = kv_cache_plan(scenario, mix, options)
    limit = _poisson_limit(mix, options, plan)
    grid = _rate_grid(limit)
    rates = _poisson(scenario, mix, grid, estimate_name, options).requests_per_s
    over = rate_per_s > rates[-1]
    decoding = limit if over else float(np.interp(rate_per_s, rates, grid))
    r = _poisson(scenario, mix, np.asarray([decoding]), estimate_name, options)
    if over:
        inf = np.asarray([np.inf])
        r = replace(r, queue_s=inf, ttft_s=inf, e2e_s=inf, concurrency=inf)
    else:  # completions = arrivals exactly (the decoding count is interpolated on the grid)
        r = replace(r, requests_per_s=np.asarray([rate_per_s]), concurrency=rate_per_s * r.e2e_s)
    return _points(scenario, mix, options, r, plan.max_concurrency)[0]


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
        r = _poisson(s, mix, _rate_grid(_poisson_limit(mix, options, plan)), estimate_name, options)
        good = (r.steps.itl_s <= itl_s) & (r.ttft_s <= ttft_s) & (r.concurrency <= plan.max_concurrency)
        if not good.any():
            continue
        capacity = float(r.requests_per_s[good].max())
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
