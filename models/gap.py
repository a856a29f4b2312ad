"""Why ``expected`` is slower than ``bound``: the decode step gap, term by term (pure).

Starting from the bound (spec ceilings, no fixed costs), each assumption of ``expected`` is
switched on in turn and the mean decode step re-timed; the differences add up to the gap:
achievable bandwidth, matmul and attention rates, compute and memory that do not overlap within a
kernel, weight-only dequantisation, the engine's KV reads per query head (early TensorRT-LLM), the per-kernel
cost, the collective latency and link efficiency.
The ops are built once (at a few sample contexts, :func:`inference.decode_step_samples`) and timed under each
set of ceilings; the mean over the decode contexts is a closed form, so the gap costs the same at any output length.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .estimate import Ceilings, scenario_ceilings
from .inference import DecodeStepSamples, decode_step_samples, mean_decode_step_from_ops
from .scenario import Scenario


@dataclass(frozen=True, slots=True)
class GapTerm:
    label: str
    seconds: float
    detail: str


def _mean_step_s(samples: DecodeStepSamples, c: Ceilings) -> float:
    return float(mean_decode_step_from_ops(samples, c))


def decode_gap(scenario: Scenario) -> tuple[float, list[GapTerm], float]:
    """(bound step s, the terms in order, expected step s) for the mean decode step."""
    bound, expected = scenario_ceilings(scenario, "bound"), scenario_ceilings(scenario, "expected")
    bw_share = expected.mem_bw_bytes_per_s / bound.mem_bw_bytes_per_s
    matmul_share = expected.matmul_flops_per_s / bound.matmul_flops_per_s
    used = (scenario.precisions.weights, scenario.precisions.expert_weights_or_weights)
    dequant = ", ".join(f"{d} at {e:.1%}" for d, e in expected.weight_stream_efficiency.items() if d in used)
    ring = f" (TP ring's slowest link: {expected.link_kind})" if scenario.parallelism.tp > 1 else ""
    link_share = expected.link_bw_bytes_per_s / max(bound.link_bw_bytes_per_s, 1e-30)
    attention_share = (expected.attention_flops_per_s or expected.matmul_flops_per_s) / bound.matmul_flops_per_s
    overlap = expected.compute_memory_overlap
    integer_gemm = (f", GGUF GEMMs at the {expected.compute_dtype} rate, not int8"
                    if bound.integer_gemm_flops_per_s != expected.integer_gemm_flops_per_s else "")
    if expected.spec_matmul_flops_per_s > bound.matmul_flops_per_s:  # the engine asks for FP16 accumulation
        integer_gemm += (f", GEMMs against the FP16-accumulate peak {expected.spec_matmul_flops_per_s / 1e12:.0f} "
                         "TFLOP/s")
    stages = [
        ("achievable rates", f"bandwidth {bw_share:.1%}, matmul {matmul_share:.1%}, attention "
         f"{attention_share:.1%} of spec{integer_gemm}",
         replace(bound, mem_bw_bytes_per_s=expected.mem_bw_bytes_per_s, matmul_flops_per_s=expected.matmul_flops_per_s,
                 vector_flops_per_s=expected.vector_flops_per_s, attention_flops_per_s=expected.attention_flops_per_s,
                 integer_gemm_flops_per_s=expected.integer_gemm_flops_per_s)),
        ("compute/memory overlap", "none: compute and memory times add" if overlap == 0
         else f"{overlap:.0%} of the smaller term hidden", None),
        ("weight-only dequantisation", dequant or "none", None),
        *([("KV reads per query head", f"engine {expected.engine}: decode attention reads each KV head once per "
            "query head of its GQA group", None)] if expected.kv_reads_per_query_head else []),
        ("kernel fixed cost", f"{expected.kernel_overhead_s * 1e6:.1f} us per kernel", None),
        ("collectives", f"{expected.collective_latency_s * 1e6:.0f} us latency, link at {link_share:.0%} of the "
         f"preset's{ring}", None),
    ]
    samples = decode_step_samples(scenario, scenario.batching.batch_size)
    current = bound
    previous = _mean_step_s(samples, bound)
    start = previous
    terms = []
    for label, detail, target in stages:
        if label == "compute/memory overlap":
            target = replace(current, compute_memory_overlap=expected.compute_memory_overlap)
        elif label == "weight-only dequantisation":
            target = replace(current, weight_stream_efficiency=expected.weight_stream_efficiency)
        elif label == "KV reads per query head":
            target = replace(current, kv_reads_per_query_head=True)
        elif label == "kernel fixed cost":
            target = replace(current, kernel_overhead_s=expected.kernel_overhead_s, kernel_set=expected.kernel_set,
                             kernel_overhead_high_s=expected.kernel_overhead_high_s)
        elif label == "collectives":
            target = replace(current, collective_latency_s=expected.collective_latency_s,
                             link_bw_bytes_per_s=expected.link_bw_bytes_per_s)
        step = _mean_step_s(samples, target)
        terms.append(GapTerm(label, step - previous, detail))
        previous, current = step, target
    final = _mean_step_s(samples, expected)  # any ceiling of expected the stages above do not name
    if abs(final - previous) > 1e-12 * final:
        terms.append(GapTerm("other", final - previous, "the rest of expected's ceilings"))
    return start, terms, final
