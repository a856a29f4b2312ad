"""Roofline timing of ops and phases: the ``bound`` and ``expected`` estimates.

Per op: time = max(compute, memory) + (1 - overlap) * min(compute, memory) + fixed cost, with
compute = FLOPs / peak and memory = bytes / bandwidth (a collective: link bytes / link bandwidth
+ latency). Ops run one after another, so a pass takes the sum over ops of count * time.

- ``bound``: spec-sheet peaks, perfect overlap (the roofline's max), no fixed costs. No kernel beats its
  own roofline time, but the sum assumes the ops listed by :mod:`ops`: norms, RoPE, residual adds and SwiGLU
  as separate memory-bound kernels, collectives after the compute they follow. A stack that fuses those
  element-wise ops into its GEMMs, or overlaps all-reduces with compute, can finish a pass faster: up to about
  12 % of an 8B prefill on an H100 (1.8 ms of element-wise kernels in a 16.9 ms TTFT), more where all-reduce
  is a large share (TP 8 prefill). None of the 84 published measurements in the validation set beat it.
- ``expected``: measured ceilings where published (the hardware preset's achievable
  fractions), else the defaults below; FlashAttention below GEMM efficiency; compute and memory
  that do not overlap within a kernel; a fixed cost per kernel and per collective.
  :func:`expected_assumptions` lists every parameter with its source.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import numpy as np

from . import engines, kernels
from .dtypes import GGUF_INTEGER_FORMATS, WEIGHT_BITS_PER_ELEMENT
from .engines import DEFAULT_ENGINE, engine_profile
from .errors import ModelInputError
from .hardware import PEAK_FALLBACK_ORDER, Hardware
from .ops import Number, Op
from .scenario import Scenario
from .topology import ring_bottleneck

# achievable-ceilings.md: "Where only the spec is known, use ~85-90% (bandwidth) and ~75-80%
# (NVIDIA matmul) as generic factors." The midpoints:
DEFAULT_MEM_BW_FRACTION = 0.875
DEFAULT_MATMUL_FRACTION = 0.775
# Fused attention (FlashAttention) runs below the device's GEMM rate: FlashAttention-2 reaches
# "50-73% of the theoretical maximum FLOPs/s on A100" (Dao 2023, arXiv:2307.08691, abstract), a
# midpoint of 61.5% against the A100's measured GEMM rate of 86.9% (MAMF, achievable-ceilings.md):
# 0.615 / 0.869 = 0.71. On H100, FlashAttention-3 reaches 75% of peak against GEMM's 80% (0.93),
# FlashAttention-2 35% (0.44) (Shah et al. 2024, arXiv:2407.08608). Relative to the achievable
# GEMM rate so that a device's own measured fraction carries over.
ATTENTION_KERNEL_EFFICIENCY = 0.7
# How much of the smaller of an op's compute and memory times hides under the larger. The roofline
# (Williams, Waterman, Patterson, CACM 2009) assumes complete overlap (1.0, the max); ``expected``
# assumes none (the times add). Reasoning: near the ridge a real GEMM saturates neither roof at once
# (pipeline fill and drain per tile, tile and wave quantisation: NVIDIA "Matrix Multiplication
# Background" user's guide); far from it the smaller term is negligible either way, so decode at
# small batch and long prefills barely move. Evidence: with no overlap, expected lands within 5% of
# the TensorRT-LLM batch-1 time to first token on A100 and L40S at 128 and 2048-token prompts
# (measured-dev TR-24..29), where full overlap was 17-38% optimistic.
EXPECTED_COMPUTE_MEMORY_OVERLAP = 0.0
# nccl-tests ring all-reduce bus bandwidth on 8x H100 NVLink, about 365-370 of 450 GB/s per
# direction (NVIDIA/nccl-tests#212).
DEFAULT_LINK_BW_FRACTION = 0.8
# Fixed cost per kernel: by the engine's runtime mode on the device's platform (kernels.LAUNCH_COST_S, each with its
# source); the default, graph-captured on CUDA, is 4 us (NVIDIA "Getting Started with CUDA Graphs": 3.4-3.8 us per
# short kernel; 4 us also closes gpt-fast's Llama-2-7B A100 decode, measured-dev GF-01).
DEFAULT_KERNEL_OVERHEAD_S = kernels.LAUNCH_COST_S[("graph", "cuda")][0]
# Small-message all-reduce latency: vLLM/SGLang custom all-reduce on H100 NVLink, 4-12 us at
# TP2-8 (sgl-project/sglang#2904); NCCL over PCIe on 8x RTX 4090, about 42 us (NVIDIA/nccl#1530).
DEFAULT_NVLINK_COLLECTIVE_LATENCY_S = 8e-6
DEFAULT_PCIE_COLLECTIVE_LATENCY_S = 40e-6

# Weight-only quantised GEMMs dequantise in the kernel and stream their (fewer) bytes more
# slowly than 16-bit weights: gpt-fast's A100 Llama-2-7B figures (README, measured-dev
# GF-01..03) give effective weight bandwidth 1397 GB/s at bf16, 1069 GB/s at int8 (0.765 of it)
# and 863 GB/s at int4 (0.617). Applied to every format that is not a native operand of the
# kernel: 8-bit and wider at 0.765, narrower at 0.617 (the generic engine; engines.py names the
# engines and formats whose kernels do otherwise).
WEIGHT_ONLY_STREAM_EFFICIENCY_8BIT = engines.WEIGHT_ONLY_STREAM_EFFICIENCY_8BIT
WEIGHT_ONLY_STREAM_EFFICIENCY_4BIT = engines.WEIGHT_ONLY_STREAM_EFFICIENCY_4BIT

ESTIMATES = ("bound", "expected")


def weight_only_efficiency(weight_dtype: str, compute_dtype: str, engine: str = DEFAULT_ENGINE) -> float:
    """Streaming efficiency of a GEMM whose weights are stored as ``weight_dtype``, under ``engine``.

    Generic: 1.0 when the weights are a native operand of the kernel (16/32-bit, or the compute dtype
    itself); otherwise the weight-only rate for 8-bit or narrower formats. An engine replaces that per
    format family and scales it by its decode GEMV bandwidth share (:class:`engines.Engine`).
    """
    return engine_profile(engine).weight_stream_efficiency(weight_dtype, compute_dtype)


@dataclass(frozen=True, slots=True, kw_only=True)
class Ceilings:
    """The rates one estimate runs ops at, per device."""

    name: str
    compute_dtype: str
    matmul_flops_per_s: float
    vector_flops_per_s: float
    mem_bw_bytes_per_s: float
    link_bw_bytes_per_s: float
    kernel_overhead_s: float
    collective_latency_s: float
    # fused attention kernels' rate (FLOP/s); None: the matmul rate
    attention_flops_per_s: float | None = None
    # bound only: GEMMs over GGUF integer weights may run as int8 (llama.cpp MMQ); None: the matmul
    # rate. ``expected`` keeps the compute dtype's rate: MMQ reaches 20-25 % of the int8 peak
    # (RTX 4090, Llama-3-8B q4_0 pp512 10,358 tok/s, about 160 TFLOP/s: ggml-org/llama.cpp#7676),
    # which is close to the FP32-accumulate bf16 rate the compute dtype gives.
    integer_gemm_flops_per_s: float | None = None
    # share of min(compute, memory) that hides under the larger term: 1.0 = the roofline's max
    compute_memory_overlap: float = 1.0
    # weight dtype -> streaming efficiency of its GEMMs (1.0 where absent)
    weight_stream_efficiency: dict[str, float] = field(default_factory=dict)
    spec_matmul_flops_per_s: float
    spec_mem_bw_bytes_per_s: float
    # the engine profile and TP ring these rates were built for (engines.py, topology.py)
    engine: str = DEFAULT_ENGINE
    # decode attention reads each KV head once per query head of its GQA group (early TensorRT-LLM)
    kv_reads_per_query_head: bool = False
    # the ring's slowest link kind ("" when the preset's own figure is used, as before topologies)
    link_kind: str = ""
    # GEMM rate per compute dtype, for ops that compute in another dtype than ``compute_dtype`` (per-module
    # precision: a 16-bit attention block beside fp8 MLPs, W4A4 experts); built like ``matmul_flops_per_s``
    matmul_flops_per_s_by_dtype: dict[str, float] = field(default_factory=dict)
    # extra bytes per weight of a GEMM over GGUF weights and more than engines.MMQ_MAX_BATCH_TOKENS tokens: the F16
    # copy the engine dequantises into first (0.0: the kernel reads the quantised weights itself)
    gguf_prompt_copy_bytes_per_weight: float = 0.0
    # how kernels are launched (kernels.py): the runtime mode ("" under bound: kernel_overhead_s 0, no fixed costs), the
    # kernel set it launches ("unknown": the geometric middle of the modes), and for "unknown" the largest cost
    runtime_mode: str = "graph"
    kernel_set: str = "fused"
    kernel_overhead_high_s: float = 0.0
    # ``expected`` only: the engine evaluates a prompt in micro-batches of this many tokens (llama.cpp's n_ubatch), so
    # each prefill weight GEMM streams its weights once per micro-batch (:func:`micro_batches`); None: one pass
    prefill_chunk_tokens: int | None = None

    @property
    def ridge_flops_per_byte(self) -> float:
        """The roofline's ridge under these ceilings: matmul peak / bandwidth (FLOP/B)."""
        return self.matmul_flops_per_s / self.mem_bw_bytes_per_s


def _collective_latency_s(hw: Hardware) -> float:
    if hw.interconnect_latency_s is not None:
        return hw.interconnect_latency_s
    kind = hw.interconnect.lower()
    pcie_only = "pcie" in kind and not any(link in kind for link in ("nvlink", "infinity", "xgmi", "ici"))
    return DEFAULT_PCIE_COLLECTIVE_LATENCY_S if pcie_only else DEFAULT_NVLINK_COLLECTIVE_LATENCY_S


def _expected_link(hw: Hardware, engine: engines.Engine, tp: int | None, topology: str | None
                   ) -> tuple[float, float, str]:
    """(link bandwidth one way, collective latency, link kind) for ``expected``.

    ``tp`` None: the preset's own figure and latency (the estimate before topologies). Otherwise the slowest link
    on a ring over ``tp`` devices (:func:`topology.ring_bottleneck`); an engine with its own all-reduce replaces
    the latency where it runs one: NVLink-class links, or two GPUs over PCIe (vLLM turns its custom all-reduce
    off for more than two PCIe-only GPUs: vllm-project/vllm#56128 quotes the check).
    """
    if tp is None:
        return hw.interconnect_bw_unidirectional_bytes_per_s, _collective_latency_s(hw), ""
    link = ring_bottleneck(hw, tp, topology)
    latency = link.latency_s
    custom = engine.custom_all_reduce_latency_s
    if custom is not None and tp > 1 and (not link.kind.startswith("pcie") or tp == 2):
        latency = custom
    return link.bw_unidirectional_bytes_per_s, latency, link.kind


def ceilings(hw: Hardware, compute_dtype: str, estimate: str, *, engine: str = DEFAULT_ENGINE,
             tp: int | None = None, topology: str | None = None) -> Ceilings:
    """Spec ceilings for ``bound``; achievable ceilings and overheads for ``expected``.

    ``engine`` (engines.py) and the TP ring (``tp`` devices under ``topology``, topology.py) change ``expected``
    only: ``bound`` keeps the spec rates, the preset's link and no fixed costs, so it stays a ceiling for every
    stack. With the defaults (generic engine, ``tp`` None) the ceilings are those of the estimate before engines
    and topologies existed.
    """
    used_dtype, spec_peak = hw.matmul_peak(compute_dtype)
    spec_vector = hw.vector_peak_flops_per_s()
    peaks = _peaks_by_dtype(hw)
    link = hw.interconnect_bw_unidirectional_bytes_per_s
    profile = engine_profile(engine)
    if estimate == "bound":
        int8_peak = hw.dense_peak_flops_per_s.get("int8", 0.0)
        return Ceilings(
            name="bound", compute_dtype=used_dtype, matmul_flops_per_s=spec_peak, vector_flops_per_s=spec_vector,
            integer_gemm_flops_per_s=int8_peak if int8_peak > spec_peak else None,
            mem_bw_bytes_per_s=hw.mem_bw_bytes_per_s, link_bw_bytes_per_s=link, kernel_overhead_s=0.0,
            collective_latency_s=0.0, spec_matmul_flops_per_s=spec_peak,
            spec_mem_bw_bytes_per_s=hw.mem_bw_bytes_per_s, engine=profile.id,
            matmul_flops_per_s_by_dtype={d: peak for d, (_, peak) in peaks.items()},
            runtime_mode="",
        )
    if estimate != "expected":
        raise ValueError(f"estimate must be one of {ESTIMATES}, not {estimate!r}")
    engine_fraction = profile.matmul_fraction(hw)
    matmul_fraction = engine_fraction or hw.achievable_matmul_fraction.get(used_dtype) or DEFAULT_MATMUL_FRACTION
    spec_peak = fp16_accumulate_peak(hw, profile, used_dtype) or spec_peak
    efficiency = {d: profile.weight_stream_efficiency(d, compute_dtype, hw) for d in WEIGHT_BITS_PER_ELEMENT}
    mem_fraction = hw.achievable_mem_bw_fraction or DEFAULT_MEM_BW_FRACTION
    link_bw, latency_s, link_kind = _expected_link(hw, profile, tp, topology)
    launch_s, launch_high_s, _ = kernel_launch_cost(hw, profile)
    return Ceilings(
        name="expected", compute_dtype=used_dtype,
        matmul_flops_per_s=spec_peak * matmul_fraction,
        attention_flops_per_s=spec_peak * matmul_fraction * ATTENTION_KERNEL_EFFICIENCY,
        compute_memory_overlap=EXPECTED_COMPUTE_MEMORY_OVERLAP,
        vector_flops_per_s=spec_vector * DEFAULT_MATMUL_FRACTION,
        mem_bw_bytes_per_s=hw.mem_bw_bytes_per_s * mem_fraction,
        link_bw_bytes_per_s=link_bw * DEFAULT_LINK_BW_FRACTION,
        kernel_overhead_s=launch_s, kernel_overhead_high_s=launch_high_s, runtime_mode=profile.runtime_mode,
        kernel_set="unknown" if profile.runtime_mode == "unknown"
        else kernels.kernel_set_for(profile.runtime_mode, profile.unfused_modules),
        collective_latency_s=latency_s,
        spec_matmul_flops_per_s=spec_peak, spec_mem_bw_bytes_per_s=hw.mem_bw_bytes_per_s,
        weight_stream_efficiency={d: e for d, e in efficiency.items() if e != 1.0},
        engine=profile.id, kv_reads_per_query_head=profile.kv_reads_per_query_head, link_kind=link_kind,
        matmul_flops_per_s_by_dtype={
            d: (fp16_accumulate_peak(hw, profile, used) or peak)
            * (engine_fraction or hw.achievable_matmul_fraction.get(used) or DEFAULT_MATMUL_FRACTION)
            for d, (used, peak) in peaks.items()},
        gguf_prompt_copy_bytes_per_weight=(engines.DEQUANT_F16_COPY_BYTES_PER_WEIGHT if profile.prompt_dequant_to_f16
                                           else 0.0),
        prefill_chunk_tokens=profile.prefill_chunk_tokens,
    )


def kernel_launch_cost(hw: Hardware, profile: engines.Engine) -> tuple[float, float, str]:
    """(per-kernel cost, the largest one for an unknown stack (else 0), source) of ``profile`` on ``hw``: the profile's
    own figure where its file gives one, else its runtime mode's on the device's platform (kernels.py)."""
    if profile.kernel_overhead_s is not None:
        return profile.kernel_overhead_s, 0.0, f"engine {profile.id}: {profile.sources.get('kernel_overhead_s', '')}"
    where = kernels.platform(hw)
    if profile.runtime_mode == "unknown":
        low, high = kernels.unknown_launch_cost(where)
        return low, high, (f"runtime mode unknown on {where}: from {low * 1e6:.1f} to {high * 1e6:.1f} us per kernel "
                           "over the modes (kernels.LAUNCH_COST_S); expected at the geometric middle")
    cost, source = kernels.launch_cost(profile.runtime_mode, where)
    return cost, 0.0, f"{profile.runtime_mode} mode on {where}: {source}"


def fixed_cost_s(op: Op, c: Ceilings) -> float:
    """The fixed cost of one occurrence of a non-collective op under ``c`` (kernels.py): none under ``bound`` (no cost
    per kernel); the
    per-kernel cost times the kernels the op launches (with sourced minimum run times); for an unknown stack the
    geometric middle of the fused kernels at the smallest cost and the unfused ones at the largest."""
    kernel_set = c.kernel_set
    if c.kernel_overhead_s == 0.0:  # bound (or fixed costs turned off): no kernel pays anything
        return 0.0
    if kernel_set == "fused" and op.name not in kernels.MOE_ROUTING_KERNELS:
        return c.kernel_overhead_s
    if kernel_set == "unknown":
        low = kernels.fixed_cost_s(op.name, op.kind, "fused", c.kernel_overhead_s)
        high = kernels.fixed_cost_s(op.name, op.kind, "unfused", c.kernel_overhead_high_s)
        return kernels.geometric_middle(low, high)
    return kernels.fixed_cost_s(op.name, op.kind, kernel_set, c.kernel_overhead_s)


def fp16_accumulate_peak(hw: Hardware, profile: engines.Engine, used_dtype: str) -> float | None:
    """The device's FP16-accumulate tensor rate when ``profile`` runs its 16-bit GEMMs with FP16 accumulation and the
    device has a faster rate for it (GeForce: twice the FP32-accumulate peak); ``None`` otherwise."""
    if profile.gemm_fp16_accumulate and used_dtype in ("bf16", "fp16"):
        return hw.fp16_accumulate_peak_flops_per_s
    return None


def _peaks_by_dtype(hw: Hardware) -> dict[str, tuple[str, float]]:
    """(dtype used, spec peak) for every compute dtype the device can run (after its fallbacks)."""
    out = {}
    for dtype in PEAK_FALLBACK_ORDER:
        with contextlib.suppress(ModelInputError):
            out[dtype] = hw.matmul_peak(dtype)
    return out


def scenario_ceilings(scenario: Scenario, estimate: str) -> Ceilings:
    """:func:`ceilings` for a scenario: its compute dtype, engine, TP degree and topology."""
    return ceilings(scenario.hardware, scenario.precisions.compute_dtype, estimate, engine=scenario.engine,
                    tp=scenario.parallelism.tp, topology=scenario.topology)


@dataclass(frozen=True, slots=True)
class Assumption:
    """One parameter ``expected`` used: its name, value, unit and where the value comes from."""

    name: str
    value: float
    unit: str
    source: str


def _preset_or_default(hw: Hardware, key: str, measured: bool, default_note: str) -> str:
    if measured:
        return f"{hw.id} preset: {hw.sources.get(key, 'measured (source in the preset)')}"
    return default_note


def expected_assumptions(hw: Hardware, compute_dtype: str, weight_dtypes: tuple[str, ...] = (), *,
                         engine: str = DEFAULT_ENGINE, tp: int | None = None, topology: str | None = None
                         ) -> list[Assumption]:
    """Every parameter of the ``expected`` ceilings for this device, with its value and source.

    With a non-default ``engine`` or a ``tp`` (the TP ring, topology.py), the rows name the engine's figures and
    the ring's slowest link; with the defaults they are the rows of the estimate before engines and topologies.
    """
    c = ceilings(hw, compute_dtype, "expected", engine=engine, tp=tp, topology=topology)
    profile = engine_profile(engine)
    used = c.compute_dtype
    matmul_key = "achievable.fp8_matmul" if used == "fp8" else "achievable.matmul"
    matmul_source = _preset_or_default(hw, matmul_key, bool(hw.achievable_matmul_fraction.get(used)),
                                       "DEFAULT_MATMUL_FRACTION: achievable-ceilings.md generic NVIDIA 75-80%, "
                                       "midpoint")
    if profile.matmul_fraction(hw) is not None:
        matmul_source = f"engine {profile.id}: {profile.sources.get('prompt_matmul_fraction', 'engine profile')}"
    fp16_accumulate = fp16_accumulate_peak(hw, profile, used)
    if fp16_accumulate:
        matmul_source += f"; of the FP16-accumulate peak {fp16_accumulate / 1e12:.1f} TFLOP/s ({hw.id} preset)"
    rows = [
        Assumption("mem_bw_fraction", c.mem_bw_bytes_per_s / hw.mem_bw_bytes_per_s, "of spec",
                   _preset_or_default(hw, "achievable.mem_bw", hw.achievable_mem_bw_fraction is not None,
                                      "DEFAULT_MEM_BW_FRACTION: achievable-ceilings.md generic 85-90%, midpoint")),
        Assumption(f"matmul_fraction ({used})", c.matmul_flops_per_s / c.spec_matmul_flops_per_s, "of spec",
                   matmul_source),
        Assumption("vector_fraction (fp32)", DEFAULT_MATMUL_FRACTION, "of spec",
                   "DEFAULT_MATMUL_FRACTION applied to the FP32 vector peak (norms, softmax, activations)"),
        Assumption("attention_kernel_efficiency", ATTENTION_KERNEL_EFFICIENCY, "of the matmul rate",
                   "ATTENTION_KERNEL_EFFICIENCY: FlashAttention-2 at 50-73% of A100 peak (arXiv:2307.08691) over "
                   "A100 GEMM at 86.9%; FlashAttention-3 paper (arXiv:2407.08608) for H100"),
        Assumption("compute_memory_overlap", c.compute_memory_overlap, "of min(compute, memory)",
                   "EXPECTED_COMPUTE_MEMORY_OVERLAP: the roofline assumes full overlap; expected none (times add); "
                   "TensorRT-LLM A100/L40S time to first token (measured-dev TR-24..29)"),
    ]
    generic = engine == DEFAULT_ENGINE
    for dtype in dict.fromkeys(weight_dtypes):
        efficiency = c.weight_stream_efficiency.get(dtype)
        if efficiency is not None:
            family = engines.weight_format_family(dtype, compute_dtype)
            source = ("WEIGHT_ONLY_STREAM_EFFICIENCY_*: gpt-fast A100 Llama-2-7B int8/int4 vs bf16 effective "
                      "bandwidth (measured-dev GF-01..03)")
            if not generic:
                share_key = ("decode_gemv_bw_share_hbm" if profile.gemv_share(hw) != profile.decode_gemv_bw_share
                             else "decode_gemv_bw_share")
                named = [profile.sources[key] for key in (family, share_key) if key in profile.sources]
                source = f"engine {profile.id}: " + ("; ".join(named) if named else f"generic ({source})")
            rows.append(Assumption(f"weight_only_stream_efficiency ({dtype})", efficiency, "of the 16-bit rate",
                                   source))
    if c.gguf_prompt_copy_bytes_per_weight:
        rows.append(Assumption("gguf_prompt_f16_copy", c.gguf_prompt_copy_bytes_per_weight,
                               f"bytes per weight, GEMMs over more than {engines.MMQ_MAX_BATCH_TOKENS} tokens",
                               f"engine {profile.id}: {profile.sources.get('prompt_dequant_to_f16', '')}"))
    if c.kv_reads_per_query_head:
        rows.append(Assumption("decode_kv_reads", 1.0, "per query head (x GQA group)",
                               f"engine {profile.id}: {profile.sources.get('kv_reads_per_query_head', '')}"))
    latency_source = (f"{hw.id} preset interconnect_latency_us" if hw.interconnect_latency_s is not None else
                      "DEFAULT_NVLINK/PCIE_COLLECTIVE_LATENCY_S: custom all-reduce 4-12 us on H100 NVLink "
                      "(sgl-project/sglang#2904); NCCL over PCIe ~42 us on 8x RTX 4090 (NVIDIA/nccl#1530)")
    if c.link_kind:
        latency_source = f"ring over {tp} devices, slowest link {c.link_kind} (topology.py); " + latency_source
    custom_latency_s = profile.custom_all_reduce_latency_s
    if custom_latency_s is not None and c.collective_latency_s == custom_latency_s:
        latency_source = f"engine {profile.id} custom all-reduce: {profile.sources['custom_all_reduce_latency_s']}"
    _, high_s, launch_source = kernel_launch_cost(hw, profile)
    kernel_source = (f"engine {profile.id}, runtime mode {profile.runtime_mode}, {c.kernel_set} kernels per op "
                     f"(kernels.py); {launch_source}")
    rows += [
        Assumption("kernel_overhead_s", c.kernel_overhead_s, "s per kernel", kernel_source),
        *([Assumption("kernel_overhead_high_s", high_s, "s per kernel",
                      "runtime mode unknown: the largest per-kernel cost of the modes (kernels.LAUNCH_COST_S)")]
          if high_s else []),
        Assumption("collective_latency_s", c.collective_latency_s, "s per collective", latency_source),
        Assumption("link_bw_fraction", DEFAULT_LINK_BW_FRACTION, "of spec (one direction)",
                   "DEFAULT_LINK_BW_FRACTION: nccl-tests ring all-reduce bus bandwidth on 8x H100 NVLink "
                   "(NVIDIA/nccl-tests#212)"),
    ]
    if c.link_kind:
        rows.append(Assumption(f"link_bw ({c.link_kind})", c.link_bw_bytes_per_s / DEFAULT_LINK_BW_FRACTION,
                               "B/s one direction (spec)", "the TP ring's slowest link (topology.py)"))
    return rows


@dataclass(frozen=True, slots=True, kw_only=True)
class OpTiming:
    """One op's times per occurrence under one set of ceilings."""

    op: Op
    compute_s: Number
    memory_s: Number
    comm_s: Number
    overhead_s: float
    time_s: Number

    @property
    def limited_by(self) -> str:
        """``compute``, ``memory`` or ``interconnect``: the largest of the three terms (the first listed of those
        equal; per element for arrays)."""
        memory_s, compute_s, comm_s = self.memory_s, self.compute_s, self.comm_s
        if type(memory_s) is float and type(compute_s) is float and type(comm_s) is float \
                and memory_s == memory_s and compute_s == compute_s and comm_s == comm_s:  # plain numbers, no NaN
            largest = max(memory_s, compute_s, comm_s)
            return "memory" if memory_s == largest else "compute" if compute_s == largest else "interconnect"
        terms = np.stack(np.broadcast_arrays(memory_s, compute_s, comm_s))
        names = np.array(["memory", "compute", "interconnect"])
        picked = names[np.argmax(terms, axis=0)]
        return str(picked) if picked.ndim == 0 else picked


def compute_rate_flops_per_s(op: Op, c: Ceilings) -> float:
    """The peak an op computes at: attention kernels, GEMMs (int8 for GGUF weights in the bound),
    or the vector rate for the rest. An op with its own ``compute_dtype`` (per-module precision) runs at that
    dtype's rate, scaled like the scenario's (the attention kernel's efficiency kept)."""
    scale = 1.0
    if op.compute_dtype and op.kind in ("matmul", "attention") and op.compute_dtype in c.matmul_flops_per_s_by_dtype:
        scale = c.matmul_flops_per_s_by_dtype[op.compute_dtype] / c.matmul_flops_per_s
    if op.kind == "attention" and c.attention_flops_per_s is not None:
        return c.attention_flops_per_s * scale
    if op.kind == "matmul" and c.integer_gemm_flops_per_s and op.weight_dtype in GGUF_INTEGER_FORMATS:
        return c.integer_gemm_flops_per_s
    return c.matmul_flops_per_s * scale if op.kind in ("matmul", "attention") else c.vector_flops_per_s


def overlapped_s(compute_s: Number, memory_s: Number, overlap: float) -> Number:
    """max(compute, memory) + (1 - overlap) * min(compute, memory): the roofline's max at overlap 1,
    the sum at overlap 0."""
    if overlap >= 1.0:
        return np.maximum(compute_s, memory_s)
    return np.maximum(compute_s, memory_s) + (1.0 - overlap) * np.minimum(compute_s, memory_s)


_ONCE = 1.0
_ROUTED = kernels.MOE_ROUTING_KERNELS  # ops with extra kernels beside their own (the fast path skips the rest)


def micro_batches(op: Op, c: Ceilings) -> Number:
    """How many times a prefill weight GEMM streams its weights under ``c``: ceil(T / chunk) when the engine evaluates
    a prompt of T tokens in micro-batches of ``chunk`` (llama.cpp's n_ubatch, ggml-org/llama.cpp#6017), each a whole
    forward pass; 1 otherwise (``bound``, decode, the LM head over the last positions, an engine without a chunk).
    The FLOPs and activations stay those of T tokens."""
    chunk = c.prefill_chunk_tokens
    if not chunk or op.phase != "prefill" or op.kind != "matmul" or op.name == "lm_head":
        return _ONCE
    micro = np.maximum(np.ceil(np.asarray(op.pass_tokens, dtype=float) / chunk), 1.0)
    return float(micro) if np.ndim(micro) == 0 else micro


def compute_and_memory_s(op: Op, c: Ceilings) -> tuple[Number, Number]:
    """(compute s, memory s) of one occurrence: the two roofline terms and nothing else."""
    if op.kind == "collective":
        return 0.0, 0.0
    micro = micro_batches(op, c) if c.prefill_chunk_tokens else _ONCE
    weight_bytes, memory_bytes = op.weight_bytes, op.memory_bytes
    if micro is not _ONCE:  # the common path: nothing streams twice
        weight_bytes = op.weight_bytes * micro
        memory_bytes = memory_bytes + (weight_bytes - op.weight_bytes)
    efficiency = c.weight_stream_efficiency.get(op.weight_dtype, 1.0)
    if efficiency != 1.0:
        memory_bytes = memory_bytes + weight_bytes * (1 / efficiency - 1)
    if c.gguf_prompt_copy_bytes_per_weight and op.kind == "matmul" and op.weight_dtype in GGUF_INTEGER_FORMATS:
        memory_bytes = memory_bytes + dequant_copy_bytes(op, c.gguf_prompt_copy_bytes_per_weight, micro)
    if c.kv_reads_per_query_head and op.kind == "attention":
        memory_bytes = memory_bytes + op.kv_read_bytes * (kv_read_multiplier(op) - 1.0)
    return op.flops / compute_rate_flops_per_s(op, c), memory_bytes / c.mem_bw_bytes_per_s


def dequant_copy_bytes(op: Op, bytes_per_weight: float, micro: Number = 1.0) -> Number:
    """The F16 copy a GEMM over GGUF weights writes and reads when each weight meets more than
    engines.MMQ_MAX_BATCH_TOKENS tokens: weights x ``bytes_per_weight``, else 0, once per micro-batch (``micro``,
    :func:`micro_batches`). Weights = weight_bytes over the format's bytes per weight; tokens per weight and micro-batch
    = FLOPs / (2 x weights x micro) (T / micro for a dense GEMM, the tokens routed to each touched expert for an MoE
    one)."""
    weights = op.weight_bytes / (WEIGHT_BITS_PER_ELEMENT[op.weight_dtype] / 8.0) * micro
    tokens = np.divide(op.flops, np.maximum(2.0 * weights, 1e-30))
    copy = np.where(tokens > engines.MMQ_MAX_BATCH_TOKENS, weights * bytes_per_weight, 0.0)
    return float(copy) if np.ndim(copy) == 0 else copy


def kv_read_multiplier(op: Op) -> float:
    """h_q / g, the GQA group, for a fused GQA decode attention op (its dims name both); 1.0 for any other op
    (MLA's latent is one shared head; the unfused path records no head counts)."""
    dims = dict(op.dims)
    if "h_q" in dims and "g" in dims and dims["g"]:
        return float(dims["h_q"]) / float(dims["g"])
    return 1.0


def _op_terms(op: Op, c: Ceilings) -> tuple[Number, Number, Number, float, Number]:
    """(compute s, memory s, comm s, fixed s, time s) of one occurrence: a collective's link time plus its latency;
    any other op's overlapped compute and memory times plus the kernel's fixed cost."""
    if op.kind == "collective":
        comm_s = op.comm_bytes / c.link_bw_bytes_per_s
        return 0.0, 0.0, comm_s, c.collective_latency_s, comm_s + c.collective_latency_s
    compute_s, memory_s = compute_and_memory_s(op, c)
    fixed_s = c.kernel_overhead_s if c.kernel_set == "fused" and op.name not in _ROUTED else fixed_cost_s(op, c)
    return compute_s, memory_s, 0.0, fixed_s, overlapped_s(compute_s, memory_s, c.compute_memory_overlap) + fixed_s


def time_op(op: Op, c: Ceilings) -> OpTiming:
    compute_s, memory_s, comm_s, overhead_s, time_s = _op_terms(op, c)
    return OpTiming(op=op, compute_s=compute_s, memory_s=memory_s, comm_s=comm_s, overhead_s=overhead_s,
                    time_s=time_s)


@dataclass(frozen=True, slots=True, kw_only=True)
class PassTotals:
    """Sums over the ops of one pass (arrays when the ops are)."""

    time_s: Number
    compute_s: Number
    memory_s: Number
    comm_s: Number
    overhead_s: Number
    flops: Number
    memory_bytes: Number
    weight_bytes: Number
    kv_read_bytes: Number
    kv_write_bytes: Number
    activation_bytes: Number


def pass_totals(ops: list[Op], c: Ceilings) -> PassTotals:
    """Sum count * value over ops; compute/memory totals add each op's own term.

    Summed in the order of the ops, from 0.0, each field on its own (a keystroke in the explorer runs four of these:
    plain locals, not a dict of accumulators or a timing object per op)."""
    time_s = compute_s = memory_s = comm_s = overhead_s = 0.0
    flops = memory_bytes = weight_bytes = kv_read_bytes = kv_write_bytes = activation_bytes = 0.0
    for op in ops:
        op_compute_s, op_memory_s, op_comm_s, op_overhead_s, op_time_s = _op_terms(op, c)
        n = op.count
        time_s = time_s + n * op_time_s
        compute_s = compute_s + n * op_compute_s
        memory_s = memory_s + n * op_memory_s
        comm_s = comm_s + n * op_comm_s
        overhead_s = overhead_s + n * op_overhead_s
        flops = flops + n * op.flops
        memory_bytes = memory_bytes + n * op.memory_bytes
        weight_bytes = weight_bytes + n * op.weight_bytes
        kv_read_bytes = kv_read_bytes + n * op.kv_read_bytes
        kv_write_bytes = kv_write_bytes + n * op.kv_write_bytes
        activation_bytes = activation_bytes + n * op.activation_bytes
    return PassTotals(time_s=time_s, compute_s=compute_s, memory_s=memory_s, comm_s=comm_s, overhead_s=overhead_s,
                      flops=flops, memory_bytes=memory_bytes, weight_bytes=weight_bytes, kv_read_bytes=kv_read_bytes,
                      kv_write_bytes=kv_write_bytes, activation_bytes=activation_bytes)
