"""Invariants of the model over random scenarios (hypothesis)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roofline.models.estimate import ceilings
from roofline.models.inference import decode_contexts, decode_step_totals, estimate, mean_decode_context
from roofline.models.memory import memory_footprint
from roofline.models.ops import causal_attention_pairs, expected_distinct_experts
from roofline.models.scenario import Batching
from tests.conftest import scenario

MODELS = ["llama-2-7b", "llama-3-8b", "mistral-7b", "mixtral-8x7b", "gemma-2-9b", "phi-3-mini", "gpt-oss-20b",
          "qwen3-235b-a22b", "deepseek-v3", "qwen2.5-7b"]
HARDWARE = ["h100-sxm", "a100-sxm4-80gb", "mi300x", "l4", "rtx-4090", "tpu-v5e", "m2-ultra", "v100-sxm2"]
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scenarios = st.builds(
    lambda hw, m, b, p, g, w, kv, flash: scenario(hw, m, batch=b, prompt=p, output=g, weights=w, kv=kv, flash=flash),
    st.sampled_from(HARDWARE), st.sampled_from(MODELS), st.integers(1, 512), st.integers(1, 32768),
    st.integers(1, 2048), st.sampled_from(["bf16", "fp8", "int4", "q4_k_m"]), st.sampled_from(["bf16", "fp8", "int4"]),
    st.booleans(),
)


@SETTINGS
@given(scenarios)
def test_bound_is_never_slower_than_expected(s):
    """The bound uses spec ceilings and no overheads: nothing real beats it."""
    bound, expected = estimate(s, "bound"), estimate(s, "expected")
    assert bound.prefill.time_s <= expected.prefill.time_s
    assert bound.decode.step_time_s <= expected.decode.step_time_s
    assert bound.generation_time_s <= expected.generation_time_s
    assert 0 <= bound.decode.phase.idle_core_pct < 100
    assert 0 < bound.decode.phase.mbu_pct <= 100 + 1e-9


@SETTINGS
@given(scenarios, st.integers(2, 64))
def test_batching_raises_aggregate_and_lowers_per_sequence_speed(s, factor):
    """A bigger batch never makes a step shorter, and never lowers aggregate tokens/s."""
    c = ceilings(s.hardware, s.precisions.compute_dtype, "bound")
    b = s.batching.batch_size
    small = decode_step_totals(s, c, batch=b, context=s.batching.prompt_tokens + 1)
    big = decode_step_totals(s, c, batch=b * factor, context=s.batching.prompt_tokens + 1)
    assert big.time_s >= small.time_s
    assert b * factor / big.time_s >= b / small.time_s * (1 - 1e-12)


@SETTINGS
@given(scenarios, st.integers(1, 100_000))
def test_step_time_grows_with_context(s, extra):
    c = ceilings(s.hardware, s.precisions.compute_dtype, "expected")
    b = s.batching.batch_size
    near = decode_step_totals(s, c, batch=b, context=100)
    far = decode_step_totals(s, c, batch=b, context=100 + extra)
    assert far.time_s >= near.time_s
    assert far.kv_read_bytes >= near.kv_read_bytes


@SETTINGS
@given(scenarios)
def test_vectorised_contexts_match_scalar_evaluation(s):
    """One numpy call over many contexts gives the same step times as scalar calls."""
    c = ceilings(s.hardware, s.precisions.compute_dtype, "bound")
    contexts = np.array([1.0, 17.0, 4096.0, 50_000.0])
    vector = decode_step_totals(s, c, batch=s.batching.batch_size, context=contexts).time_s
    scalars = [float(decode_step_totals(s, c, batch=s.batching.batch_size, context=x).time_s) for x in contexts]
    np.testing.assert_allclose(vector, scalars, rtol=1e-12)


@SETTINGS
@given(scenarios)
def test_largest_batch_that_fits_is_exact(s):
    """max_batch fits; one more sequence does not."""
    from dataclasses import replace

    mem = memory_footprint(s)
    if mem.max_batch == 0:
        return
    at = replace(s, batching=replace(s.batching, batch_size=mem.max_batch))
    beyond = replace(s, batching=replace(s.batching, batch_size=mem.max_batch + 1))
    assert memory_footprint(at).fits
    assert not memory_footprint(beyond).fits


@given(st.integers(1, 512), st.integers(1, 16), st.integers(1, 10_000))
def test_distinct_experts_between_active_and_all(experts, top_k, tokens):
    top_k = min(top_k, experts)
    distinct = float(expected_distinct_experts(experts, top_k, tokens))
    assert top_k - 1e-9 <= distinct <= experts + 1e-9
    assert float(expected_distinct_experts(experts, top_k, tokens + 1)) >= distinct - 1e-9


@given(st.integers(1, 100_000), st.one_of(st.none(), st.integers(1, 10_000)))
def test_causal_pairs_match_the_sum(prompt, window):
    """Closed form equals sum(min(i, W) for i in 1..P) (checked exactly on small prompts)."""
    closed = float(causal_attention_pairs(prompt, window))
    if prompt <= 3000:
        assert closed == sum(min(i, window or i) for i in range(1, prompt + 1))
    assert closed <= prompt * (prompt + 1) / 2


def test_batching_rejects_nonsense():
    import pytest

    from roofline.models.errors import ModelInputError

    for bad in ({"batch_size": 0}, {"prompt_tokens": -1}, {"output_tokens": 2.5}, {"kv_compression_ratio": 0.5}):
        with pytest.raises(ModelInputError):
            Batching(**bad)


@SETTINGS
@given(scenarios)
def test_every_time_is_positive_and_finite(s):
    for name in ("bound", "expected"):
        e = estimate(s, name)
        for value in (e.prefill.time_s, e.decode.step_time_s, e.generation_time_s, e.decode.tokens_per_s,
                      e.output_tokens_per_s):
            assert np.isfinite(value) and value > 0


@SETTINGS
@given(scenarios)
def test_lower_precision_never_slows_the_bound(s):
    """Narrower weights move fewer bytes and (at most) the same FLOPs: the bound cannot get slower."""
    from dataclasses import replace

    wide = replace(s, precisions=replace(s.precisions, weights="bf16", expert_weights=None))
    narrow = replace(s, precisions=replace(s.precisions, weights="int4", expert_weights=None))
    assert estimate(narrow, "bound").decode.step_time_s <= estimate(wide, "bound").decode.step_time_s * (1 + 1e-12)


@SETTINGS
@given(scenarios)
def test_memory_parts_add_up(s):
    m = memory_footprint(s)
    per_device = (m.per_device_weights_bytes + m.per_device_kv_cache_bytes + m.per_device_activation_bytes
                  + m.per_device_runtime_reserve_bytes)
    assert m.per_device_bytes == per_device
    assert m.total_bytes == m.weights_bytes + m.kv_cache_bytes + m.activation_bytes + m.runtime_reserve_bytes
    assert m.fits == (m.per_device_bytes <= m.capacity_bytes)


@SETTINGS
@given(scenarios)
def test_batch_sweep_agrees_with_single_evaluations(s):
    """The batch sweep (per-sequence attention scaled by B) equals the scenario's own mean decode
    step, which evaluates every context at the scenario's batch directly: the separation is exact."""
    from roofline.models.sweeps import batch_sweep

    b = s.batching.batch_size
    for name in ("bound", "expected"):
        sweep = batch_sweep(s, np.array([1.0, float(b), 3.0 * b]), name)
        assert float(sweep.step_time_s[1]) == pytest.approx(estimate(s, name).decode.step_time_s, rel=1e-9)


@SETTINGS
@given(scenarios)
def test_batch_sweep_equals_a_brute_force_grid(s):
    """Against the batch x context grid evaluated op by op, at batches that are not the scenario's."""
    from roofline.models.inference import decode_contexts
    from roofline.models.sweeps import batch_sweep

    batches = np.array([1.0, 7.0, 256.0])
    contexts = decode_contexts(s)[:64]
    short = replace(s, batching=replace(s.batching, output_tokens=contexts.size + 1))
    c = ceilings(s.hardware, s.precisions.compute_dtype, "expected")
    grid = decode_step_totals(short, c, batch=batches[:, None], context=contexts[None, :]).time_s
    brute = np.broadcast_to(grid, (batches.size, contexts.size)).mean(axis=1)
    np.testing.assert_allclose(batch_sweep(short, batches, "expected").step_time_s, brute, rtol=1e-9)


@SETTINGS
@given(scenarios, st.floats(1.0, 8.0))
def test_kv_compression_never_slows_decode(s, ratio):
    from dataclasses import replace

    compressed = replace(s, batching=replace(s.batching, kv_compression_ratio=ratio))
    assert estimate(compressed, "bound").decode.step_time_s <= estimate(s, "bound").decode.step_time_s * (1 + 1e-12)
    assert memory_footprint(compressed).kv_cache_bytes <= memory_footprint(s).kv_cache_bytes


@SETTINGS
@given(scenarios)
def test_flash_attention_never_slows_prefill(s):
    from dataclasses import replace

    fused = replace(s, batching=replace(s.batching, flash_attention=True))
    unfused = replace(s, batching=replace(s.batching, flash_attention=False))
    assert estimate(fused, "bound").prefill.time_s <= estimate(unfused, "bound").prefill.time_s * (1 + 1e-12)


term = st.one_of(st.floats(0, 1e3, allow_nan=False), st.just(0.0), st.just(1.0))


@given(term, term, term)
def test_limited_by_of_numbers_is_the_array_rule_for_one_element(memory_s, compute_s, comm_s):
    """Plain numbers take a shortcut; it must name what the per-element rule names (ties: memory, then compute)."""
    from roofline.models.estimate import OpTiming

    scalar = OpTiming(op=None, compute_s=compute_s, memory_s=memory_s, comm_s=comm_s, overhead_s=0.0, time_s=0.0)
    array = OpTiming(op=None, compute_s=np.array([compute_s]), memory_s=np.array([memory_s]),
                     comm_s=np.array([comm_s]), overhead_s=0.0, time_s=0.0)
    assert scalar.limited_by == str(array.limited_by[0])


@SETTINGS
@given(scenarios)
def test_mean_decode_context_is_the_mean_of_the_steps_contexts(s):
    """P + G/2 (P + 1 for G <= 2), worked out, equals the mean of the contexts the decode steps attend to."""
    assert mean_decode_context(s) == float(np.mean(decode_contexts(s)))


@SETTINGS
@given(scenarios, st.sampled_from(["bound", "expected"]))
def test_decode_phase_totals_are_the_steps_summed_one_by_one(s, name):
    """The decode phase multiplies a context-independent total by the number of steps: the same as building every
    step's totals and adding them up (to rounding)."""
    e = estimate(s, name)
    c = ceilings(s.hardware, s.precisions.compute_dtype, name)
    contexts = decode_contexts(s)
    per_step = decode_step_totals(s, c, batch=s.batching.batch_size, context=contexts)
    for field in ("time_s", "flops", "memory_bytes", "weight_bytes", "kv_read_bytes", "kv_write_bytes",
                  "activation_bytes", "compute_s", "memory_s", "comm_s", "overhead_s"):
        summed = float(np.sum(np.broadcast_to(getattr(per_step, field), contexts.shape)))
        assert getattr(e.decode.phase, field) == pytest.approx(summed, rel=1e-12), field
