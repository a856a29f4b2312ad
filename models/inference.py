"""Prefill, decode and the whole generation for one scenario, under one estimate.

- Prefill: one pass over B prompts of P tokens; its LM head yields the first output token,
  so time to first token = prefill time.
- Decode: G-1 further steps; step k (k = 1..G-1) attends to c = P + k tokens. Sums over the
  contexts are closed forms (:mod:`context_sums`: each op is polynomial in c between window
  and compute/memory break points), so their cost does not grow with G; with G = 1 the decode
  figures describe the step that would come next (c = P + 1).
- Generation: prefill + the sum of decode steps; output tokens/s = B*G / that time.
- Idle-core % = 100 * (1 - useful FLOP/s / spec peak FLOP/s); MBU = bytes/s / spec bandwidth;
  both per device, over the whole phase. With PP the ops of all stages run one after
  another, so per-device work is the pass total / pp.
- ``limited_by``: ``compute`` when the summed compute terms exceed the summed memory terms.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .context_sums import context_count, context_pieces, context_sums, op_time_sum_s, sample_contexts
from .estimate import Ceilings, PassTotals, compute_and_memory_s, pass_totals, scenario_ceilings, time_op
from .ops import Number, build_ops
from .scenario import Scenario

MAX_SEARCH_BATCH = 1 << 30
BRACKET_POINTS = 257


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseEstimate:
    time_s: float
    flops: float
    memory_bytes: float
    weight_bytes: float
    kv_read_bytes: float
    kv_write_bytes: float
    activation_bytes: float
    compute_s: float
    memory_s: float
    comm_s: float
    overhead_s: float
    idle_core_pct: float
    mbu_pct: float
    arithmetic_intensity_flops_per_byte: float
    limited_by: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DecodeEstimate:
    steps: int
    phase: PhaseEstimate
    step_time_s: float
    first_step_time_s: float
    last_step_time_s: float
    tokens_per_s_per_seq: float
    tokens_per_s: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Estimate:
    name: str
    ceilings: Ceilings
    prefill: PhaseEstimate
    decode: DecodeEstimate
    generation_time_s: float
    output_tokens_per_s: float

    @property
    def ttft_s(self) -> float:
        return self.prefill.time_s


def decode_contexts(scenario: Scenario) -> np.ndarray:
    """Contexts of the generation's decode steps: P+1 .. P+G-1 (P+1 alone when G = 1)."""
    p, g = scenario.batching.prompt_tokens, scenario.batching.output_tokens
    return np.arange(p + 1, p + max(g, 2), dtype=float)


def decode_step_totals(scenario: Scenario, c: Ceilings, *, batch: Number, context: Number) -> PassTotals:
    """One decode step (vectorised over batch and context)."""
    return pass_totals(build_ops(scenario, "decode", batch=batch, context=context), c)


def mean_decode_step_s(scenario: Scenario, c: Ceilings, batches: Number) -> np.ndarray:
    """Mean decode step time over every context of the generation, for each batch size (exact).

    Ops that do not depend on the context (GEMMs, norms, collectives, MoE experts) are evaluated
    once per batch. Ops that do (attention over the KV cache) are per-sequence work: FLOPs and
    bytes are B times those of one sequence, so with k the fixed per-kernel cost
    time(B, c) = B * (time(1, c) - k) + k, and the mean over contexts is
    B * mean_c(time(1, c) - k) + k, with the sum over contexts in closed form
    (:func:`context_sums.op_time_sum_s`): a few sample contexts, whatever the output length.
    """
    return mean_decode_step_from_ops(decode_step_samples(scenario, batches), c)


@dataclass(frozen=True, slots=True)
class DecodeStepSamples:
    """The ops :func:`mean_decode_step_s` times, built once for any ceilings: one sequence at the sample contexts
    of the decode pieces, and every batch at the first context."""

    pieces: tuple
    per_sequence: list
    per_batch: list
    batches: np.ndarray


def decode_step_samples(scenario: Scenario, batches: Number) -> DecodeStepSamples:
    pieces = context_pieces(scenario)
    batches = np.asarray(batches, dtype=float)
    per_sequence = build_ops(scenario, "decode", batch=1.0, context=sample_contexts(pieces))
    per_batch = build_ops(scenario, "decode", batch=batches, context=float(pieces[0][0]))
    if [op.name for op in per_sequence] != [op.name for op in per_batch]:
        raise AssertionError("decode ops differ between batch and context evaluation")
    return DecodeStepSamples(pieces, per_sequence, per_batch, batches)


def mean_decode_step_from_ops(samples: DecodeStepSamples, c: Ceilings) -> np.ndarray:
    """:func:`mean_decode_step_s` from ops already built (the gap times the same ops under six ceilings)."""
    steps = context_count(samples.pieces)
    total = np.zeros_like(samples.batches)
    for one, many in zip(samples.per_sequence, samples.per_batch, strict=True):
        t_one = time_op(one, c)
        if np.ndim(t_one.time_s) == 0:  # does not depend on the context
            total = total + many.count * time_op(many, c).time_s
        else:
            per_seq_s = op_time_sum_s(one, c, samples.pieces, t_one) / steps - t_one.overhead_s
            total = total + one.count * (samples.batches * per_seq_s + t_one.overhead_s)
    return total


def idle_reference_flops_per_s(scenario: Scenario, c: Ceilings) -> float:
    """The peak idle-core % is measured against: the spec GEMM peak, or, for GGUF weights under ``bound``, the int8
    peak their GEMMs may run at (so such a step shows 0 % idle at most, never below)."""
    gguf = scenario.precisions.gguf_weight_formats
    return c.integer_gemm_flops_per_s if gguf and c.integer_gemm_flops_per_s else c.spec_matmul_flops_per_s


def _total(value: Number, occurrences: int) -> float:
    """The sum of a pass total over its ``occurrences`` (an array holds one value per occurrence already; a number is
    the same in each, so it is multiplied, not spread over an array to be summed)."""
    if isinstance(value, float | int):
        return float(value) * occurrences
    return float(np.sum(np.broadcast_to(value, (occurrences,))))


def _phase(t: PassTotals, c: Ceilings, pp: int, idle_reference_flops_per_s: float, occurrences: int = 1
           ) -> PhaseEstimate:
    """The phase's figures from its pass totals; ``occurrences``: passes in the phase (decode: one per step)."""
    time_s = _total(t.time_s, occurrences)
    flops = _total(t.flops, occurrences)
    memory_bytes = _total(t.memory_bytes, occurrences)
    compute_s, memory_s = _total(t.compute_s, occurrences), _total(t.memory_s, occurrences)
    return PhaseEstimate(
        time_s=time_s,
        flops=flops,
        memory_bytes=memory_bytes,
        weight_bytes=_total(t.weight_bytes, occurrences),
        kv_read_bytes=_total(t.kv_read_bytes, occurrences),
        kv_write_bytes=_total(t.kv_write_bytes, occurrences),
        activation_bytes=_total(t.activation_bytes, occurrences),
        compute_s=compute_s,
        memory_s=memory_s,
        comm_s=_total(t.comm_s, occurrences),
        overhead_s=_total(t.overhead_s, occurrences),
        idle_core_pct=100.0 * (1.0 - flops / pp / time_s / idle_reference_flops_per_s),
        mbu_pct=100.0 * memory_bytes / pp / time_s / c.spec_mem_bw_bytes_per_s,
        arithmetic_intensity_flops_per_byte=flops / memory_bytes,
        limited_by="compute" if compute_s > memory_s else "memory",
    )


@dataclass(frozen=True, slots=True)
class GenerationOps:
    """The ops of one generation, which do not depend on the estimate: the prefill pass over B prompts, and the
    decode step at the sample contexts of its pieces (:func:`context_sums.sample_contexts`; three per piece,
    whatever the output length)."""

    scenario: Scenario
    prefill: list
    decode_steps: list


def generation_ops(scenario: Scenario) -> GenerationOps:
    b = scenario.batching
    return GenerationOps(scenario=scenario, prefill=build_ops(scenario, "prefill", batch=b.batch_size),
                         decode_steps=build_ops(scenario, "decode", batch=b.batch_size,
                                                context=sample_contexts(context_pieces(scenario))))


def estimate(scenario: Scenario, name: str, ops: GenerationOps | None = None) -> Estimate:
    """The ``bound`` or ``expected`` estimate of the scenario's prefill, decode and generation.

    ``ops``: the scenario's :func:`generation_ops`, when already built (both estimates time the same ops).
    """
    c = scenario_ceilings(scenario, name)
    pp = scenario.parallelism.pp
    b = scenario.batching
    if ops is None:
        ops = generation_ops(scenario)
    elif ops.scenario is not scenario and ops.scenario != scenario:
        raise ValueError("estimate: the ops given were built for another scenario")
    idle_reference = idle_reference_flops_per_s(scenario, c)
    prefill = _phase(pass_totals(ops.prefill, c), c, pp, idle_reference)
    sums = context_sums(ops.decode_steps, c, context_pieces(scenario))
    mean_step = sums.total.time_s / sums.steps
    decode_s = sums.total.time_s if b.output_tokens > 1 else 0.0
    generation = prefill.time_s + decode_s
    return Estimate(
        name=name,
        ceilings=c,
        prefill=prefill,
        decode=DecodeEstimate(
            steps=b.output_tokens - 1,
            phase=_phase(sums.total, c, pp, idle_reference),
            step_time_s=mean_step,
            first_step_time_s=sums.first.time_s,
            last_step_time_s=sums.last.time_s,
            tokens_per_s_per_seq=1.0 / mean_step,
            tokens_per_s=b.batch_size / mean_step,
        ),
        generation_time_s=generation,
        output_tokens_per_s=b.batch_size * b.output_tokens / generation,
    )


def mean_decode_context(scenario: Scenario) -> float:
    """Mean context over the generation's decode steps: P + G/2 (P + 1 when G = 1), the mean of
    :func:`decode_contexts` (P+1 .. P+G-1) worked out, not summed."""
    p, g = scenario.batching.prompt_tokens, scenario.batching.output_tokens
    return float(p + 1) if g <= 2 else p + g / 2


def compute_bound_batch(scenario: Scenario, *, context: float | None = None, estimate_name: str = "bound"
                        ) -> int | None:
    """Smallest batch whose decode step at ``context`` has more compute time than memory time.

    ``None`` means never: per added sequence the step gains more KV traffic than FLOPs
    (attention over a long context dominates), so no batch size crosses the ridge.
    Memory capacity is not considered here (see :func:`memory_footprint`).
    """
    c = scenario_ceilings(scenario, estimate_name)
    ctx = mean_decode_context(scenario) if context is None else context

    def compute_heavier(batches: np.ndarray) -> np.ndarray:
        compute_s, memory_s = 0.0, 0.0
        for op in build_ops(scenario, "decode", batch=batches, context=ctx):
            op_compute_s, op_memory_s = compute_and_memory_s(op, c)
            compute_s = compute_s + op.count * op_compute_s
            memory_s = memory_s + op.count * op_memory_s
        return np.broadcast_to(np.asarray(compute_s) > np.asarray(memory_s), batches.shape)

    # powers of two first, then narrow the bracket (every whole batch in it once it is small enough)
    candidates = 2.0 ** np.arange(MAX_SEARCH_BATCH.bit_length())
    heavier = compute_heavier(candidates)
    if not heavier[-1]:
        return None
    first = int(np.argmax(heavier))
    if first == 0:
        return 1
    lo, hi = int(candidates[first - 1]), int(candidates[first])
    while hi - lo > 1:
        if hi - lo < BRACKET_POINTS:
            candidates = np.arange(lo, hi + 1, dtype=float)
        else:
            candidates = np.linspace(lo, hi, BRACKET_POINTS).round()  # steps > 1: distinct after rounding
        heavier = compute_heavier(candidates)
        first = int(np.argmax(heavier))  # heavier[-1] (= hi) is known to be True
        lo, hi = int(candidates[first - 1]), int(candidates[first])
    return hi
