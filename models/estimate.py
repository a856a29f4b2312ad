"""Roofline timing of ops and phases: the ``bound`` and ``expected`` estimates.

Per op: time = max(FLOPs / peak, bytes / bandwidth, link bytes / link bandwidth) + fixed cost.
Ops run one after another, so a pass takes the sum over ops of count * time.

- ``bound``: spec-sheet peaks, no fixed costs. A real system cannot beat it.
- ``expected``: measured ceilings where published (the hardware preset's achievable
  fractions), else the defaults below, plus a fixed cost per kernel and per collective.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .dtypes import WEIGHT_BITS_PER_ELEMENT
from .hardware import Hardware
from .ops import Number, Op

# achievable-ceilings.md: "Where only the spec is known, use ~85-90% (bandwidth) and ~75-80%
# (NVIDIA matmul) as generic factors." The midpoints:
DEFAULT_MEM_BW_FRACTION = 0.875
DEFAULT_MATMUL_FRACTION = 0.775
# nccl-tests ring all-reduce bus bandwidth on 8x H100 NVLink, about 365-370 of 450 GB/s per
# direction (NVIDIA/nccl-tests#212).
DEFAULT_LINK_BW_FRACTION = 0.8
# Fixed cost per kernel: launch gap plus the ramp-up and tail of a short kernel. NVIDIA's
# "Getting Started with CUDA Graphs" blog measures 3.4-3.8 us per short kernel in a stream or
# graph; 4 us also closes the gap between gpt-fast's measured Llama-2-7B decode on A100
# (104.9 tok/s, measured-dev GF-01) and its weight-streaming time.
DEFAULT_KERNEL_OVERHEAD_S = 4e-6
# Small-message all-reduce latency: vLLM/SGLang custom all-reduce on H100 NVLink, 4-12 us at
# TP2-8 (sgl-project/sglang#2904); NCCL over PCIe on 8x RTX 4090, about 42 us (NVIDIA/nccl#1530).
DEFAULT_NVLINK_COLLECTIVE_LATENCY_S = 8e-6
DEFAULT_PCIE_COLLECTIVE_LATENCY_S = 40e-6

# Weight-only quantised GEMMs dequantise in the kernel and stream their (fewer) bytes more
# slowly than 16-bit weights: gpt-fast's A100 Llama-2-7B figures (README, measured-dev
# GF-01..03) give effective weight bandwidth 1397 GB/s at bf16, 1069 GB/s at int8 (0.765 of it)
# and 863 GB/s at int4 (0.617). Applied to every format that is not a native operand of the
# kernel: 8-bit and wider at 0.765, narrower at 0.617.
WEIGHT_ONLY_STREAM_EFFICIENCY_8BIT = 1069.20 / 1397.31
WEIGHT_ONLY_STREAM_EFFICIENCY_4BIT = 862.69 / 1397.31

ESTIMATES = ("bound", "expected")


def weight_only_efficiency(weight_dtype: str, compute_dtype: str) -> float:
    """Streaming efficiency of a GEMM whose weights are stored as ``weight_dtype``.

    1.0 when the weights are a native operand of the kernel (16/32-bit, or the compute dtype
    itself); otherwise the weight-only rate for 8-bit or narrower formats.
    """
    if weight_dtype == compute_dtype or weight_dtype in ("fp32", "bf16", "fp16"):
        return 1.0
    if WEIGHT_BITS_PER_ELEMENT[weight_dtype] >= 8:
        return WEIGHT_ONLY_STREAM_EFFICIENCY_8BIT
    return WEIGHT_ONLY_STREAM_EFFICIENCY_4BIT


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
    # weight dtype -> streaming efficiency of its GEMMs (1.0 where absent)
    weight_stream_efficiency: dict[str, float] = field(default_factory=dict)
    spec_matmul_flops_per_s: float
    spec_mem_bw_bytes_per_s: float


def _collective_latency_s(hw: Hardware) -> float:
    if hw.interconnect_latency_s is not None:
        return hw.interconnect_latency_s
    kind = hw.interconnect.lower()
    pcie_only = "pcie" in kind and not any(link in kind for link in ("nvlink", "infinity", "xgmi", "ici"))
    return DEFAULT_PCIE_COLLECTIVE_LATENCY_S if pcie_only else DEFAULT_NVLINK_COLLECTIVE_LATENCY_S


def ceilings(hw: Hardware, compute_dtype: str, estimate: str) -> Ceilings:
    """Spec ceilings for ``bound``; achievable ceilings and overheads for ``expected``."""
    used_dtype, spec_peak = hw.matmul_peak(compute_dtype)
    spec_vector = hw.vector_peak_flops_per_s()
    link = hw.interconnect_bw_unidirectional_bytes_per_s
    if estimate == "bound":
        return Ceilings(
            name="bound", compute_dtype=used_dtype, matmul_flops_per_s=spec_peak, vector_flops_per_s=spec_vector,
            mem_bw_bytes_per_s=hw.mem_bw_bytes_per_s, link_bw_bytes_per_s=link, kernel_overhead_s=0.0,
            collective_latency_s=0.0, spec_matmul_flops_per_s=spec_peak,
            spec_mem_bw_bytes_per_s=hw.mem_bw_bytes_per_s,
        )
    if estimate != "expected":
        raise ValueError(f"estimate must be one of {ESTIMATES}, not {estimate!r}")
    matmul_fraction = hw.achievable_matmul_fraction.get(used_dtype) or DEFAULT_MATMUL_FRACTION
    efficiency = {d: weight_only_efficiency(d, compute_dtype) for d in WEIGHT_BITS_PER_ELEMENT}
    mem_fraction = hw.achievable_mem_bw_fraction or DEFAULT_MEM_BW_FRACTION
    return Ceilings(
        name="expected", compute_dtype=used_dtype,
        matmul_flops_per_s=spec_peak * matmul_fraction,
        vector_flops_per_s=spec_vector * DEFAULT_MATMUL_FRACTION,
        mem_bw_bytes_per_s=hw.mem_bw_bytes_per_s * mem_fraction,
        link_bw_bytes_per_s=link * DEFAULT_LINK_BW_FRACTION,
        kernel_overhead_s=DEFAULT_KERNEL_OVERHEAD_S,
        collective_latency_s=_collective_latency_s(hw),
        spec_matmul_flops_per_s=spec_peak, spec_mem_bw_bytes_per_s=hw.mem_bw_bytes_per_s,
        weight_stream_efficiency={d: e for d, e in efficiency.items() if e < 1.0},
    )


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
        """``compute``, ``memory`` or ``interconnect``: the largest of the three terms."""
        terms = np.stack(np.broadcast_arrays(self.memory_s, self.compute_s, self.comm_s))
        names = np.array(["memory", "compute", "interconnect"])
        picked = names[np.argmax(terms, axis=0)]
        return str(picked) if picked.ndim == 0 else picked


def time_op(op: Op, c: Ceilings) -> OpTiming:
    if op.kind == "collective":
        comm_s = op.comm_bytes / c.link_bw_bytes_per_s
        overhead = c.collective_latency_s
        return OpTiming(op=op, compute_s=0.0, memory_s=0.0, comm_s=comm_s, overhead_s=overhead,
                        time_s=comm_s + overhead)
    peak = c.matmul_flops_per_s if op.kind in ("matmul", "attention") else c.vector_flops_per_s
    compute_s = op.flops / peak
    efficiency = c.weight_stream_efficiency.get(op.weight_dtype, 1.0)
    memory_bytes = op.memory_bytes if efficiency == 1.0 else op.memory_bytes + op.weight_bytes * (1 / efficiency - 1)
    memory_s = memory_bytes / c.mem_bw_bytes_per_s
    return OpTiming(op=op, compute_s=compute_s, memory_s=memory_s, comm_s=0.0, overhead_s=c.kernel_overhead_s,
                    time_s=np.maximum(compute_s, memory_s) + c.kernel_overhead_s)


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
    """Sum count * value over ops; compute/memory totals add each op's own term."""
    acc = dict.fromkeys(PassTotals.__slots__, 0.0)
    for op in ops:
        t = time_op(op, c)
        n = op.count
        acc["time_s"] = acc["time_s"] + n * t.time_s
        acc["compute_s"] = acc["compute_s"] + n * t.compute_s
        acc["memory_s"] = acc["memory_s"] + n * t.memory_s
        acc["comm_s"] = acc["comm_s"] + n * t.comm_s
        acc["overhead_s"] = acc["overhead_s"] + n * t.overhead_s
        acc["flops"] = acc["flops"] + n * op.flops
        acc["memory_bytes"] = acc["memory_bytes"] + n * op.memory_bytes
        acc["weight_bytes"] = acc["weight_bytes"] + n * op.weight_bytes
        acc["kv_read_bytes"] = acc["kv_read_bytes"] + n * op.kv_read_bytes
        acc["kv_write_bytes"] = acc["kv_write_bytes"] + n * op.kv_write_bytes
        acc["activation_bytes"] = acc["activation_bytes"] + n * op.activation_bytes
    return PassTotals(**acc)
