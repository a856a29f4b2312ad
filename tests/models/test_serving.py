"""The serving model (models/serving*.py): hand-derived steps, memory, speculation, energy and cost; invariants."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roofline.models.estimate import ceilings, pass_totals, time_op
from roofline.models.memory import GIB, memory_footprint
from roofline.models.ops import build_ops
from roofline.models.serving import (
    ServingMix,
    ServingOptions,
    Speculation,
    decode_slots,
    frontier,
    kv_cache_plan,
    max_concurrency_for_targets,
    mixed_step_ops,
    step_time_s,
)
from tests.conftest import model, scenario

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("estimate_name", ["bound", "expected"])
@pytest.mark.parametrize("model_id", ["llama-3.1-8b", "mixtral-8x7b", "deepseek-v3", "gemma-2-9b"])
def test_one_request_without_prefill_is_todays_batch_one_decode_step(model_id, estimate_name):
    """D = 1, no prefill in flight, q = 1: the step is build_ops(decode, batch=1) at the same context, op for op."""
    s = scenario("h100-sxm", model_id, tp=8 if model_id == "deepseek-v3" else 1)
    c = ceilings(s.hardware, s.precisions.compute_dtype, estimate_name)
    step = mixed_step_ops(s, decode_requests=1, context_tokens=3000.0, prefill_prompts=0.0, prompt_tokens=2048)
    today = build_ops(s, "decode", batch=1, context=3000.0)
    assert Counter(op.name for op in step) == Counter(op.name for op in today)
    assert pass_totals(step, c).time_s == pytest.approx(pass_totals(today, c).time_s, rel=1e-12)


def test_mixed_step_is_the_sum_of_its_ops_and_reads_weights_once():
    """Llama-3.1-8B on one H100, D = 8 decodes at context 1150 plus r = 0.5 prompts of P = 1000 tokens.

    Tokens through the GEMMs: T = 8 + 0.5 * 1000 = 508. qkv_proj: K = H = 4096, N = 32*128 + 8*(128+128) = 6144,
    FLOPs 2 * 508 * 4096 * 6144 = 25,568,477,184 per layer. Weights are streamed once per step, so the step's weight
    bytes equal those of a plain pass over 508 tokens (dense model, fused attention: no weights in attention; the LM
    head's weights do not depend on its rows). The step time is the sum over its ops of count x op time.
    """
    s = scenario("h100-sxm", "llama-3.1-8b")
    c = ceilings(s.hardware, s.precisions.compute_dtype, "expected")
    ops = mixed_step_ops(s, decode_requests=8, context_tokens=1150.0, prefill_prompts=0.5, prompt_tokens=1000)
    qkv = next(op for op in ops if op.name == "qkv_proj")
    assert qkv.flops == 2 * 508 * 4096 * 6144 == 25_568_477_184
    plain = pass_totals(build_ops(s, "decode", batch=508, context=1150.0), c)
    totals = pass_totals(ops, c)
    assert totals.weight_bytes == pytest.approx(plain.weight_bytes, rel=1e-12)
    assert totals.time_s == pytest.approx(sum(op.count * time_op(op, c).time_s for op in ops), rel=1e-12)
    # one attention kernel for decode and prefill: FLOPs of 8 decode queries over 1150 keys, 32 heads, plus half a
    # prompt's causal pairs 0.5 * 32 * 1000*1001/2, each 2*(128+128) + 5 FLOPs
    attention = next(op for op in ops if op.name == "attention")
    pairs = 8 * 1150 * 32 + 0.5 * 32 * 1000 * 1001 / 2
    assert attention.flops == pytest.approx(pairs * (2 * 256 + 5), rel=1e-12)


def test_frontier_mean_step_is_the_mixed_step_at_the_mean_context():
    """At concurrency C the frontier's mean step is the step of D = C decodes at P + G/2 with r = C/G prompts
    prefilled: C = 16, P = 2048, G = 300: context 2198, r = 16/300; e2e = TTFT + (G - 1) * ITL."""
    s = scenario("h100-sxm", "llama-3.1-8b")
    mix = ServingMix(prompt_tokens=2048, output_tokens=300)
    c = ceilings(s.hardware, s.precisions.compute_dtype, "expected")
    ops = mixed_step_ops(s, decode_requests=16, context_tokens=2198.0, prefill_prompts=16 / 300, prompt_tokens=2048)
    point = frontier(s, mix, [16]).points[0]
    assert point.step_time_s == pytest.approx(pass_totals(ops, c).time_s, rel=1e-12)
    assert point.tokens_per_s_per_user == pytest.approx(1 / point.itl_s)
    assert point.prefill_chunks == 1  # the group's prompts fit one step's budget
    assert point.e2e_s == pytest.approx(point.ttft_s + 299 * point.itl_s)


@pytest.mark.parametrize(("k", "a", "expected"), [
    (4, 0.8, (1 - 0.8 ** 5) / 0.2),  # 1 + 0.8 + 0.64 + 0.512 + 0.4096 = 3.3616
    (4, 0.0, 1.0),  # nothing accepted: the verification's own token
    (3, 1.0, 4.0),  # everything accepted: k + 1
    (1, 0.5, 1.5),  # 1 + 0.5
])
def test_speculation_tokens_per_step(k, a, expected):
    assert Speculation(tokens=k, acceptance=a).tokens_per_step == pytest.approx(expected, rel=1e-12)
    assert Speculation(tokens=k, acceptance=a).tokens_per_step == pytest.approx(sum(a ** i for i in range(k + 1)))


def test_speculation_pays_when_memory_bound_and_costs_when_compute_bound():
    """Llama-3.1-70B on 4x H100 with a Llama-3.1-8B draft, k = 4, a = 0.7 (tau = 2.77): at one request the step is
    weight streaming and the verification of 5 tokens costs about one step; at 512 requests it is compute-bound and
    verifying 5 tokens per request costs about 5 steps' FLOPs for 2.77 tokens."""
    s = scenario("h100-sxm", "llama-3.1-70b", tp=4)
    mix = ServingMix(prompt_tokens=512, output_tokens=256)
    spec = ServingOptions(speculation=Speculation(tokens=4, acceptance=0.7, draft=model("llama-3.1-8b")))
    plain = frontier(s, mix, [1, 512])
    fast = frontier(s, mix, [1, 512], options=spec)
    assert plain.points[0].limited_by == "memory" and plain.points[1].limited_by == "compute"
    assert fast.points[0].tokens_per_s_per_user > 1.3 * plain.points[0].tokens_per_s_per_user
    assert fast.points[1].tokens_per_s_per_device < 0.9 * plain.points[1].tokens_per_s_per_device


def test_block_based_memory_limit_by_hand():
    """Llama-3.1-8B bf16 on one H100 (80 GiB), vLLM defaults (0.9, 16-token blocks, 8192-token budget).

    vLLM: num_gpu_blocks = int((total * gpu_memory_utilization - non_kv) // cache_block_size), with
    cache_block_size = block_size * num_kv_heads * head_size * 2 (K and V) * num_layers * dtype_size
                     = 16 * 8 * 128 * 2 * 32 * 2 = 2,097,152 bytes.
    non-KV = weights + activation workspace + 1 GiB reserve; workspace = 8192 tokens * (2*4096 + 2*14336) * 2 bytes
    + 256 logit rows * 128,256 * 4 bytes = 603,979,776 + 131,334,144.
    P = 2048, G = 300: ceil(2348 / 16) = 147 blocks per request.
    """
    s = scenario("h100-sxm", "llama-3.1-8b")
    plan = kv_cache_plan(s, ServingMix(prompt_tokens=2048, output_tokens=300))
    weights = memory_footprint(s).per_device_weights_bytes
    assert weights == model("llama-3.1-8b").params * 2
    activation = 8192 * (2 * 4096 + 2 * 14336) * 2 + 256 * 128256 * 4
    assert plan.activation_bytes == activation == 735_313_920
    assert plan.block_bytes == 16 * 8 * 128 * 2 * 32 * 2 == 2_097_152
    blocks = int((80 * GIB * 0.9 - (weights + activation + GIB)) // 2_097_152)
    assert plan.num_blocks == blocks
    assert plan.blocks_per_request == 147
    assert plan.max_concurrency == blocks // 147


def test_shared_prefix_blocks_are_stored_once():
    """S = 1024 of P = 2048 shared, hit rate 1: one copy of 64 blocks; each request keeps 2048 + 300 - 1024 = 1324
    tokens of its own, ceil(1324 / 16) = 83 blocks."""
    s = scenario("h100-sxm", "llama-3.1-8b")
    plan = kv_cache_plan(s, ServingMix(prompt_tokens=2048, output_tokens=300, prefix_tokens=1024, prefix_hit_rate=1.0))
    assert plan.shared_prefix_blocks == 64 and plan.blocks_per_request == 83
    assert plan.max_concurrency == (plan.num_blocks - 64) // 83


def test_prefix_caching_cuts_the_prefill_work():
    """Hit rate 1 on a 1024-token prefix of a 2048-token prompt: GEMM tokens per prompt 2048 -> 1024, attention
    pairs pairs(2048) - pairs(1024) = 2,098,176 - 524,800 = 1,573,376 per head."""
    s = scenario("h100-sxm", "llama-3.1-8b")
    kw = dict(decode_requests=1e-9, context_tokens=2048.0, prefill_prompts=1.0, prompt_tokens=2048)
    full = {op.name: op for op in mixed_step_ops(s, **kw)}
    cached = {op.name: op for op in mixed_step_ops(s, prefix_tokens=1024, prefix_hit_rate=1.0, **kw)}
    per_pair = 32 * (2 * 256 + 5)
    decode_part = 1e-9 * 2048 * per_pair
    assert full["attention"].flops - decode_part == pytest.approx(2_098_176 * per_pair, rel=1e-9)
    assert cached["attention"].flops - decode_part == pytest.approx(1_573_376 * per_pair, rel=1e-9)
    assert cached["qkv_proj"].flops / full["qkv_proj"].flops == pytest.approx((1024 + 1e-9) / (2048 + 1e-9))


def test_energy_and_cost_arithmetic():
    """J/token = power * devices / (output tokens/s); $/M = price * devices / 3600 / (output tokens/s) * 1e6, with
    the closed loop's output tokens/s = C * G / e2e (Little's law). 2x H100 at 500 W and $3/device-hour, C = 8."""
    s = scenario("h100-sxm", "llama-3.1-8b", tp=2)
    mix = ServingMix(prompt_tokens=1000, output_tokens=200)
    point = frontier(s, mix, [8], options=ServingOptions(power_w=500.0, price_usd_per_hour=3.0)).points[0]
    out_per_s = 8 * 200 / point.e2e_s
    assert point.step_time_s == pytest.approx(step_time_s(s, mix, 8))
    assert point.requests_per_s == pytest.approx(8 / point.e2e_s)
    assert point.joules_per_token == pytest.approx(500.0 * 2 / out_per_s)
    assert point.usd_per_million_tokens == pytest.approx(3.0 * 2 / 3600 / out_per_s * 1e6)
    assert point.tokens_per_s_per_device == pytest.approx(out_per_s / 2)
    assert point.total_tokens_per_s_per_device == pytest.approx(out_per_s * (1 + 1000 / 200) / 2)
    # the board power is the default (tdp_w, 700 W for H100 SXM); no price known: None, never a made-up one
    unpriced = replace(s, hardware=replace(s.hardware, price_usd_per_hour=None))
    default = frontier(unpriced, mix, [8]).points[0]
    assert default.joules_per_token == pytest.approx(700.0 * 2 / out_per_s)
    assert default.usd_per_million_tokens is None


HARDWARE = ["h100-sxm", "h200", "mi300x", "a100-sxm4-80gb", "l40s"]
MODELS = ["llama-3.1-8b", "mistral-7b", "qwen2.5-7b", "mixtral-8x7b", "gemma-2-9b"]
mixes = st.builds(ServingMix, prompt_tokens=st.integers(1, 16384), output_tokens=st.integers(1, 2048))
setups = st.tuples(st.sampled_from(HARDWARE), st.sampled_from(MODELS), st.sampled_from(["bound", "expected"]))


def _scenario(hw_id, model_id):
    s = scenario(hw_id, model_id)
    return s if memory_footprint(s).per_device_weights_bytes < 0.8 * s.hardware.memory_capacity_bytes else \
        scenario(hw_id, model_id, tp=2)


@SETTINGS
@given(setups, mixes)
def test_per_user_speed_never_rises_and_device_throughput_never_falls_with_concurrency(setup, mix):
    hw_id, model_id, estimate_name = setup
    s = _scenario(hw_id, model_id)
    limit = max(kv_cache_plan(s, mix).max_concurrency, 2)
    points = frontier(s, mix, sorted({1, 2, 3, 5, 8, 13, 34, 89, 233, limit // 2 or 1, limit}),
                      estimate_name).points
    users = np.array([p.tokens_per_s_per_user for p in points])
    devices = np.array([p.tokens_per_s_per_device for p in points])
    assert np.all(np.diff(users) <= 1e-9 * users[:-1])
    assert np.all(np.diff(devices) >= -1e-9 * devices[:-1])


@SETTINGS
@given(setups, mixes, st.floats(0.005, 0.2), st.floats(0.05, 5.0))
def test_target_solver_meets_both_targets_and_one_more_request_does_not(setup, mix, itl_s, ttft_s):
    hw_id, model_id, estimate_name = setup
    s = _scenario(hw_id, model_id)
    result = max_concurrency_for_targets(s, mix, itl_s=itl_s, ttft_s=ttft_s, estimate_name=estimate_name)
    limit = kv_cache_plan(s, mix).max_concurrency
    n = result.max_concurrency
    if n >= 1:
        point = frontier(s, mix, [n], estimate_name).points[0]
        assert point.itl_s <= itl_s and point.ttft_s <= ttft_s and point.fits
        assert result.point == point
    if n < limit:
        over = frontier(s, mix, [n + 1], estimate_name).points[0]
        assert over.itl_s > itl_s or over.ttft_s > ttft_s


def test_concurrency_beyond_the_budget_waits_in_the_queue():
    """P = 8000, G = 10 with an 8192-token budget: D_cap = 8192 / (1 + 8000/10) = 10.23 requests decode at once;
    the engine completes at most lambda_cap = D_cap / (G * t(D_cap)) requests/s, so at C = 20 e2e is C / lambda_cap
    and the rest of it is queue; output tokens/s is G * lambda_cap from there on."""
    s = scenario("h100-sxm", "llama-3.1-8b")
    mix = ServingMix(prompt_tokens=8000, output_tokens=10)
    d_cap = 8192 / 801
    assert decode_slots(mix, ServingOptions()) == pytest.approx(d_cap)
    low, high, higher = frontier(s, mix, [10, 20, 40]).points
    assert low.decoding_requests == 10 and high.decoding_requests == pytest.approx(d_cap)
    capacity = d_cap / (10 * step_time_s(s, mix, d_cap))
    assert high.e2e_s == pytest.approx(20 / capacity) and higher.e2e_s == pytest.approx(40 / capacity)
    assert high.queue_s > low.queue_s >= 0.0
    assert high.tokens_per_s_per_device == pytest.approx(10 * capacity)
    assert higher.tokens_per_s_per_device == pytest.approx(high.tokens_per_s_per_device)
    assert math.isclose(high.itl_s, frontier(s, mix, [11]).points[0].itl_s)
