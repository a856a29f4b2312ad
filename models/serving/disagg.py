"""Disaggregated serving: a prefill pool and a decode pool, each with its own parallelism, joined by a KV transfer.

NVIDIA Dynamo, SGLang PD, vLLM's disaggregated prefill and llm-d run prompts on prefill instances and hand each
request's KV cache to a decode instance (Mooncake / NIXL RDMA). The model (mean prompt P and output G tokens):

- **A layout** is one instance's parallelism: ``TPn`` (n devices, tensor-parallel, inside one scale-up domain) or
  ``EPn`` (n ranks, experts spread, attention data-parallel: :mod:`roofline.models.expert_parallel`).
- **Prefill pool** (x instances, requests split evenly, Poisson arrivals): an instance runs passes of b prompts per
  rank (b up to the token budget ``max_num_batched_tokens`` / P and the memory); at a rate it batches what arrives
  during a pass, b = clip(lambda * t(b) / ranks, 1, b_max) (fixed point). Utilisation rho = lambda * t(b) /
  (ranks * b); the wait is the residual of the pass in progress, rho * t(b) / 2, plus the M/D/1 queue for one
  prompt's service S = t(b) / (ranks * b), rho * S / (2 (1 - rho)). Prefill time = wait + t(b).
- **KV transfer**: the prompt's KV bytes (every layer, the KV format) over the link between the pools: the NVLink
  domain when one prefill and one decode instance fit in it together (GB200/GB300 NVL72), else each device's NIC
  (:mod:`roofline.models.topology`). ``expected``: the devices that hold distinct KV shards send in parallel (TP over
  GQA heads: min(n, KV heads); MLA's one latent and DP attention: one device), at the achieved link share
  (estimate.DEFAULT_LINK_BW_FRACTION) plus the link latency. ``bound``: every sender device in parallel at spec,
  no latency, streamed layer by layer under the prefill (TTFT takes max(prefill, transfer), not the sum).
- **TTFT** = prefill wait + prefill pass + KV transfer (``expected``). **ITL** comes from the decode pool alone:
  its step decodes only (no prefill chunks): per rank r requests at the mean context P + G/2; the largest r with
  step <= the ITL target, within memory, DeepEP's low-latency limit for EP decode (fewer than 256 tokens per rank:
  deepseek-ai/DeepEP docs/legacy.md) and ``max_num_seqs``, gives an instance's capacity ranks * r / (G * step);
  y = ceil(rate / capacity) instances.
- **Search** (:func:`search_disagg`): every prefill layout x every decode layout that fits, x and y as above; the
  lowest cost (devices x price per device-hour; fewest devices without a price). Per output token: $/Mtok =
  $/hour / 3600 / (rate * G) * 1e6, J/tok = board power x devices / (rate * G) (a ceiling, as the frontier).
- **Aggregated beside it** (:func:`compare_with_aggregated`): the cheaper of the continuous-batching frontier's
  :func:`frontier.devices_for_rate` (TP x replicas) and, for MoE models, :func:`aggregated_ep` (EP instances whose
  steps mix decodes and prefill chunks) for the same rate and targets; the ratio of devices says which serves more
  tokens per device at this rate.

Limits: mean lengths, no prefix caching in the transfer (the whole prompt's KV is sent), decode instances never
preempt, both pools priced per device-hour alike; the KV transfer is not queued behind other transfers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..errors import ModelInputError
from ..estimate import DEFAULT_LINK_BW_FRACTION, pass_totals, scenario_ceilings
from ..expert_parallel import ExpertParallel, attention_tp, ep_memory, ep_pass
from ..memory import (
    RUNTIME_RESERVE_BYTES_PER_DEVICE,
    activation_bytes_per_device,
    kv_cache_bytes_per_sequence_per_device,
    tp_replicated_weight_bytes_per_device,
    weight_bytes_total,
)
from ..ops import build_ops
from ..scenario import Parallelism, Scenario
from ..topology import Link, cluster_for
from .frontier import SECONDS_PER_HOUR, DevicePlan, devices_for_rate
from .inputs import ServingMix, ServingOptions

TP_SIZES = (1, 2, 4, 8)
EP_SIZES = (8, 16, 32, 64, 72, 128, 144, 256)
DEEPEP_LL_MAX_TOKENS_PER_RANK = 256  # DeepEP legacy.md: the low-latency batch "should be less than 256"
DEFAULT_MAX_NUM_SEQS = 1024  # vLLM's OpenAI server on large GPUs (see inputs.py)
DECODE_GRID_POINTS = 48
PREFILL_RATE_POINTS = 64
FIXED_POINT_STEPS = 24
BISECTION_STEPS = 32


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolLayout:
    """One instance's parallelism: ``tp`` (``size`` devices, tensor-parallel) or ``ep`` (``size`` ranks)."""

    kind: str
    size: int
    attention: str = "dp"
    redundant_experts: int = 0
    imbalance: float | None = None  # EP: a stated max/mean load factor (None: expert_parallel's statistical one)

    @property
    def devices(self) -> int:
        return self.size

    @property
    def label(self) -> str:
        if self.kind == "tp":
            return f"TP{self.size}"
        extra = f", {self.redundant_experts} redundant experts" if self.redundant_experts else ""
        return f"EP{self.size} (attention {self.attention}{extra})"


@dataclass(frozen=True, slots=True, kw_only=True)
class KvTransfer:
    bytes_per_request: float
    paths: int
    link_kind: str
    link_bw_unidirectional_bytes_per_s: float
    time_s: float


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolPlan:
    """One pool at its share of the rate: instances, devices, the operating point of one instance."""

    phase: str
    layout: PoolLayout
    instances: int
    devices: int
    max_requests_per_s_per_instance: float
    requests_per_rank: float  # prefill: prompts per rank per pass; decode: running requests per rank
    step_time_s: float  # prefill: one pass; decode: one step (= ITL)
    queue_s: float  # prefill only


@dataclass(frozen=True, slots=True, kw_only=True)
class DisaggPlan:
    prefill: PoolPlan
    decode: PoolPlan
    transfer: KvTransfer
    ttft_s: float
    itl_s: float
    devices: int
    usd_per_hour: float | None
    usd_per_million_tokens: float | None
    joules_per_token: float | None

    @property
    def ratio(self) -> str:
        """x:y prefill to decode instances (xPyD)."""
        return f"{self.prefill.instances}P{self.decode.instances}D"


@dataclass(frozen=True, slots=True, kw_only=True)
class Comparison:
    """The best aggregated and disaggregated layouts for one rate; ``tokens_per_device_ratio`` = aggregated devices
    / disaggregated devices (above 1: disaggregated serves more tokens per device)."""

    aggregated: AggregatedPlan | None
    disaggregated: DisaggPlan | None
    tokens_per_device_ratio: float | None
    winner: str | None  # "disaggregated", "aggregated", "tie" or None (neither meets the targets)


# ---- one instance: pass times and memory --------------------------------------------------------------------------
def _ranks(layout: PoolLayout) -> int:
    """Requests an instance holds per unit of ``requests_per_rank``: its ranks under EP, one group under TP."""
    return layout.size if layout.kind == "ep" else 1


def _ep(layout: PoolLayout, fabric: str | None, devices_per_node: int | None) -> ExpertParallel:
    return ExpertParallel(ep=layout.size, attention=layout.attention, redundant_experts=layout.redundant_experts,
                          imbalance=layout.imbalance, fabric=fabric, devices_per_node=devices_per_node)


def _tp_scenario(scenario: Scenario, tp: int) -> Scenario:
    return replace(scenario, parallelism=Parallelism(tp=tp, pp=1))


def _pass_s(scenario: Scenario, layout: PoolLayout, phase: str, requests_per_rank: np.ndarray, context: float,
            prompt: float, estimate_name: str, fabric: str | None, devices_per_node: int | None) -> np.ndarray:
    if layout.kind == "ep":
        p = ep_pass(scenario, _ep(layout, fabric, devices_per_node), phase, requests_per_rank=requests_per_rank,
                    context_tokens=context, prompt_tokens=prompt, estimate_name=estimate_name)
        return np.broadcast_to(np.asarray(p.time_s, dtype=float), np.shape(requests_per_rank))
    s = _tp_scenario(scenario, layout.size)
    ops = build_ops(s, phase, batch=requests_per_rank, context=context, prompt=prompt)
    total = pass_totals(ops, scenario_ceilings(s, estimate_name)).time_s
    return np.broadcast_to(np.asarray(total, dtype=float), np.shape(requests_per_rank))


def _max_requests(scenario: Scenario, layout: PoolLayout, tokens_per_request: int, options: ServingOptions,
                  fabric: str | None, devices_per_node: int | None) -> int:
    """Requests per rank (EP) or per instance (TP) whose KV fits beside the weights, reserve and workspace."""
    if layout.kind == "ep":
        return ep_memory(scenario, _ep(layout, fabric, devices_per_node), tokens_per_request=tokens_per_request,
                         gpu_memory_utilization=options.gpu_memory_utilization).max_requests
    s = _tp_scenario(scenario, layout.size)
    weights = weight_bytes_total(s) / layout.size + tp_replicated_weight_bytes_per_device(s)
    fixed = weights + RUNTIME_RESERVE_BYTES_PER_DEVICE + activation_bytes_per_device(s, 1)
    free = s.hardware.memory_capacity_bytes * options.gpu_memory_utilization - fixed
    kv = kv_cache_bytes_per_sequence_per_device(s, tokens_per_request)
    return 0 if free <= 0 or kv <= 0 else int(free // kv)


def candidate_layouts(scenario: Scenario, *, ep: int | None = None, attention: str = "dp",
                      max_instance_devices: int | None = None, fabric: str | None = None,
                      devices_per_node: int | None = None, ep_imbalance: float | None = None,
                      redundant_experts: int | None = None) -> list[PoolLayout]:
    """TP 1/2/4/8 inside one node (dividing the heads), and for MoE models EP 8 to 256 (or just ``ep``) with
    redundant slots that make the expert slots divide evenly (EPLB's 288 = 256 + 32 for EP 72 and 144; or
    ``redundant_experts`` for every EP layout), spanning
    nodes only where the preset (or ``fabric``) names a scale-out NIC; none larger than ``max_instance_devices``."""
    cluster = cluster_for(scenario.hardware, fabric=fabric, devices_per_node=devices_per_node)
    cap = max_instance_devices or 10**9
    layouts: list[PoolLayout] = []
    if ep is None:
        for tp in TP_SIZES:
            if tp > cap or (tp > 1 and tp > max(cluster.devices_per_node, 1)):
                continue
            try:
                _tp_scenario(scenario, tp)
            except ModelInputError:
                continue
            layouts.append(PoolLayout(kind="tp", size=tp))
    moe = scenario.model.moe
    if moe is None:
        if ep is not None:
            raise ModelInputError("ep", f"{scenario.model.id} has no routed experts; expert parallelism needs a MoE "
                                  "model")
        return layouts
    for size in (EP_SIZES if ep is None else (ep,)):
        if size > cap or (size > cluster.devices_per_node and cluster.scale_out is None):
            continue
        redundant = (-moe.num_experts) % size if redundant_experts is None else redundant_experts
        if size > moe.num_experts + redundant:
            continue
        layout = PoolLayout(kind="ep", size=size, attention=attention, redundant_experts=redundant,
                            imbalance=ep_imbalance)
        try:
            attention_tp(scenario, _ep(layout, fabric, devices_per_node))
            ExpertParallel(ep=size, attention=attention, imbalance=ep_imbalance)
            if attention == "tp":
                _tp_scenario(scenario, attention_tp(scenario, _ep(layout, fabric, devices_per_node)))
        except ModelInputError:
            continue
        layouts.append(layout)
    return layouts


# ---- the KV transfer ----------------------------------------------------------------------------------------------
def kv_bytes_per_request(scenario: Scenario, prompt_tokens: int) -> float:
    """The whole prompt's KV cache: every attention layer, at the KV format (one device's copy at TP 1)."""
    return kv_cache_bytes_per_sequence_per_device(_tp_scenario(scenario, 1), prompt_tokens)


def _kv_shards(scenario: Scenario, layout: PoolLayout) -> int:
    """Devices holding distinct pieces of one request's KV: TP over GQA heads, min(n, KV heads); MLA's latent is
    replicated and DP attention keeps a request on one rank: 1."""
    a = scenario.model.attention
    if layout.kind == "ep" or a.is_mla:
        return 1
    return max(1, min(layout.size, a.num_kv_heads))


def kv_transfer(scenario: Scenario, prefill: PoolLayout, decode: PoolLayout, prompt_tokens: int,
                estimate_name: str = "expected", *, fabric: str | None = None,
                devices_per_node: int | None = None) -> KvTransfer:
    """One prompt's KV from a prefill instance to a decode instance (see the module text)."""
    cluster = cluster_for(scenario.hardware, fabric=fabric, devices_per_node=devices_per_node)
    together = prefill.devices + decode.devices <= cluster.devices_per_node
    link: Link | None = cluster.scale_up if together else cluster.scale_out
    if link is None:
        raise ModelInputError("fabric", f"a {prefill.label} and a {decode.label} instance do not fit in one "
                              f"{scenario.hardware.id} node of {cluster.devices_per_node}, and the preset names no "
                              "scale-out fabric for the KV transfer (give --fabric)")
    size = kv_bytes_per_request(scenario, prompt_tokens)
    bw = link.bw_unidirectional_bytes_per_s
    if estimate_name == "bound":
        paths = min(prefill.devices, decode.devices)
        time_s = size / (paths * bw)
    else:
        paths = min(_kv_shards(scenario, prefill), _kv_shards(scenario, decode))
        time_s = link.latency_s + size / (paths * bw * DEFAULT_LINK_BW_FRACTION)
    return KvTransfer(bytes_per_request=size, paths=paths, link_kind=link.kind,
                      link_bw_unidirectional_bytes_per_s=bw, time_s=time_s)


# ---- pools --------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _DecodeCurve:
    layout: PoolLayout
    requests: np.ndarray  # per rank
    step_s: np.ndarray


@dataclass(frozen=True, slots=True)
class _PrefillCurve:
    """Pass time over prompts per rank (1..b_max) of one prefill layout; :meth:`at` evaluates a rate."""

    layout: PoolLayout
    prompts: np.ndarray
    pass_s: np.ndarray

    @property
    def capacity_per_s(self) -> float:
        """Prompts per second of one instance with every pass full."""
        return _ranks(self.layout) * float(self.prompts[-1]) / float(self.pass_s[-1])

    def at(self, rates: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(queue s, pass s, prompts per rank) at per-instance ``rates`` (below capacity): b = clip(rate * t(b) /
        ranks, 1, b_max) by fixed-point iteration; queue = rho * t / 2 + rho * S / (2 (1 - rho))."""
        ranks, b_max = _ranks(self.layout), float(self.prompts[-1])
        b = np.ones_like(rates)
        for _ in range(FIXED_POINT_STEPS):
            b = np.clip(rates * np.interp(b, self.prompts, self.pass_s) / ranks, 1.0, b_max)
        t = np.interp(b, self.prompts, self.pass_s)
        rho = rates * t / (ranks * b)
        with np.errstate(divide="ignore", invalid="ignore"):
            queue = np.where(rho < 1.0, rho * t / 2.0 + rho * t / (ranks * b) / (2.0 * (1.0 - rho)), np.inf)
        return queue, t, b


def _decode_curve(scenario, layout, mix, options, estimate_name, fabric, per_node) -> _DecodeCurve | None:
    limit = _max_requests(scenario, layout, mix.prompt_tokens + mix.output_tokens, options, fabric, per_node)
    cap = DEEPEP_LL_MAX_TOKENS_PER_RANK if layout.kind == "ep" else options.max_num_seqs or DEFAULT_MAX_NUM_SEQS
    limit = min(limit, cap)
    if limit < 1:
        return None
    requests = np.unique(np.round(np.geomspace(1, limit, DECODE_GRID_POINTS)))
    step = _pass_s(scenario, layout, "decode", requests, mix.mean_context_tokens, float(mix.prompt_tokens),
                   estimate_name, fabric, per_node)
    return _DecodeCurve(layout=layout, requests=requests, step_s=np.asarray(step, dtype=float))


def _prefill_curve(scenario, layout, mix, options, estimate_name, fabric, per_node) -> _PrefillCurve | None:
    P = mix.prompt_tokens
    b_max = max(1, options.max_num_batched_tokens // P)
    b_max = min(b_max, _max_requests(scenario, layout, P, options, fabric, per_node))
    if b_max < 1:
        return None
    prompts = np.arange(1, b_max + 1, dtype=float)
    t = np.asarray(_pass_s(scenario, layout, "prefill", prompts, 0.0, float(P), estimate_name, fabric, per_node),
                   dtype=float)
    return _PrefillCurve(layout=layout, prompts=prompts, pass_s=t)


def _decode_pool(curve: _DecodeCurve, mix: ServingMix, rate: float, itl_s: float) -> PoolPlan | None:
    good = curve.step_s <= itl_s
    if not good.any():
        return None
    ranks = _ranks(curve.layout)
    capacities = ranks * curve.requests / (mix.output_tokens * curve.step_s)
    capacity = float(capacities[good].max())
    instances = math.ceil(rate / capacity - 1e-12)
    per_instance = rate / instances
    # the operating point: requests per rank where completions equal the instance's share of the rate
    requests = float(np.interp(per_instance, capacities, curve.requests))
    step = float(np.interp(requests, curve.requests, curve.step_s))
    return PoolPlan(phase="decode", layout=curve.layout, instances=instances, devices=instances * curve.layout.devices,
                    max_requests_per_s_per_instance=capacity, requests_per_rank=requests, step_time_s=step,
                    queue_s=0.0)


def _ttft(curve: _PrefillCurve, rates: np.ndarray, transfer_s: float, estimate_name: str
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    queue, t, b = curve.at(rates)
    ttft = queue + t + transfer_s if estimate_name == "expected" else queue + np.maximum(t, transfer_s)
    return ttft, queue, t, b


def _prefill_pool(curve: _PrefillCurve, rate: float, budget_s: float, transfer_s: float, estimate_name: str
                  ) -> tuple[PoolPlan, float] | None:
    """(pool, TTFT) with the fewest instances whose TTFT (with the transfer) meets ``budget_s``: the largest
    per-instance rate within it, on a geometric grid then bisected (TTFT grows with the rate)."""
    cap = curve.capacity_per_s
    grid = np.geomspace(cap * 1e-6, cap * (1.0 - 1e-9), PREFILL_RATE_POINTS)
    good = _ttft(curve, grid, transfer_s, estimate_name)[0] <= budget_s
    if not good[0]:
        return None
    last = int(np.nonzero(good)[0].max())
    lo = np.asarray([grid[last]])
    hi = np.asarray([grid[last + 1] if last + 1 < len(grid) else cap])
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        ok = _ttft(curve, mid, transfer_s, estimate_name)[0] <= budget_s
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    capacity = float(lo[0])
    instances = math.ceil(rate / capacity - 1e-12)
    ttft, queue, t, b = (float(v[0]) for v in _ttft(curve, np.asarray([rate / instances]), transfer_s,
                                                       estimate_name))
    pool = PoolPlan(phase="prefill", layout=curve.layout, instances=instances,
                    devices=instances * curve.layout.devices, max_requests_per_s_per_instance=capacity,
                    requests_per_rank=b, step_time_s=t, queue_s=queue)
    return pool, ttft


def _price(scenario: Scenario, options: ServingOptions) -> float | None:
    if options.price_usd_per_hour is not None:
        return options.price_usd_per_hour
    return scenario.hardware.price_usd_per_hour


def _power_w(scenario: Scenario, options: ServingOptions) -> float | None:
    if options.power_w is not None:
        return options.power_w
    hw = scenario.hardware
    return None if hw.tdp_w is None else hw.tdp_w / hw.devices_per_package


def search_disagg(scenario: Scenario, mix: ServingMix, rate_per_s: float, *, itl_s: float, ttft_s: float,
                  estimate_name: str = "expected", options: ServingOptions | None = None, ep: int | None = None,
                  attention: str = "dp", fabric: str | None = None, devices_per_node: int | None = None,
                  max_instance_devices: int | None = None, ep_imbalance: float | None = None,
                  redundant_experts: int | None = None) -> DisaggPlan | None:
    """The cheapest xPyD layout carrying ``rate_per_s`` within ``itl_s`` and ``ttft_s`` (None when no pair of
    layouts meets them; fewest devices where the device has no price)."""
    options = options or ServingOptions()
    if not rate_per_s > 0:
        raise ModelInputError("rate", f"must be > 0, got {rate_per_s!r}")
    if not (itl_s > 0 and ttft_s > 0):
        raise ModelInputError("targets", "disaggregated serving needs an ITL and a TTFT target")
    if options.speculation is not None:
        raise ModelInputError("speculation", "the disaggregated search does not model speculative decoding")
    layouts = candidate_layouts(scenario, ep=ep, attention=attention, max_instance_devices=max_instance_devices,
                                fabric=fabric, devices_per_node=devices_per_node, ep_imbalance=ep_imbalance,
                                redundant_experts=redundant_experts)
    args = (mix, options, estimate_name, fabric, devices_per_node)
    decode_pools = [pool for layout in layouts
                    if (curve := _decode_curve(scenario, layout, *args)) is not None
                    and (pool := _decode_pool(curve, mix, rate_per_s, itl_s)) is not None]
    prefill_curves = [curve for layout in layouts if (curve := _prefill_curve(scenario, layout, *args)) is not None]
    price, power = _price(scenario, options), _power_w(scenario, options)
    out_tokens_per_s = rate_per_s * mix.output_tokens
    best: DisaggPlan | None = None
    prefill_pools: dict[tuple[int, float], tuple[PoolPlan, float] | None] = {}  # the transfer takes few values
    for i, curve in enumerate(prefill_curves):
        for dpool in decode_pools:
            try:
                transfer = kv_transfer(scenario, curve.layout, dpool.layout, mix.prompt_tokens, estimate_name,
                                       fabric=fabric, devices_per_node=devices_per_node)
            except ModelInputError:
                continue
            key = (i, transfer.time_s)
            if key not in prefill_pools:
                prefill_pools[key] = _prefill_pool(curve, rate_per_s, ttft_s, transfer.time_s, estimate_name)
            found = prefill_pools[key]
            if found is None:
                continue
            ppool, ttft = found
            devices = ppool.devices + dpool.devices
            usd = None if price is None else price * devices
            if best is not None:
                key = (usd if usd is not None else devices, devices)
                best_key = (best.usd_per_hour if best.usd_per_hour is not None else best.devices, best.devices)
                if key >= best_key:
                    continue
            best = DisaggPlan(
                prefill=ppool, decode=dpool, transfer=transfer, ttft_s=ttft, itl_s=dpool.step_time_s,
                devices=devices, usd_per_hour=usd,
                usd_per_million_tokens=None if usd is None else usd / SECONDS_PER_HOUR / out_tokens_per_s * 1e6,
                joules_per_token=None if power is None else power * devices / out_tokens_per_s)
    return best


@dataclass(frozen=True, slots=True, kw_only=True)
class AggregatedPlan:
    """The best aggregated layout: ``replicas`` instances of ``layout`` (TP from the frontier's planner, or EP with
    prefill and decode in the same steps), at the rate split evenly."""

    layout: str
    kind: str
    size: int
    replicas: int
    devices: int
    usd_per_hour: float | None
    usd_per_million_tokens: float | None
    joules_per_token: float | None
    ttft_s: float
    itl_s: float


def _from_device_plan(found: DevicePlan) -> AggregatedPlan:
    point = found.point
    return AggregatedPlan(layout=f"TP{found.tp}", kind="tp", size=found.tp, replicas=found.replicas,
                          devices=found.devices, usd_per_hour=found.usd_per_hour,
                          usd_per_million_tokens=point.usd_per_million_tokens,
                          joules_per_token=point.joules_per_token, ttft_s=point.ttft_s, itl_s=point.itl_s)


def _aggregated_ep_step_s(scenario: Scenario, layout: PoolLayout, mix: ServingMix, requests: np.ndarray,
                          estimate_name: str, fabric: str | None, per_node: int | None) -> np.ndarray:
    """One continuous-batching step on one EP rank: ``requests`` decodes plus their steady share of prefill,
    requests * P / G prompt tokens (the frontier's mixed step, :func:`step.mixed_step_ops`), experts rewritten per
    rank, DeepEP's normal kernels (its low-latency kernels take no prefill: SGLang's DP attention runs normal
    dispatch when the two phases share a step, LMSYS blog 2025-05-05)."""
    from ..expert_parallel import (
        all_to_all,
        expert_ops_per_rank,
        moe_layer_count,
        rank_scenario,
        statistical_imbalance,
    )
    from .step import mixed_step_ops

    cfg = _ep(layout, fabric, per_node)
    s = rank_scenario(scenario, cfg)
    tp = s.parallelism.tp
    prompts = requests / mix.output_tokens
    ops = mixed_step_ops(s, decode_requests=requests * tp, context_tokens=mix.mean_context_tokens,
                         prefill_prompts=prompts * tp, prompt_tokens=float(mix.prompt_tokens))
    tokens = requests + prompts * mix.computed_prompt_tokens
    copies = tokens * scenario.model.moe.top_k
    if estimate_name == "bound":
        imbalance = np.ones_like(copies)
    elif cfg.imbalance is not None:
        imbalance = np.full_like(copies, cfg.imbalance)
    else:
        imbalance = statistical_imbalance(copies, cfg.ep)
    ops = expert_ops_per_rank(ops, s, cfg, tokens, imbalance)
    compute = np.asarray(pass_totals(ops, scenario_ceilings(s, estimate_name)).time_s, dtype=float)
    comm = moe_layer_count(s) * np.asarray(all_to_all(scenario, cfg, tokens * imbalance, "prefill",
                                                      estimate_name).layer_s, dtype=float)
    overlap = estimate_name == "bound" or cfg.two_batch_overlap
    return np.maximum(compute, comm) if overlap else compute + comm


def aggregated_ep(scenario: Scenario, mix: ServingMix, rate_per_s: float, *, itl_s: float, ttft_s: float,
                  estimate_name: str = "expected", options: ServingOptions | None = None, ep: int | None = None,
                  attention: str = "dp", fabric: str | None = None, devices_per_node: int | None = None,
                  max_instance_devices: int | None = None, ep_imbalance: float | None = None,
                  redundant_experts: int | None = None) -> AggregatedPlan | None:
    """The cheapest aggregated EP layout (prefill and decode in the same steps, attention data-parallel): per rank
    r decodes, a step time t(r) (= ITL), the prefill budget B per rank left beside them, B - r tokens, as an M/D/1
    server for the prompts (rho = (r P / G) / (B - r), service P / (B - r) steps), TTFT = half a step + the wait +
    ceil(P / (B - r)) steps; capacity ranks * r / (G t(r)) at the largest r meeting both targets."""
    options = options or ServingOptions()
    if scenario.model.moe is None:
        return None
    layouts = [layout for layout in candidate_layouts(
        scenario, ep=ep, attention=attention, max_instance_devices=max_instance_devices, fabric=fabric,
        devices_per_node=devices_per_node, ep_imbalance=ep_imbalance, redundant_experts=redundant_experts)
        if layout.kind == "ep"]
    P, G = mix.prompt_tokens, mix.output_tokens
    budget = float(options.max_num_batched_tokens)
    price, power = _price(scenario, options), _power_w(scenario, options)
    best: AggregatedPlan | None = None
    for layout in layouts:
        limit = min(_max_requests(scenario, layout, P + G, options, fabric, devices_per_node),
                    int(budget / (1.0 + mix.computed_prompt_tokens / G)))
        if limit < 1:
            continue
        r = np.unique(np.round(np.geomspace(1, limit, DECODE_GRID_POINTS)))
        t = _aggregated_ep_step_s(scenario, layout, mix, r, estimate_name, fabric, devices_per_node)
        leftover = np.maximum(budget - r, 1.0)
        steps = mix.computed_prompt_tokens / leftover
        rho = np.minimum(r / G * steps, 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            wait = np.where(rho < 1.0, rho * steps * t / (2.0 * (1.0 - rho)), np.inf)
        ttft = 0.5 * t + wait + np.ceil(steps - 1e-9) * t
        good = (t <= itl_s) & (ttft <= ttft_s)
        if not good.any():
            continue
        i = int(np.nonzero(good)[0].max())
        capacity = layout.size * float(r[i]) / (G * float(t[i]))
        replicas = math.ceil(rate_per_s / capacity - 1e-12)
        devices = replicas * layout.devices
        usd = None if price is None else price * devices
        out_per_s = rate_per_s * G
        candidate = AggregatedPlan(
            layout=layout.label, kind="ep", size=layout.size, replicas=replicas, devices=devices, usd_per_hour=usd,
            usd_per_million_tokens=None if usd is None else usd / SECONDS_PER_HOUR / out_per_s * 1e6,
            joules_per_token=None if power is None else power * devices / out_per_s,
            ttft_s=float(ttft[i]), itl_s=float(t[i]))
        if best is None or _cost_key(candidate) < _cost_key(best):
            best = candidate
    return best


def _cost_key(plan) -> tuple[float, int]:
    return (plan.usd_per_hour if plan.usd_per_hour is not None else plan.devices, plan.devices)


def compare_with_aggregated(scenario: Scenario, mix: ServingMix, rate_per_s: float, *, itl_s: float, ttft_s: float,
                            estimate_name: str = "expected", options: ServingOptions | None = None,
                            **disagg_options) -> Comparison:
    """The best aggregated layout (the continuous-batching frontier's TP x replicas, or for MoE models an EP
    layout with prefill and decode in the same steps, whichever costs less) beside the best disaggregated one, for
    the same rate and targets."""
    options = options or ServingOptions()
    candidates: list[AggregatedPlan] = []
    if disagg_options.get("ep") is None:
        found = devices_for_rate(scenario, mix, rate_per_s, itl_s=itl_s, ttft_s=ttft_s,
                                 estimate_name=estimate_name, options=options)
        if found is not None:
            candidates.append(_from_device_plan(found))
    ep_plan = aggregated_ep(scenario, mix, rate_per_s, itl_s=itl_s, ttft_s=ttft_s, estimate_name=estimate_name,
                            options=options, **disagg_options)
    if ep_plan is not None:
        candidates.append(ep_plan)
    aggregated = min(candidates, key=_cost_key) if candidates else None
    disaggregated = search_disagg(scenario, mix, rate_per_s, itl_s=itl_s, ttft_s=ttft_s,
                                  estimate_name=estimate_name, options=options, **disagg_options)
    if aggregated is None or disaggregated is None:
        ratio = None
        winner = None if aggregated is None and disaggregated is None else (
            "aggregated" if disaggregated is None else "disaggregated")
    else:
        ratio = aggregated.devices / disaggregated.devices
        a_cost, d_cost = _cost_key(aggregated)[0], _cost_key(disaggregated)[0]
        winner = "tie" if math.isclose(a_cost, d_cost) else ("disaggregated" if d_cost < a_cost else "aggregated")
    return Comparison(aggregated=aggregated, disaggregated=disaggregated, tokens_per_device_ratio=ratio,
                      winner=winner)
