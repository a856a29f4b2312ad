"""Sums over the decode contexts in closed form (models/context_sums.py) against the steps summed one by one."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roofline.models.context_sums import (
    _split,
    context_pieces,
    context_sums,
    op_time_sum_s,
    piece_sums,
    sample_contexts,
)
from roofline.models.errors import ModelInputError
from roofline.models.estimate import ceilings, time_op
from roofline.models.gap import decode_gap
from roofline.models.inference import (
    decode_contexts,
    decode_step_totals,
    estimate,
    generation_ops,
    mean_decode_step_s,
)
from roofline.models.ops import Op
from tests.conftest import scenario

REL = 1e-9
# sliding windows: gpt-oss-20b (128), phi-3-mini (2047), gemma-2-9b and mistral-7b (4096); MoE: mixtral, gpt-oss,
# qwen3, deepseek-v3 (MLA as well)
MODELS = ["llama-3-8b", "mistral-7b", "mixtral-8x7b", "gemma-2-9b", "phi-3-mini", "gpt-oss-20b", "qwen3-235b-a22b",
          "deepseek-v3", "qwen2.5-7b", "llama-3.1-70b",
          # chunked attention (8192), DeepSeek sparse attention (top 2048), Gemma 3's 1024 window, linear/Mamba layers
          "llama-4-scout", "deepseek-v3.2-exp", "gemma-3-27b", "qwen3-next-80b-a3b", "nemotron-h-8b", "jamba-v0.1",
          "glm-4.5", "kimi-k2", "qwen3-8b"]
HARDWARE = ["h100-sxm", "a100-sxm4-80gb", "mi300x", "l4", "rtx-4090", "tpu-v5e", "m2-ultra", "v100-sxm2"]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FIELDS = ("time_s", "flops", "memory_bytes", "weight_bytes", "kv_read_bytes", "kv_write_bytes", "activation_bytes",
          "compute_s", "memory_s", "comm_s", "overhead_s")


def _scenario(hw, m, b, p, g, w, a, kv, flash, tp):
    try:
        return scenario(hw, m, batch=b, prompt=p, output=g, weights=w, activations=a, kv=kv, flash=flash, tp=tp)
    except ModelInputError:  # tp does not divide the heads, or the device has no interconnect
        return scenario(hw, m, batch=b, prompt=p, output=g, weights=w, activations=a, kv=kv, flash=flash)


scenarios = st.builds(
    _scenario, st.sampled_from(HARDWARE), st.sampled_from(MODELS), st.integers(1, 512),
    st.one_of(st.integers(1, 256), st.integers(1, 8192)), st.one_of(st.integers(1, 16), st.integers(1, 6000)),
    st.sampled_from(["bf16", "fp8", "int4", "q4_k_m"]), st.sampled_from(["bf16", "fp8"]),
    st.sampled_from(["bf16", "fp8", "int4"]), st.booleans(), st.sampled_from([1, 2, 4, 8]),
)
estimates = st.sampled_from(["bound", "expected"])


def _step_by_step(s, name):
    """Every decode step built and timed on its own context, as a (contexts,) array per field."""
    c = ceilings(s.hardware, s.precisions.compute_dtype, name)
    contexts = decode_contexts(s)
    t = decode_step_totals(s, c, batch=s.batching.batch_size, context=contexts)
    return {f: np.broadcast_to(getattr(t, f), contexts.shape) for f in FIELDS}


# --- the closed forms, derived by hand ---------------------------------------------------------------------------

def test_piece_sum_of_a_quadratic_is_exact_across_pieces():
    """sum_{x=1..10} x^2 = n(n+1)(2n+1)/6 = 10*11*21/6 = 385, whichever way [1, 10] is cut."""
    for pieces in (((1, 10),), ((1, 4), (5, 10)), ((1, 1), (2, 2), (3, 10))):
        assert piece_sums(sample_contexts(pieces) ** 2, pieces) == pytest.approx(385.0, rel=1e-15)
    # a number is the same at every context: 7 * 10 contexts
    assert piece_sums(7.0, ((1, 10),)) == 70.0


def _unit_ceilings(overlap=1.0, fixed_s=0.0):
    """1 FLOP/s everywhere and 1 byte/s: an op's compute time is its FLOPs, its memory time its bytes."""
    c = ceilings(scenario("h100-sxm", "llama-3-8b").hardware, "bf16", "bound")
    return replace(c, matmul_flops_per_s=1.0, attention_flops_per_s=None, vector_flops_per_s=1.0,
                   mem_bw_bytes_per_s=1.0, compute_memory_overlap=overlap, kernel_overhead_s=fixed_s)


def _op(pieces, flops, activation_bytes):
    x = sample_contexts(pieces)
    return Op(phase="decode", name="attention", kind="attention", count=1, flops=flops(x),
              activation_bytes=activation_bytes(x))


def test_a_roofline_max_that_changes_branch_is_split_where_compute_meets_memory():
    """compute c s, memory 100 s over c = 1..200: memory-bound up to c = 100, compute-bound after.
    bound (max): 100 * 100 + sum_{101..200} c = 10000 + 15050 = 25050 (one polynomial through the three
    samples (1, 100), (100.5, 100.5), (200, 200) would not give it).
    overlap 0 and 2 us per kernel: sum c + 200 * 100 + 200 * 2e-6 = 20100 + 20000 + 4e-4.
    overlap 0.5: 25050 + 0.5 * sum min = 25050 + 0.5 * (5050 + 10000) = 32575."""
    pieces = ((1, 200),)
    op = _op(pieces, lambda x: x, lambda x: np.full_like(x, 100.0))
    assert op_time_sum_s(op, _unit_ceilings(), pieces) == pytest.approx(25050.0, rel=1e-14)
    assert op_time_sum_s(op, _unit_ceilings(0.0, 2e-6), pieces) == pytest.approx(40100.0004, rel=1e-14)
    assert op_time_sum_s(op, _unit_ceilings(0.5), pieces) == pytest.approx(32575.0, rel=1e-14)
    assert piece_sums(time_op(op, _unit_ceilings()).time_s, pieces) != pytest.approx(25050.0, rel=1e-3)


def test_a_quadratic_difference_with_two_roots_splits_twice():
    """compute c^2/100 + 200, memory 3c: equal where c^2 - 300c + 20000 = 0, c = 100 and 200; compute-bound
    outside, memory-bound between. The reference adds max() over the 300 contexts one by one."""
    pieces = ((1, 300),)
    op = _op(pieces, lambda x: x * x / 100 + 200, lambda x: 3 * x)
    d = time_op(op, _unit_ceilings()).compute_s - time_op(op, _unit_ceilings()).memory_s
    parts = _split(pieces, d)  # cut after floor(root): at c = 100 and 200 (either side where a root rounds below)
    assert [(a, b) for _, a, b in parts] in ([(1, 100), (101, 200), (201, 300)], [(1, 99), (100, 199), (200, 300)],
                                             [(1, 100), (101, 199), (200, 300)], [(1, 99), (100, 200), (201, 300)])
    one_by_one = sum(max(c * c / 100 + 200, 3 * c) for c in range(1, 301))
    assert op_time_sum_s(op, _unit_ceilings(), pieces) == pytest.approx(one_by_one, rel=1e-13)


def test_sliding_windows_cut_the_contexts_after_the_window():
    """gpt-oss-20b alternates 128-token windows with full attention: P = 100, G = 100 decodes c = 101..199, cut
    after c = 128; gemma-2-9b's 4096 window lies beyond c = 199, so one piece."""
    assert context_pieces(scenario("h100-sxm", "gpt-oss-20b", prompt=100, output=100)) == ((101, 128), (129, 199))
    assert context_pieces(scenario("h100-sxm", "gemma-2-9b", prompt=100, output=100)) == ((101, 199),)
    # any range, e.g. c = 1..1000 for gpt-oss-20b: cut after 128
    assert context_pieces(scenario("h100-sxm", "gpt-oss-20b"), first=1, last=1000) == ((1, 128), (129, 1000))
    # G = 1: the step that would come next, c = P + 1, alone
    assert context_pieces(scenario("h100-sxm", "gemma-2-9b", prompt=100, output=1)) == ((101, 101),)


def test_the_ops_are_built_at_a_few_contexts_whatever_the_output_length():
    """Three sample contexts per piece: the same 6 at G = 256 and at G = 1M for gpt-oss-20b (one window cut)."""
    for output in (256, 1 << 20):
        s = scenario("h100-sxm", "gpt-oss-20b", prompt=64, output=output)
        sizes = {np.size(op.flops) for op in generation_ops(s).decode_steps}
        assert sizes <= {1, 6}


# --- against the steps one by one ---------------------------------------------------------------------------------

@SETTINGS
@given(scenarios, estimates)
def test_decode_phase_equals_the_steps_summed_one_by_one(s, name):
    e = estimate(s, name)
    steps = _step_by_step(s, name)
    for field in FIELDS:
        assert getattr(e.decode.phase, field) == pytest.approx(float(np.sum(steps[field])), rel=REL), field
    assert e.decode.step_time_s == pytest.approx(float(np.mean(steps["time_s"])), rel=REL)
    assert e.decode.first_step_time_s == pytest.approx(float(steps["time_s"][0]), rel=REL)
    assert e.decode.last_step_time_s == pytest.approx(float(steps["time_s"][-1]), rel=REL)
    decode_s = float(np.sum(steps["time_s"])) if s.batching.output_tokens > 1 else 0.0
    assert e.generation_time_s == pytest.approx(e.prefill.time_s + decode_s, rel=REL)


@SETTINGS
@given(scenarios, estimates, st.lists(st.integers(1, 4096), min_size=1, max_size=4))
def test_mean_decode_step_over_batches_equals_the_grid(s, name, batches):
    """For batches other than the scenario's: the batch x context grid, evaluated op by op, averaged."""
    c = ceilings(s.hardware, s.precisions.compute_dtype, name)
    b = np.array(batches, dtype=float)
    contexts = decode_contexts(s)
    grid = decode_step_totals(s, c, batch=b[:, None], context=contexts[None, :]).time_s
    brute = np.broadcast_to(grid, (b.size, contexts.size)).mean(axis=1)
    np.testing.assert_allclose(mean_decode_step_s(s, c, b), brute, rtol=REL)


@SETTINGS
@given(scenarios)
def test_the_gap_runs_from_the_bound_to_the_expected_mean_step(s):
    bound_step, terms, expected_step = decode_gap(s)
    assert bound_step == pytest.approx(float(np.mean(_step_by_step(s, "bound")["time_s"])), rel=REL)
    assert expected_step == pytest.approx(float(np.mean(_step_by_step(s, "expected")["time_s"])), rel=REL)
    assert bound_step + sum(t.seconds for t in terms) == pytest.approx(expected_step, rel=REL)


@pytest.mark.parametrize(("hw", "model", "flash", "name"), [
    ("h100-sxm", "deepseek-v3", True, "expected"),  # MLA attention turns memory-bound at c = 824
    ("m2-ultra", "deepseek-v3", True, "bound"),
    ("m2-ultra", "deepseek-v3", False, "expected"),  # unfused: scores and weighted sum both cross
    ("tpu-v5e", "deepseek-v3", True, "expected"),
])
def test_scenarios_whose_attention_changes_branch_match_the_steps(hw, model, flash, name):
    """Cases where an op's compute and memory times cross inside the decode contexts (checked: the split happens),
    and the closed form still equals the steps one by one."""
    s = scenario(hw, model, prompt=1, output=4000, flash=flash)
    c = ceilings(s.hardware, s.precisions.compute_dtype, name)
    pieces = context_pieces(s)
    ops = generation_ops(s).decode_steps
    crossing = [op.name for op in ops if np.ndim(time_op(op, c).time_s) and len(_split(pieces, np.broadcast_to(
        time_op(op, c).compute_s - time_op(op, c).memory_s, (3 * len(pieces),)))) > len(pieces)]
    assert crossing
    sums = context_sums(ops, c, pieces)
    steps = _step_by_step(s, name)
    for field in FIELDS:
        assert getattr(sums.total, field) == pytest.approx(float(np.sum(steps[field])), rel=REL), field


@pytest.mark.parametrize(("model", "prompt", "output", "pieces"), [
    ("llama-4-scout", 8000, 9000, 3),  # chunk boundaries at 8192 and 16384: c = 8001..16999
    ("deepseek-v3.2-exp", 1000, 3000, 2),  # the top 2048 keys: attention stops growing after c = 2048
    ("gemma-3-27b", 500, 1000, 2),  # the 1024 window
])
@pytest.mark.parametrize("name", ["bound", "expected"])
def test_chunks_and_top_k_inside_the_decode_contexts_match_the_steps(model, prompt, output, pieces, name):
    """Chunked attention restarts at 1 key after each multiple of the chunk; sparse attention caps at k keys: both
    cut the decode contexts there, and the closed form still equals the steps one by one."""
    s = scenario("h100-sxm", model, batch=8, prompt=prompt, output=output, weights="fp8")
    assert len(context_pieces(s)) == pieces
    e = estimate(s, name)
    steps = _step_by_step(s, name)
    for field in FIELDS:
        assert getattr(e.decode.phase, field) == pytest.approx(float(np.sum(steps[field])), rel=REL), field


@pytest.mark.parametrize("model", ["gpt-oss-20b", "gemma-2-9b", "mistral-7b", "phi-3-mini"])
@pytest.mark.parametrize("name", ["bound", "expected"])
def test_windows_inside_the_decode_contexts_match_the_steps(model, name):
    """The window lies between P+1 and P+G-1 (a cut), batch 64 so that KV traffic matters."""
    s = scenario("h100-sxm", model, batch=64, prompt=100, output=5000)
    assert len(context_pieces(s)) == 2
    e = estimate(s, name)
    steps = _step_by_step(s, name)
    for field in FIELDS:
        assert getattr(e.decode.phase, field) == pytest.approx(float(np.sum(steps[field])), rel=REL), field
