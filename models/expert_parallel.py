"""Wide expert parallelism: routed experts spread over ``ep`` ranks, attention data-parallel (or TP inside a node).

The layout (SGLang ``--enable-dp-attention --ep N``, vLLM ``--data-parallel-size N --enable-expert-parallel``,
DeepSeek's inference system: EP32 prefill, EP144 decode):

- **Experts**: each rank holds (E + r) / ep expert slots (r redundant slots: EPLB's copies of hot experts,
  deepseek-ai/EPLB; DeepSeek-V3 report section 3.4 ran 32 redundant experts in prefill). A MoE layer on one rank
  computes the copies routed to its experts: T_global * k / ep on average, times the load imbalance below.
- **Attention**: ``dp``: every rank holds the whole attention block and its own requests' KV; ``tp``: attention is
  tensor-parallel inside one scale-up domain (min(ep, devices per node) ranks) and data-parallel across domains
  (SGLang ``--tp ep --dp ep/node``). Dense layers, the shared expert, embedding and LM head run on each rank's own
  tokens.
- **All-to-all per MoE layer**: *dispatch* sends each token's hidden state (FP8 with one fp32 scale per 128
  channels: 1 + 4/128 bytes per element) to the ranks holding its k experts; *combine* returns BF16 (2 bytes).
  A token touches a given rank with p = 1 - C(E - E/ep, k) / C(E, k) (k distinct experts, uniform routing), a given
  node of n ranks with 1 - C(E - E*n/ep, k) / C(E, k).

  ``bound`` (a ceiling): the fewest bytes (each token once per remote rank inside the node, once per remote node
  over the NIC, forwarded over NVLink inside), at spec bandwidth, no latency, overlapped with compute (two
  micro-batches): step = max(compute, communication).

  ``expected``: DeepEP's kernels as its README reports them (deepseek-ai/DeepEP docs/legacy.md, H800, CX7
  400 Gb/s; logical bytes include local-rank traffic):

  - prefill, *normal* kernels (NVLink and RDMA forwarding, 4,096 tokens): internode bottleneck RDMA bandwidth
    43/58/51 GB/s dispatch and 43/57/50 GB/s combine at EP 16/32/64, logical bytes = tokens x nodes touched
    (own node included) x H x bytes; intranode 153 / 158 GB/s at EP 8 on NVLink (H800: 200 GB/s one way);
  - decode, *low-latency* kernels (pure RDMA, every (token, expert) copy sent, 128 tokens per rank): dispatch
    77/118/155/173/192/194 us and combine 114/195/273/314/369/360 us at EP 8/16/32/64/128/256. The time at T
    tokens is one network hop (topology.SCALE_OUT_LATENCY_S) plus the bytes at the bandwidth that reproduces the
    measured 128-token time, so DeepEP's own point comes back exactly;
  - NICs faster or slower than 400 Gb/s scale the measured bandwidths by their line rate; a rack-scale NVLink
    domain (NVL72) or a group inside one node runs both kernels over NVLink at DeepEP's intranode share
    (153/200) plus the NVLink latency;
  - two-batch overlap (DeepSeek's inference system, deepseek-ai/profile-data; SGLang's TBO) hides the all-to-all
    under the other micro-batch's compute: step = max(compute, communication) when on, their sum when off.
- **Load imbalance** (max over mean tokens per rank): routing is random per batch, so even a perfect EPLB
  placement leaves the busiest of ep ranks above the mean; with m copies per rank on average the maximum of ep
  such counts is about m + sqrt(2 m ln ep) (balls into bins, Raab and Steger 1998), a factor
  1 + sqrt(2 ln(ep) / m). ``expected`` charges it (the SGLang large-scale EP write-up: "larger batches reduce random
  fluctuations in expert usage"; LMSYS blog 2025-05-05); popularity skew beyond it is a stated ``imbalance``
  factor (no public figure per model is used as a default); ``bound`` assumes perfect balance.
- **Memory per rank**: non-expert weights / attention TP + the replicated pieces, expert weights x (E + r) / (E ep),
  the rank's own requests' KV.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .dtypes import weight_bytes_per_param
from .errors import ModelInputError
from .estimate import pass_totals, scenario_ceilings
from .memory import (
    RUNTIME_RESERVE_BYTES_PER_DEVICE,
    activation_bytes_per_device,
    kv_cache_bytes_per_sequence_per_device,
    tp_replicated_weight_bytes_per_device,
    weight_bytes_total,
)
from .ops import Op, build_ops, expected_distinct_experts
from .scenario import Parallelism, Scenario
from .topology import NVLINK_LATENCY_S, SCALE_OUT_LATENCY_S, Cluster, Link, cluster_for

ATTENTION_MODES = ("dp", "tp")
MAX_EP = 4096
DISPATCH_BYTES_PER_ELEMENT = 1.0 + 4.0 / 128.0  # FP8 values and one fp32 scale per 128 channels (DeepEP FP8 dispatch)
COMBINE_BYTES_PER_ELEMENT = 2.0  # BF16 combine

# DeepEP V1 measurements (deepseek-ai/DeepEP docs/legacy.md), H800 with one ConnectX-7 400 Gb/s NIC per GPU.
DEEPEP_NIC_BYTES_PER_S = 50e9
DEEPEP_H800_NVLINK_BYTES_PER_S = 200e9  # H800: 400 GB/s NVLink both ways
DEEPEP_NORMAL_INTERNODE_BYTES_PER_S = {  # ep -> (dispatch, combine) logical RDMA bandwidth, 4,096 tokens
    16: (43e9, 43e9), 32: (58e9, 57e9), 64: (51e9, 50e9)}
DEEPEP_NORMAL_INTRANODE_BYTES_PER_S = (153e9, 158e9)  # EP 8 over NVLink
DEEPEP_LL_TOKENS = 128
DEEPEP_LL_S = {  # ep -> (dispatch s, combine s) for 128 tokens per rank, 7168 hidden, top 8
    8: (77e-6, 114e-6), 16: (118e-6, 195e-6), 32: (155e-6, 273e-6), 64: (173e-6, 314e-6),
    128: (192e-6, 369e-6), 256: (194e-6, 360e-6)}
DEEPEP_LL_HIDDEN, DEEPEP_LL_TOP_K = 7168, 8
NVLINK_SHARE = DEEPEP_NORMAL_INTRANODE_BYTES_PER_S[0] / DEEPEP_H800_NVLINK_BYTES_PER_S  # 0.765


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpertParallel:
    """``ep`` ranks for the routed experts; attention ``dp`` or ``tp`` (inside a node); ``redundant_experts``
    extra expert slots over all ranks; ``imbalance`` a stated max/mean load factor (None: the statistical one);
    ``two_batch_overlap`` hides the all-to-all under compute in ``expected``; ``fabric`` / ``devices_per_node``
    override the preset's (topology.cluster_for)."""

    ep: int
    attention: str = "dp"
    redundant_experts: int = 0
    imbalance: float | None = None
    two_batch_overlap: bool = True
    fabric: str | None = None
    devices_per_node: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.ep, bool) or not isinstance(self.ep, int) or not 1 <= self.ep <= MAX_EP:
            raise ModelInputError("ep", f"must be a whole number from 1 to {MAX_EP}, got {self.ep!r}")
        if self.attention not in ATTENTION_MODES:
            raise ModelInputError("attention", f"must be one of {', '.join(ATTENTION_MODES)}, got {self.attention!r}")
        if (isinstance(self.redundant_experts, bool) or not isinstance(self.redundant_experts, int)
                or self.redundant_experts < 0):
            raise ModelInputError("redundant_experts", f"must be a whole number >= 0, got {self.redundant_experts!r}")
        if self.imbalance is not None and not (math.isfinite(self.imbalance) and 1.0 <= self.imbalance <= 100.0):
            raise ModelInputError("ep_imbalance", f"must be a factor from 1 to 100, got {self.imbalance!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class AllToAll:
    """One MoE layer's dispatch and combine on one rank (seconds, bytes per rank), and the link that carries it."""

    mode: str  # "normal" (prefill) or "low-latency" (decode)
    tokens_per_rank: float
    dispatch_bytes: float  # bytes this rank sends (the estimate's accounting: minimal for bound, DeepEP's logical)
    combine_bytes: float
    scale_out_bytes: float  # of dispatch + combine, over the NIC (0 inside one scale-up domain)
    dispatch_s: float
    combine_s: float
    link: Link

    @property
    def layer_s(self) -> float:
        return self.dispatch_s + self.combine_s


@dataclass(frozen=True, slots=True, kw_only=True)
class EpPass:
    """One pass on one rank: compute (the ops), the all-to-all of every MoE layer, and the step they make."""

    compute_s: float
    all_to_all_s: float
    time_s: float
    moe_layers: int
    all_to_all: AllToAll | None
    imbalance: float


@dataclass(frozen=True, slots=True, kw_only=True)
class EpMemory:
    weights_bytes: float
    expert_weights_bytes: float
    kv_bytes_per_request: float
    fixed_bytes: float  # weights + runtime reserve + activation workspace
    capacity_bytes: float
    max_requests: int


def _check_model(scenario: Scenario, cfg: ExpertParallel) -> None:
    moe = scenario.model.moe
    if moe is None:
        raise ModelInputError("ep", f"{scenario.model.id} has no routed experts; expert parallelism needs a MoE model")
    slots = moe.num_experts + cfg.redundant_experts
    if cfg.ep > slots:
        raise ModelInputError("ep", f"{cfg.ep} ranks for {slots} expert slots ({moe.num_experts} experts + "
                              f"{cfg.redundant_experts} redundant): at least one expert per rank")


def cluster_of(scenario: Scenario, cfg: ExpertParallel) -> Cluster:
    return cluster_for(scenario.hardware, fabric=cfg.fabric, devices_per_node=cfg.devices_per_node)


def attention_tp(scenario: Scenario, cfg: ExpertParallel) -> int:
    """Attention TP degree: 1 under ``dp``; min(ep, devices per node) under ``tp``."""
    if cfg.attention == "dp":
        return 1
    return max(1, min(cfg.ep, cluster_of(scenario, cfg).devices_per_node))


def rank_scenario(scenario: Scenario, cfg: ExpertParallel) -> Scenario:
    """The scenario of one rank's non-expert work: attention at its TP degree (ModelInputError when it does not
    divide the heads)."""
    _check_model(scenario, cfg)
    return replace(scenario, parallelism=Parallelism(tp=attention_tp(scenario, cfg), pp=1))


def _rank_hit_probability(num_experts: int, top_k: int, experts_in_group: float) -> float:
    """1 - C(E - x, k) / C(E, k): a token's k distinct experts include one of the group's x experts."""
    miss = 1.0
    for i in range(top_k):
        miss *= max(num_experts - experts_in_group - i, 0.0) / (num_experts - i)
    return 1.0 - miss


def statistical_imbalance(copies_per_rank, ep: int):
    """1 + sqrt(2 ln(ep) / m): the busiest of ep ranks over the mean m copies (balls into bins); 1 for one rank
    (arrays of m evaluate elementwise)."""
    m = np.asarray(copies_per_rank, dtype=float)
    if ep <= 1:
        return np.ones_like(m)
    return 1.0 + np.sqrt(2.0 * math.log(ep) / np.maximum(m, 1e-30))


def _nearest_at_or_below(table: dict[int, tuple[float, float]], ep: int) -> tuple[float, float]:
    keys = sorted(table)
    below = [k for k in keys if k <= ep]
    return table[below[-1] if below else keys[0]]


def all_to_all(scenario: Scenario, cfg: ExpertParallel, tokens_per_rank: float, phase: str, estimate_name: str
               ) -> AllToAll:
    """Dispatch and combine of one MoE layer for ``tokens_per_rank`` tokens on each rank (see the module text)."""
    _check_model(scenario, cfg)
    moe, H = scenario.model.moe, scenario.model.hidden_size
    E, k, ep = moe.num_experts, moe.top_k, cfg.ep
    cluster = cluster_of(scenario, cfg)
    link = cluster.link_for_group(ep)
    inside = ep <= cluster.devices_per_node
    node = min(ep, cluster.devices_per_node)
    nodes = cluster.nodes_for(ep)
    mode = "low-latency" if phase == "decode" else "normal"
    T = np.asarray(tokens_per_rank, dtype=float)
    p_rank = _rank_hit_probability(E, k, E / ep)
    p_node = _rank_hit_probability(E, k, E * node / ep)
    d_b, c_b = DISPATCH_BYTES_PER_ELEMENT, COMBINE_BYTES_PER_ELEMENT
    if ep <= 1:
        return AllToAll(mode=mode, tokens_per_rank=T, dispatch_bytes=0.0, combine_bytes=0.0, scale_out_bytes=0.0,
                        dispatch_s=0.0, combine_s=0.0, link=link)
    up_bw = cluster.scale_up.bw_unidirectional_bytes_per_s
    if estimate_name == "bound":
        intra_copies = T * (node - 1) * p_rank  # to the other ranks of this node, once each
        remote_copies = T * (nodes - 1) * p_node  # once per remote node, forwarded inside it
        times = []
        for b in (d_b, c_b):
            nic_s = 0.0 if inside else remote_copies * H * b / link.bw_unidirectional_bytes_per_s
            nv_s = intra_copies * H * b / up_bw  # the direct copies only: forwarding adds bytes, a ceiling omits them
            times.append(np.maximum(nic_s, nv_s))
        return AllToAll(mode=mode, tokens_per_rank=T, dispatch_bytes=(intra_copies + remote_copies) * H * d_b,
                        combine_bytes=(intra_copies + remote_copies) * H * c_b,
                        scale_out_bytes=0.0 if inside else remote_copies * H * (d_b + c_b),
                        dispatch_s=times[0], combine_s=times[1], link=link)
    if estimate_name != "expected":
        raise ValueError(f"estimate must be bound or expected, not {estimate_name!r}")
    if inside:
        # one NVLink domain (a node, an NVL72 rack): DeepEP's intranode share of the one-way figure
        copies = T * (k if mode == "low-latency" else ep * p_rank)
        bw = up_bw * NVLINK_SHARE
        return AllToAll(mode=mode, tokens_per_rank=T, dispatch_bytes=copies * H * d_b, combine_bytes=copies * H * c_b,
                        scale_out_bytes=0.0, dispatch_s=NVLINK_LATENCY_S + copies * H * d_b / bw,
                        combine_s=NVLINK_LATENCY_S + copies * H * c_b / bw, link=link)
    nic_scale = link.bw_unidirectional_bytes_per_s / DEEPEP_NIC_BYTES_PER_S
    if mode == "normal":
        copies = T * nodes * p_node  # token x nodes touched, own node included (DeepEP's logical RDMA bytes)
        bw_d, bw_c = _nearest_at_or_below(DEEPEP_NORMAL_INTERNODE_BYTES_PER_S, ep)
        return AllToAll(mode=mode, tokens_per_rank=T, dispatch_bytes=copies * H * d_b, combine_bytes=copies * H * c_b,
                        scale_out_bytes=T * (nodes - 1) * p_node * H * (d_b + c_b),
                        dispatch_s=link.latency_s + copies * H * d_b / (bw_d * nic_scale),
                        combine_s=link.latency_s + copies * H * c_b / (bw_c * nic_scale), link=link)
    copies = T * k  # every (token, expert) copy, pure RDMA
    t_d, t_c = _nearest_at_or_below(DEEPEP_LL_S, ep)
    measured = DEEPEP_LL_TOKENS * DEEPEP_LL_TOP_K * DEEPEP_LL_HIDDEN  # elements DeepEP moved per rank
    bw_d = measured * d_b / (t_d - SCALE_OUT_LATENCY_S) * nic_scale
    bw_c = measured * c_b / (t_c - SCALE_OUT_LATENCY_S) * nic_scale
    return AllToAll(mode=mode, tokens_per_rank=T, dispatch_bytes=copies * H * d_b, combine_bytes=copies * H * c_b,
                    scale_out_bytes=copies * (nodes - 1) / nodes * H * (d_b + c_b),
                    dispatch_s=SCALE_OUT_LATENCY_S + copies * H * d_b / bw_d,
                    combine_s=SCALE_OUT_LATENCY_S + copies * H * c_b / bw_c, link=link)


_EXPERT_OPS = ("experts gate_up", "experts activation", "experts down")


def expert_ops_per_rank(ops: list[Op], scenario: Scenario, cfg: ExpertParallel, tokens_per_rank: float,
                         imbalance: float) -> list[Op]:
    """The routed-expert ops rewritten for one EP rank: copies = T_rank * k * imbalance (T_global = T_rank * ep),
    weights of the distinct local experts touched, E_local = (E + r) / ep slots, no TP split of the experts."""
    moe, H = scenario.model.moe, scenario.model.hidden_size
    width = moe.expert_intermediate_size
    copies = tokens_per_rank * moe.top_k * imbalance
    global_tokens = tokens_per_rank * cfg.ep
    local_slots = (moe.num_experts + cfg.redundant_experts) / cfg.ep
    distinct = np.minimum(expected_distinct_experts(moe.num_experts, moe.top_k, global_tokens) / cfg.ep
                          * (moe.num_experts + cfg.redundant_experts) / moe.num_experts, local_slots)
    b_we = weight_bytes_per_param(scenario.precisions.expert_weights_or_weights)
    out = []
    found = set()
    for op in ops:
        if op.name not in _EXPERT_OPS:
            out.append(op)
            continue
        found.add(op.name)
        if op.name == "experts activation":
            # built over T_group * k copies of width / tp = T_rank * k * width elements: only the imbalance changes
            out.append(replace(op, flops=op.flops * imbalance, activation_bytes=op.activation_bytes * imbalance))
            continue
        n = 2 * width if op.name == "experts gate_up" else width
        in_width, out_width = (H, n) if op.name == "experts gate_up" else (n, H)
        out.append(replace(
            op, flops=2.0 * copies * H * n, weight_bytes=distinct * H * n * b_we,
            activation_bytes=copies * (in_width * DISPATCH_BYTES_PER_ELEMENT + out_width * COMBINE_BYTES_PER_ELEMENT)))
    if "experts gate_up" not in found:
        raise ModelInputError("ep", f"{scenario.model.id}: no routed-expert ops to spread over ranks")
    return out


def moe_layer_count(scenario: Scenario) -> int:
    return sum(group.count for group in scenario.model.layer_groups if group.moe)


def ep_pass(scenario: Scenario, cfg: ExpertParallel, phase: str, *, requests_per_rank: float,
            context_tokens: float = 0.0, prompt_tokens: float | None = None, estimate_name: str = "expected"
            ) -> EpPass:
    """One pass on one EP rank: ``requests_per_rank`` decodes at ``context_tokens`` (``phase`` decode) or prompts of
    ``prompt_tokens`` (prefill), attention as ``cfg.attention`` says; compute ops, all-to-all, their step. Arrays of
    ``requests_per_rank`` evaluate elementwise."""
    s = rank_scenario(scenario, cfg)
    tp = s.parallelism.tp
    prompt = scenario.batching.prompt_tokens if prompt_tokens is None else prompt_tokens
    group_requests = requests_per_rank * tp  # an attention-TP group serves tp ranks' requests
    ops = build_ops(s, phase, batch=group_requests, context=context_tokens, prompt=prompt)
    tokens_per_rank = requests_per_rank * (1.0 if phase == "decode" else prompt)
    copies_per_rank = tokens_per_rank * scenario.model.moe.top_k
    if estimate_name == "bound":
        imbalance = np.ones_like(np.asarray(copies_per_rank, dtype=float))
    elif cfg.imbalance is not None:
        imbalance = np.full_like(np.asarray(copies_per_rank, dtype=float), cfg.imbalance)
    else:
        imbalance = statistical_imbalance(copies_per_rank, cfg.ep)
    ops = expert_ops_per_rank(ops, s, cfg, tokens_per_rank, imbalance)
    compute_s = np.asarray(pass_totals(ops, scenario_ceilings(s, estimate_name)).time_s, dtype=float)
    layers = moe_layer_count(s)
    a2a = all_to_all(scenario, cfg, tokens_per_rank * imbalance, phase, estimate_name) if cfg.ep > 1 else None
    comm_s = 0.0 if a2a is None else layers * a2a.layer_s
    overlap = estimate_name == "bound" or cfg.two_batch_overlap
    time_s = np.maximum(compute_s, comm_s) if overlap else compute_s + comm_s
    return EpPass(compute_s=compute_s, all_to_all_s=comm_s, time_s=time_s, moe_layers=layers, all_to_all=a2a,
                  imbalance=imbalance)


def ep_memory(scenario: Scenario, cfg: ExpertParallel, *, tokens_per_request: int,
              gpu_memory_utilization: float = 0.9, prefill_batch: int = 1) -> EpMemory:
    """Bytes per rank: non-expert weights / attention TP (plus what every TP rank keeps whole), expert weights x
    (E + r) / (E x ep), runtime reserve, one pass's activations; KV per request at ``tokens_per_request``; the most
    requests a rank holds under ``gpu_memory_utilization`` (vLLM/SGLang's memory fraction)."""
    s = rank_scenario(scenario, cfg)
    m = s.model
    expert_total = m.routed_expert_params_total() * weight_bytes_per_param(s.precisions.expert_weights_or_weights)
    non_expert = weight_bytes_total(s) - expert_total
    tp = s.parallelism.tp
    expert_rank = expert_total * (m.moe.num_experts + cfg.redundant_experts) / (m.moe.num_experts * cfg.ep)
    weights = non_expert / tp + tp_replicated_weight_bytes_per_device(s) + expert_rank
    # an attention-TP group of tp ranks keeps tp ranks' requests, each split (GQA heads) or replicated (MLA's latent)
    # over the group: per request of this rank, tp x the per-device bytes of one sequence
    kv = tp * kv_cache_bytes_per_sequence_per_device(s, tokens_per_request)
    fixed = weights + RUNTIME_RESERVE_BYTES_PER_DEVICE + activation_bytes_per_device(s, prefill_batch)
    capacity = s.hardware.memory_capacity_bytes
    free = capacity * gpu_memory_utilization - fixed
    max_requests = 0 if free <= 0 or kv <= 0 else int(free // kv)
    return EpMemory(weights_bytes=weights, expert_weights_bytes=expert_rank, kv_bytes_per_request=kv,
                    fixed_bytes=fixed, capacity_bytes=capacity, max_requests=max_requests)
