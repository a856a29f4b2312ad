"""Kernels per op and what each launch costs, by runtime mode and platform (pure; used by ``expected`` only).

A pass is the op list of :mod:`ops`; each op occurrence launches one or more kernels, and each kernel pays a fixed
cost beside its roofline time. How many kernels and how much each costs depend on how the stack runs:

- **graph** (CUDA graphs, HIP graphs, Metal command buffers encoded ahead): the kernels replay back to back; one
  kernel per op of the list (the custom fused kernels of serving engines), plus the routing kernels of an MoE layer.
- **compiled** (torch.compile / Inductor with CUDA graphs, XLA): replayed like a graph, and the element-wise chains
  fuse: a residual add fuses into the RMSNorm that reads it, a q/k norm into the rotary embedding.
- **eager** (kernels launched one by one from a Python framework that stays ahead of the GPU only when kernels are
  long): each kernel pays the host's time per op (Python, dispatcher, launch).
- **eager-sync** (each launch waits for the host: a loop that synchronises per kernel): the launch latency plus the
  host's round trip per kernel.
- **unknown**: the stack is not known; ``expected`` takes the geometric middle of the modes' per-op fixed costs and
  the band spans them all (band.py).

Kernel sets: ``fused`` (serving engines, llama.cpp: one kernel per op), ``compiled`` (the fusions above) and
``unfused`` (Hugging Face ``transformers`` modules in eager PyTorch: an RMSNorm is eight PyTorch ops, q, k and v are
three linears; counted from ``transformers/models/llama/modeling_llama.py``: ``LlamaRMSNorm.forward``,
``apply_rotary_pos_emb`` with ``rotate_half``, ``LlamaAttention.forward`` with ``DynamicCache.update``,
``LlamaMLP.forward``).

MoE layers add routing kernels (vLLM's fused MoE path, ``vllm/model_executor/layers/fused_moe``): the top-k softmax
after the router GEMM (a port of TensorRT-LLM's fused top-k softmax, vllm-project/vllm#2769), the token alignment /
permutation before the grouped GEMMs (``moe_align_block_size``) and the weighted sum / unpermute after them
(``moe_sum``). A kernel with a sourced minimum run time (the alignment: 8.2 us at its fastest in the benchmark of
vllm-project/vllm#29642) costs at least that.
"""

from __future__ import annotations

import math

from .hardware import Hardware

RUNTIME_MODES = ("graph", "compiled", "eager", "eager-sync", "unknown")
KERNEL_SETS = ("fused", "compiled", "unfused")
PLATFORMS = ("cuda", "rocm", "metal", "hpu", "xla", "other")

# Fixed cost per kernel (s) by runtime mode and platform, each with its source. A platform without its own figure
# takes the CUDA one (the modes' mechanism is the same; the figure is not), and says so.
LAUNCH_COST_S: dict[tuple[str, str], tuple[float, str]] = {
    ("graph", "cuda"): (4.0e-6, "NVIDIA 'Getting Started with CUDA Graphs' blog (2019): 3.4-3.8 us per short kernel "
                                "replayed in a graph or back to back; 4 us also closes gpt-fast's A100 Llama-2-7B "
                                "decode (measured-dev GF-01)"),
    ("graph", "rocm"): (3.9e-6, "ROCm/rocm-systems#10834 (2026-08): HIP graph replay 3.865 us per node over 941 "
                                "dependent dispatches on a Radeon Pro W7900 (gfx1100)"),
    ("graph", "metal"): (5.2e-6, "antonellof/ferrox#149 (2026-09): 832 extra dispatches in one Metal command buffer "
                                 "cost 5.16 us of GPU time each on Apple silicon"),
    ("eager", "cuda"): (7.0e-6, "meta-pytorch/autoparallel#146 (2025-09): PyTorch's H100 cost model, 'operators cost "
                                "at least 7us' of kernel launch overhead; pytorch/pytorch#41383: 5-7 us per eager "
                                "PyTorch op"),
    ("eager", "rocm"): (11.0e-6, "pytorch/pytorch#196920: on an MI308X, eager PyTorch's small rocBLAS GEMMs are "
                                 "launch-bound at 11.1-11.5 us each"),
    ("eager-sync", "cuda"): (9.6e-6, "NVIDIA 'Getting Started with CUDA Graphs' blog (2019): 9.6 us per short kernel "
                                     "when each launch waits on the host"),
}
LAUNCH_COST_S[("compiled", "cuda")] = (LAUNCH_COST_S[("graph", "cuda")][0],
                                       "torch.compile mode='reduce-overhead' replays CUDA graphs (PyTorch docs; "
                                       "gpt-fast): the graph rate, " + LAUNCH_COST_S[("graph", "cuda")][1])
LAUNCH_COST_S[("compiled", "rocm")] = (LAUNCH_COST_S[("graph", "rocm")][0], "torch.compile replays HIP graphs on "
                                       "ROCm: " + LAUNCH_COST_S[("graph", "rocm")][1])

# Sourced minimum run time of a kernel (s) by the op it belongs to (kernels without a public figure: none).
ALIGN_MIN_S = 8.2e-6  # moe_align_block_size, vllm-project/vllm#29642 benchmark (8.19 us at its fastest)

# Extra kernels per op occurrence beside the op's own, per kernel set, with their minimum times: (count, min s).
MOE_ROUTING_KERNELS: dict[str, tuple[tuple[str, float], ...]] = {
    "router": (("top-k softmax", 0.0),),
    "experts gate_up": (("moe_align_block_size (permute)", ALIGN_MIN_S),),
    "experts down": (("moe_sum (unpermute)", 0.0),),
}

# Kernels per op occurrence under ``transformers`` eager modules (unfused); ops not named keep one kernel.
UNFUSED_KERNELS: dict[str, int] = {
    "norms": 8,  # LlamaRMSNorm: to(fp32), pow, mean, add eps, rsqrt, mul, to(dtype), mul weight
    "final norm": 8,
    "q/k norm": 16,  # the same RMSNorm on q and on k (Qwen3)
    "qkv_proj": 3,  # q_proj, k_proj, v_proj
    "rope": 10,  # per q and k: mul cos, rotate_half (neg, cat), mul sin, add
    "attention": 3,  # DynamicCache.update: cat keys, cat values; scaled_dot_product_attention
    "mlp gate_up": 2,  # gate_proj, up_proj
    "mlp activation": 2,  # act_fn(gate), * up
}
# Ops a compiled graph fuses into a neighbour (TorchInductor fuses chains of pointwise and reduction ops into one
# Triton kernel: PyTorch docs, "TorchInductor"): zero kernels of their own.
COMPILED_FUSED = frozenset({"residual add", "q/k norm"})


def platform(hardware: Hardware) -> str:
    """The device's kernel runtime: CUDA, ROCm, Metal, Gaudi's HPU graphs, XLA (TPU), or other."""
    vendor = hardware.vendor.lower()
    if vendor == "nvidia":
        return "cuda"
    if vendor == "amd":
        return "rocm"
    if vendor == "apple":
        return "metal"
    if vendor == "google":
        return "xla"
    if vendor == "intel" and "gaudi" in (hardware.name + hardware.id).lower():
        return "hpu"
    return "other"


def launch_cost(mode: str, where: str) -> tuple[float, str]:
    """(fixed cost per kernel in s, its source) for ``mode`` on platform ``where``; a platform without its own figure
    takes CUDA's, and the source says so. ``unknown`` has no single cost (:func:`unknown_launch_cost`)."""
    if mode not in RUNTIME_MODES or mode == "unknown":
        raise ValueError(f"no launch cost for runtime mode {mode!r}")
    if (mode, where) in LAUNCH_COST_S:
        return LAUNCH_COST_S[(mode, where)]
    cost, source = LAUNCH_COST_S[(mode, "cuda")]
    return cost, f"no {where} figure for {mode} mode: the CUDA one ({source})"


def kernel_set_for(mode: str, unfused_modules: bool) -> str:
    """The kernel set a stack launches: ``unfused`` for framework modules run op by op, ``compiled`` under a
    compiler, else ``fused``."""
    if unfused_modules:
        return "unfused"
    return "compiled" if mode == "compiled" else "fused"


def kernels_per_occurrence(name: str, kind: str, kernel_set: str) -> int:
    """Kernels one occurrence of the op named ``name`` launches (collectives: their own latency, not counted here)."""
    if kind == "collective":
        return 0
    base = name.split(" (")[0] if name.startswith("attention") else name
    if kernel_set == "compiled" and name in COMPILED_FUSED:
        return 0
    own = UNFUSED_KERNELS.get(base, 1) if kernel_set == "unfused" else 1
    return own + len(MOE_ROUTING_KERNELS.get(name, ()))


def fixed_cost_s(name: str, kind: str, kernel_set: str, launch_s: float) -> float:
    """The fixed cost of one op occurrence: ``launch_s`` per kernel, and a kernel with a sourced minimum run time
    (:data:`MOE_ROUTING_KERNELS`) at least that minimum."""
    n = kernels_per_occurrence(name, kind, kernel_set)
    extra = MOE_ROUTING_KERNELS.get(name, ())
    return (n - len(extra)) * launch_s + sum(max(launch_s, floor_s) for _, floor_s in extra)


def kernels_per_layer(ops, layers: int, kernel_set: str) -> float:
    """Kernels one layer launches: the sum over a layer group's ops (:func:`ops.layer_group_ops`, counts over its
    ``layers``) of count x :func:`kernels_per_occurrence`, over the layers."""
    return sum(op.count * kernels_per_occurrence(op.name, op.kind, kernel_set) for op in ops) / layers


def unknown_launch_cost(where: str) -> tuple[float, float]:
    """(smallest, largest) per-kernel cost over the known modes on ``where``: what an unknown stack may pay."""
    costs = [launch_cost(mode, where)[0] for mode in RUNTIME_MODES if mode != "unknown"]
    return min(costs), max(costs)


def geometric_middle(low: float, high: float) -> float:
    """sqrt(low x high): the middle of a range on a log scale (an unknown stack's ``expected``)."""
    return math.sqrt(low * high)
