"""The model against numbers derived by hand (each derivation is in the test's docstring).

Llama-2-7B (config.json): H = 4096, 32 layers, 32 heads = 32 KV heads (MHA), d = 128,
MLP width I = 11008, vocabulary V = 32000, untied LM head. H100 SXM: 3.35e12 B/s,
989.4e12 dense bf16 FLOP/s (NVIDIA datasheet; sparse figures halved).
"""

from __future__ import annotations

import math

import pytest

from roofline.models.estimate import ceilings, time_op
from roofline.models.inference import decode_step_totals, estimate
from roofline.models.memory import memory_footprint
from roofline.models.ops import build_ops, expected_distinct_experts
from tests.conftest import scenario

H100_BW = 3.35e12
H100_BF16 = 989.4e12

# Weight bytes one Llama-2-7B decode step reads at bf16 (2 B/param):
#   per layer: qkv 4096*12288*2 = 100,663,296; o 4096*4096*2 = 33,554,432;
#              gate_up 4096*22016*2 = 180,355,072; down 11008*4096*2 = 90,177,536;
#              2 norms 2*4096*2 = 16,384                       -> 404,766,720 per layer
#   32 layers 12,952,535,040 + LM head 4096*32000*2 = 262,144,000 + final norm 8,192
#   + B embedding rows of 8,192 (the table itself is not streamed)
LLAMA2_7B_WEIGHT_BYTES_EXCEPT_EMBEDDING_ROWS = 32 * 404_766_720 + 262_144_000 + 8_192
# KV read per sequence at context c: 32 layers * c * 32 heads * (128 + 128) * 2 B = 524,288 * c
LLAMA2_7B_KV_BYTES_PER_CONTEXT_TOKEN = 524_288


def _bound_decode(s, batch, context):
    c = ceilings(s.hardware, s.precisions.compute_dtype, "bound")
    return decode_step_totals(s, c, batch=batch, context=context)


def test_llama2_7b_h100_batch1_decode():
    """Batch 1, context 1024, bound.

    Bytes: weights 13,214,687,232 + 8,192 (one embedding row) = 13,214,695,424;
    KV 524,288 * 1024 = 536,870,912; activations about 10.6 MB (0.08 %).
    Every op is memory-bound, so step = 13.7627e9 B / 3.35e12 B/s = 4.108 ms -> 243.4 tok/s.
    FLOPs = 2 per weight (13.21e9) + attention 32 layers * 32 heads * 1024 keys * (2*256 + 5)
    = 0.542e9 -> 13.76e9; useful 13.76e9 / 4.108e-3 = 3.35e12 FLOP/s (about 1 FLOP per byte
    times the bandwidth), so idle cores = 1 - 3.35e12 / 989.4e12 = 99.66 %.
    """
    s = scenario("h100-sxm", "llama-2-7b", batch=1, prompt=1024, output=2)
    t = _bound_decode(s, 1, 1024)
    assert t.weight_bytes == LLAMA2_7B_WEIGHT_BYTES_EXCEPT_EMBEDDING_ROWS + 8_192
    assert t.kv_read_bytes == LLAMA2_7B_KV_BYTES_PER_CONTEXT_TOKEN * 1024
    assert t.activation_bytes == pytest.approx(10.6e6, rel=0.01)
    assert 1 / t.time_s == pytest.approx(243.4, rel=2e-3)
    idle_pct = 100 * (1 - t.flops / t.time_s / H100_BF16)
    assert idle_pct == pytest.approx(99.66, abs=0.01)


def test_llama2_7b_h100_batch64_decode():
    """Batch 64, context 1024, bound.

    Weights are read once for the whole batch: 13,214,687,232 + 64 rows * 8,192
    = 13,215,211,520 B. KV grows with the batch: 64 * 536,870,912 = 34,359,738,368 B.
    Activations: 64 x about 10.6 MB = 0.68e9 B. Total 48.29e9 B / 3.35e12 = 14.41 ms per step:
    69.4 tok/s per sequence (3.5x slower than batch 1), 4,440 tok/s aggregate (18x more).
    FLOPs: 64 * 13.76e9 = 880.6e9 -> 61.1e12 FLOP/s -> idle cores 1 - 61.1/989.4 = 93.8 %.
    The weight GEMMs reach an intensity of about 64 FLOP/B (still far below the 295 ridge).
    """
    s = scenario("h100-sxm", "llama-2-7b", batch=64, prompt=1024, output=2)
    t = _bound_decode(s, 64, 1024)
    assert t.weight_bytes == LLAMA2_7B_WEIGHT_BYTES_EXCEPT_EMBEDDING_ROWS + 64 * 8_192
    assert t.kv_read_bytes == 64 * LLAMA2_7B_KV_BYTES_PER_CONTEXT_TOKEN * 1024
    assert t.time_s == pytest.approx(48.29e9 / H100_BW, rel=2e-3)
    assert 1 / t.time_s == pytest.approx(69.4, rel=2e-3)
    assert 64 / t.time_s == pytest.approx(4440, rel=2e-3)
    assert 100 * (1 - t.flops / t.time_s / H100_BF16) == pytest.approx(93.8, abs=0.05)
    qkv = next(op for op in build_ops(s, "decode", batch=64, context=1024) if op.name == "qkv_proj")
    # 2*64*K*N / (K*N*2 + 64*(K+N)*2) with K = 4096, N = 12288 -> 62.7
    assert float(qkv.arithmetic_intensity_flops_per_byte) == pytest.approx(62.7, abs=0.05)


def test_llama2_7b_report_uses_the_generation_mean():
    """Mean step over contexts P+1..P+G-1 equals the step at the mean context P + G/2 (KV is linear in c).

    P = 1024, G = 257: contexts 1025..1280, mean 1152.5. Bound step there:
    (13,214,695,424 + 524,288 * 1152.5 + 10.6e6 activations) / 3.35e12.
    """
    s = scenario("h100-sxm", "llama-2-7b", batch=1, prompt=1024, output=257)
    e = estimate(s, "bound")
    expected_step_s = (13_214_695_424 + 524_288 * 1152.5 + 10.6e6) / H100_BW
    assert e.decode.step_time_s == pytest.approx(expected_step_s, rel=1e-3)
    assert e.decode.steps == 256
    assert e.generation_time_s == pytest.approx(e.prefill.time_s + 256 * e.decode.step_time_s, rel=1e-9)


@pytest.mark.parametrize(("batch", "experts"), [(1, 2.0), (4, 8 * (1 - 0.75**4)), (256, 8.0)])
def test_mixtral_expert_traffic(batch, experts):
    """Mixtral-8x7B: E = 8 experts, k = 2, H = 4096, expert width 14336, 32 layers.

    One expert is 3 * 4096 * 14336 = 176,160,768 weights = 352,321,536 B at bf16.
    A batch of T tokens touches 8 * (1 - (1 - 2/8)^T) experts per layer in expectation:
    T = 1 -> 2 (exactly the active set), T = 4 -> 5.47, T = 256 -> 8.0 (all of them).
    Expert weight bytes per step = 32 layers * experts * 352,321,536.
    """
    s = scenario("h100-sxm", "mixtral-8x7b", batch=batch, prompt=128, output=2)
    ops = build_ops(s, "decode", batch=batch, context=129)
    expert_bytes = sum(op.count * op.weight_bytes for op in ops if op.name.startswith("experts "))
    assert expected_distinct_experts(8, 2, batch) == pytest.approx(experts)
    assert expert_bytes == pytest.approx(32 * experts * 352_321_536, rel=1e-12)


def test_llama3_8b_kv_bytes_gqa():
    """Llama-3-8B: 8 KV heads of 32 query heads, d = 128, 32 layers.

    KV per token = 32 layers * 8 heads * (128 + 128) * 2 B = 131,072 B (128 KiB), a quarter of
    what MHA would store. Batch 1 with 8192 cached tokens (P 4096 + G 4096) = exactly 1 GiB.
    """
    s = scenario("h100-sxm", "llama-3-8b", batch=1, prompt=4096, output=4096)
    assert memory_footprint(s).kv_cache_bytes == 1024**3
    s4 = scenario("h100-sxm", "llama-3-8b", batch=4, prompt=4096, output=4096, kv="fp8")
    assert memory_footprint(s4).kv_cache_bytes == 4 * 1024**3 / 2


def test_llama2_70b_memory_fit_h100_vs_h200_and_tp8():
    """Llama-2-70B: 68,976,648,192 params -> 137,953,296,384 B at bf16 (128.5 GiB).

    H100 (80 GiB): weights alone exceed one device: does not fit, largest batch 0.
    H200 (141 GiB): 141 - 128.5 - 1 (reserve) = 11.5 GiB left: fits at batch 1.
    TP8 on H100: weights 137,953,296,384 / 8 = 17,244,162,048 B per device, plus the norms every rank keeps
    whole, (80 * 2 * 8192 + 8192) params * 7/8 * 2 B = 2,308,096 B -> 17,246,470,144 B; 8 KV heads over 8
    devices -> 1 head each:
    KV per token per device = 80 layers * 1 * 256 * 2 B = 40,960 B; at P = G = 2048, 4096 tokens
    -> 167,772,160 B per sequence. Activations per device (one prefill pass of min(B*P, 8192) tokens):
    per token (2*8192 + 2*28672/8) * 2 B = 47,104 B, plus 32000/8 * 4 B = 16,000 B of logits per sequence;
    at batch 1: 2048 * 47,104 + 16,000 = 96,484,992 B.
    Free = 80 GiB - 17,246,470,144 - 1 GiB = 67,579,133,952 B. Beyond 4 sequences a pass holds the full
    8192-token chunk (385,875,968 B), so the largest batch is
    floor((67,579,133,952 - 385,875,968) / (167,772,160 + 16,000)) = 400.
    """
    single_h100 = memory_footprint(scenario("h100-sxm", "llama-2-70b", prompt=2048, output=2048))
    single_h200 = memory_footprint(scenario("h200", "llama-2-70b", prompt=2048, output=2048))
    tp8 = memory_footprint(scenario("h100-sxm", "llama-2-70b", prompt=2048, output=2048, tp=8))
    assert single_h100.weights_bytes == 137_953_296_384
    assert not single_h100.fits and single_h100.max_batch == 0
    assert single_h200.fits and single_h200.max_batch >= 1
    assert tp8.per_device_weights_bytes == 17_246_470_144
    assert tp8.per_device_kv_cache_bytes == 167_772_160
    assert tp8.per_device_activation_bytes == 96_484_992
    assert tp8.fits and tp8.max_batch == 400


def test_tp8_adds_two_all_reduces_per_layer():
    """TP8 Llama-2-70B decode at batch 1: 80 layers * 2 + 1 (embedding) all-reduces, plus one logits gather.

    Each all-reduce sends 2 * 7/8 * (1 * 8192 * 2 B) = 28,672 B per device over NVLink (450 GB/s one
    way): 63.7 ns at spec bandwidth; the expected estimate adds 8 us latency per collective. The
    logits gather sends 7/8 * 1 * 32000 * 2 B = 56,000 B.
    """
    s = scenario("h100-sxm", "llama-2-70b", tp=8, prompt=128, output=2)
    ops = build_ops(s, "decode", batch=1, context=129)
    reduces = [op for op in ops if op.name.startswith("all-reduce")]
    gathers = [op for op in ops if op.name == "all-gather (logits)"]
    assert sum(op.count for op in reduces) == 161
    assert all(op.comm_bytes == 28_672 for op in reduces)
    assert [op.comm_bytes for op in gathers] == [56_000]
    bound = ceilings(s.hardware, "bf16", "bound")
    assert bound.link_bw_bytes_per_s == 450e9
    e_bound, e_expected = estimate(s, "bound"), estimate(s, "expected")
    assert e_bound.decode.phase.comm_s == pytest.approx((161 * 28_672 + 56_000) / 450e9)
    assert e_expected.decode.phase.comm_s == pytest.approx(e_bound.decode.phase.comm_s / 0.8)
    assert e_expected.decode.phase.overhead_s >= 162 * 8e-6


def test_gpt_oss_experts_are_mxfp4_the_rest_bf16():
    """gpt-oss-120b ships MXFP4 experts (4.25 bits) and bf16 attention, router, embedding and head.

    Routed experts: 36 layers * 128 experts * (3 * 2880 * 2880 + 2 * 2880 + 2880) params =
    114,714,470,400 params -> * 4.25 / 8 B; the other 2,114,594,496 params at 2 B.
    """
    s = scenario("h100-sxm", "gpt-oss-120b", weights="bf16")
    from dataclasses import replace

    s = replace(s, precisions=replace(s.precisions, expert_weights="fp4"))
    experts = s.model.routed_expert_params_total()
    assert experts == 36 * 128 * (3 * 2880 * 2880 + 3 * 2880)
    rest = s.model.params - experts
    assert memory_footprint(s).weights_bytes == pytest.approx(experts * 4.25 / 8 + rest * 2)


def test_ridge_and_compute_dtype():
    """H100 SXM ridge at bf16 = 989.4e12 / 3.35e12 = 295.3 FLOP/B; fp8 x fp8 runs at the fp8 peak
    (1978.9e12, ridge 590.7); int4 weights with bf16 activations dequantise and run at bf16."""
    h100 = scenario("h100-sxm", "llama-3-8b").hardware
    assert h100.ridge_flops_per_byte("bf16") == pytest.approx(295.3, abs=0.05)
    assert scenario("h100-sxm", "llama-3-8b", weights="fp8", activations="fp8").precisions.compute_dtype == "fp8"
    assert scenario("h100-sxm", "llama-3-8b", weights="int4").precisions.compute_dtype == "bf16"
    assert scenario("h100-sxm", "llama-3-8b", weights="fp8").precisions.compute_dtype == "bf16"
    a100 = scenario("a100-sxm4-80gb", "llama-3-8b", weights="fp8", activations="fp8")
    assert ceilings(a100.hardware, "fp8", "bound").compute_dtype == "bf16"  # no fp8 units: falls back


def test_gguf_q4_k_m_weight_bytes():
    """q4_k_m stores 4.89 bits per weight over a Llama-class model (llama.cpp quantize README):
    Llama-3-8B's 8,030,261,248 params -> 4,908,497,188 B (4.57 GiB)."""
    s = scenario("h100-sxm", "llama-3-8b", weights="q4_k_m")
    assert s.model.params == 8_030_261_248
    assert memory_footprint(s).weights_bytes == pytest.approx(8_030_261_248 * 4.89 / 8)


def test_attention_intensity_does_not_grow_with_batch():
    """Decode attention intensity is about 2 * group / b_kv whatever the batch.

    Llama-3-8B (group 4, bf16 KV): FLOPs per key per query head 2*(128+128) + 5 = 517; bytes per
    key per KV head (128+128)*2 = 512; 4 query heads share a KV head -> 4 * 517 / 512 = 4.04
    FLOP/B before the tiny q/o traffic, at batch 1 and at batch 256 alike.
    """
    intensities = []
    for batch in (1, 256):
        s = scenario("h100-sxm", "llama-3-8b", batch=batch, prompt=4096, output=2)
        attention = next(op for op in build_ops(s, "decode", batch=batch, context=4096) if op.name == "attention")
        intensities.append(float(attention.arithmetic_intensity_flops_per_byte))
    assert intensities[0] == pytest.approx(4.04, abs=0.01)
    assert intensities[1] == pytest.approx(intensities[0], rel=1e-9)


def test_deepseek_v3_mla_latent_cache():
    """DeepSeek-V3 caches the MLA latent: (512 + 64) elements per token per layer, 61 layers,
    replicated on every TP rank: 35,136 elements = 70,272 B per token at bf16 (an MHA cache of
    128 heads * (192 + 128) would be 71x larger)."""
    s = scenario("h200", "deepseek-v3", weights="fp8", tp=8, prompt=1000, output=24)
    assert s.model.kv_elements_per_token == 61 * 576
    assert memory_footprint(s).per_device_kv_cache_bytes == 61 * 576 * 2 * 1024


def test_sliding_window_caps_attention():
    """Mistral-7B attends to at most 4096 tokens (sliding window): a decode step at context 16384
    reads the same KV as at 4096, and the cache holds at most 4096 tokens per sequence."""
    s = scenario("h100-sxm", "mistral-7b", prompt=16000, output=384)
    at_window = _bound_decode(s, 1, 4096)
    far = _bound_decode(s, 1, 16384)
    assert far.kv_read_bytes == at_window.kv_read_bytes
    assert memory_footprint(s).kv_cache_bytes == 32 * 4096 * 8 * 256 * 2


def test_pipeline_parallel_runs_stages_in_turn():
    """PP4 at batch 1: same ops as PP1 plus 3 activation sends; per-device memory is a quarter.
    Step time cannot be shorter than PP1's (stages wait for each other)."""
    pp1 = scenario("h100-sxm", "llama-2-70b", prompt=128, output=2, pp=1)
    pp4 = scenario("h100-sxm", "llama-2-70b", prompt=128, output=2, pp=4)
    assert estimate(pp4, "bound").decode.step_time_s >= estimate(pp1, "bound").decode.step_time_s
    assert memory_footprint(pp4).per_device_weights_bytes == memory_footprint(pp1).weights_bytes / 4
    sends = [op for op in build_ops(pp4, "decode", batch=1, context=129) if op.name == "pipeline send"]
    assert sends[0].count == 3


def test_flash_attention_removes_the_score_round_trip():
    """Prefill of 8 x 4096 tokens on Llama-3-8B: the unfused path writes 8*32*4096^2 scores per layer
    (2 B each = 8.6 GB), reads and writes them in softmax and reads them again: 4 x 8.6 GB per layer.
    The fused kernel moves none of that, so its prefill moves far fewer bytes."""
    fused = estimate(scenario("h100-sxm", "llama-3-8b", batch=8, prompt=4096, output=2), "bound")
    unfused = estimate(scenario("h100-sxm", "llama-3-8b", batch=8, prompt=4096, output=2, flash=False), "bound")
    score_bytes_per_layer = 8 * 32 * 4096**2 * 2
    extra = unfused.prefill.activation_bytes - fused.prefill.activation_bytes
    assert extra == pytest.approx(32 * 4 * score_bytes_per_layer, rel=0.02)
    assert unfused.prefill.time_s > fused.prefill.time_s
    assert math.isclose(unfused.decode.step_time_s, fused.decode.step_time_s, rel_tol=0.05)


def test_decode_phase_totals_cover_every_step():
    """Llama-3.1-8B, P = 1024, G = 257: the decode phase is 256 steps, so its weight bytes are 256 x one
    step's, and its memory bytes are the sum of the parts (weights + KV + activations)."""
    s = scenario("h100-sxm", "llama-3.1-8b", prompt=1024, output=257)
    phase = estimate(s, "bound").decode.phase
    one_step = _bound_decode(s, 1, 1025)
    assert phase.weight_bytes == pytest.approx(256 * one_step.weight_bytes)
    parts = phase.weight_bytes + phase.kv_read_bytes + phase.kv_write_bytes + phase.activation_bytes
    assert phase.memory_bytes == pytest.approx(parts)
    assert phase.time_s == pytest.approx(256 * estimate(s, "bound").decode.step_time_s)


def test_expected_adds_compute_and_memory_within_a_kernel():
    """A100 SXM4 80GB, Llama-2-7B prefill of 128 tokens, qkv_proj (T=128, K=4096, N=3*4096=12288), bf16.

    FLOPs = 2 * 128 * 4096 * 12288 = 12,884,901,888; bytes = 4096 * 12288 * 2 (weights, 100,663,296)
    + 128 * (4096 + 12288) * 2 (activations, 4,194,304) = 104,857,600.
    bound: max(12.885e9 / 312e12, 104.858e6 / 2039e9) = max(41.30, 51.43) us = 51.43 us.
    expected: compute at 312e12 * 0.869 = 271.128e12 -> 47.52 us; memory at 2039e9 * 0.834 =
    1700.526e9 B/s -> 61.66 us; no overlap (EXPECTED_COMPUTE_MEMORY_OVERLAP = 0): 47.52 + 61.66
    + 4 us kernel cost = 113.18 us (the roofline's max would give 65.66 us).
    """
    s = scenario("a100-sxm4-80gb", "llama-2-7b", prompt=128, output=2)
    op = next(o for o in build_ops(s, "prefill", batch=1) if o.name == "qkv_proj")
    assert op.flops == 12_884_901_888 and op.memory_bytes == 104_857_600
    bound = time_op(op, ceilings(s.hardware, "bf16", "bound"))
    expected = time_op(op, ceilings(s.hardware, "bf16", "expected"))
    assert float(bound.time_s) == pytest.approx(104_857_600 / 2039e9)
    assert float(bound.time_s) == pytest.approx(51.43e-6, abs=0.01e-6)
    assert float(expected.time_s) == pytest.approx(12_884_901_888 / 271.128e12 + 104_857_600 / 1700.526e9 + 4e-6)
    assert float(expected.time_s) == pytest.approx(113.18e-6, abs=0.01e-6)


def test_prefill_attention_runs_below_the_gemm_rate():
    """A100, Llama-2-7B, 2048-token prompt, fused attention per layer: 32 heads, d = 128.

    Causal pairs = 2048 * 2049 / 2 = 2,098,176 per head; FLOPs = 32 * 2,098,176 * (2 * (128 + 128) + 5)
    = 34,712,223,744. Expected computes it at 0.7 (ATTENTION_KERNEL_EFFICIENCY) of the achievable GEMM
    rate 271.128e12: 189.79e12 FLOP/s -> 182.90 us; bound at 312e12 -> 111.26 us.
    """
    s = scenario("a100-sxm4-80gb", "llama-2-7b", prompt=2048, output=2)
    op = next(o for o in build_ops(s, "prefill", batch=1) if o.name == "attention")
    assert op.flops == 34_712_223_744
    expected = time_op(op, ceilings(s.hardware, "bf16", "expected"))
    assert float(expected.compute_s) == pytest.approx(34_712_223_744 / (271.128e12 * 0.7))
    assert float(expected.compute_s) == pytest.approx(182.90e-6, abs=0.01e-6)
    assert float(time_op(op, ceilings(s.hardware, "bf16", "bound")).compute_s) == pytest.approx(111.26e-6, abs=0.01e-6)


def test_fp8_all_reduce_carries_the_16_bit_residual_stream():
    """H100 TP4 Llama-2-70B with fp8 weights and activations: each decode all-reduce at batch 1 still
    sends 2 * 3/4 * 8192 * 2 B = 24,576 B (the residual stream stays 16-bit), not 12,288 B."""
    s = scenario("h100-sxm", "llama-2-70b", tp=4, weights="fp8", activations="fp8", prompt=128, output=2)
    reduces = [op for op in build_ops(s, "decode", batch=1, context=129) if op.name.startswith("all-reduce")]
    assert reduces and all(op.comm_bytes == 24_576 for op in reduces)


def test_gguf_prefill_bound_uses_the_int8_peak_and_stays_above_llama_cpp():
    """llama.cpp's MMQ kernels run GGUF GEMMs as int8 dot products on int8 tensor cores
    (ggml-org/llama.cpp#7676, #7860), so the bound must allow the int8 peak: on an RTX 4090 that is
    660.6 TOPS against 165.2 TFLOP/s for bf16 with FP32 accumulation. The same PR measured
    Llama-3-8B q4_0 prefill (pp512) at 10,358 tok/s; a bf16-peak bound (about 10,600 tok/s at
    pp512, less at longer prompts) was within a few percent of being beaten.

    Hand check of the GEMM term: qkv_proj at T = 512, K = 4096, N = 6144: 2*T*K*N = 25.77 GFLOP,
    at 660.6e12 FLOP/s = 39.0 us (bound), against 156.0 us at the bf16 peak.
    """
    from roofline.models.estimate import ceilings, time_op
    from roofline.models.ops import build_ops

    s = scenario("rtx-4090", "llama-3-8b", prompt=512, output=1, weights="q4_0")
    bound = ceilings(s.hardware, s.precisions.compute_dtype, "bound")
    qkv = next(op for op in build_ops(s, "prefill", batch=1) if op.name == "qkv_proj")
    assert float(qkv.flops) == pytest.approx(2 * 512 * 4096 * 6144)
    assert float(time_op(qkv, bound).compute_s) == pytest.approx(2 * 512 * 4096 * 6144 / 660.6e12)
    prefill_tok_s = 512 / estimate(s, "bound").ttft_s
    assert prefill_tok_s > 10_358 * 1.5
    # formats that dequantise to bf16 (gpt-fast int4/int8 weight-only) keep the bf16 peak
    s16 = scenario("rtx-4090", "llama-3-8b", prompt=512, output=1, weights="int4")
    qkv16 = next(op for op in build_ops(s16, "prefill", batch=1) if op.name == "qkv_proj")
    assert float(time_op(qkv16, bound).compute_s) == pytest.approx(2 * 512 * 4096 * 6144 / 165.2e12)
    # expected keeps the compute dtype's achievable rate (MMQ reaches ~25 % of the int8 peak)
    expected = ceilings(s.hardware, s.precisions.compute_dtype, "expected")
    assert expected.integer_gemm_flops_per_s is None


def test_idle_cores_never_negative_when_gguf_gemms_run_at_the_int8_peak():
    """Found by hypothesis: Llama-2-7B q4_k_m on an H100 SXM, batch 120, 1 token in and out, bound. The GGUF
    GEMMs run at the int8 peak (1,978.9 TFLOP/s) and the step is compute-heavy, so useful FLOP/s exceeded the bf16
    peak (989.4) and idle cores read -0.16 %. Idle cores are measured against the peak the GEMMs may use."""
    from roofline.models.inference import estimate
    from tests.conftest import scenario

    s = scenario("h100-sxm", "llama-2-7b", batch=120, prompt=1, output=1, weights="q4_k_m", kv="int4", flash=False)
    e = estimate(s, "bound")
    assert e.ceilings.integer_gemm_flops_per_s == pytest.approx(1978.9e12)  # H100 SXM dense int8
    achieved = e.decode.phase.flops / e.decode.phase.time_s
    assert achieved > 989.4e12  # above the bf16 peak: the old reference went negative
    assert 0 <= e.decode.phase.idle_core_pct == pytest.approx(100 * (1 - achieved / 1978.9e12))


def test_fp8_activations_are_gemm_inputs_only():
    """W8A8 (fp8 weights and activations), Llama-3.1-8B, one prefill of 1,000 tokens, H = 4,096, I = 14,336:
    - qkv_proj: input 1,000 x 4,096 x 1 B (fp8) + output 1,000 x 6,144 x 2 B (bf16) = 16.384 MB;
    - norms (feed a GEMM): read 1,000 x 4,096 x 2 B, write x 1 B = 12.288 MB;
    - residual add (16-bit throughout): read 2 x 1,000 x 4,096 x 2 B + write x 2 B = 24.576 MB;
    - MLP activation (feeds the down GEMM): read 2 x 1,000 x 14,336 x 2 B + write x 1 B = 71.68 MB.
    At bf16 activations every term is 2 B per element, as before."""
    ops = {op.name: op for op in build_ops(scenario("h100-sxm", "llama-3.1-8b", prompt=1000, weights="fp8",
                                                    activations="fp8"), "prefill", batch=1)}
    assert ops["qkv_proj"].activation_bytes == pytest.approx(1000 * (4096 * 1 + 6144 * 2))
    assert ops["norms"].activation_bytes == pytest.approx(1000 * 4096 * (2 + 1))
    assert ops["residual add"].activation_bytes == pytest.approx(1000 * 4096 * (2 * 2 + 2))
    assert ops["mlp activation"].activation_bytes == pytest.approx(1000 * 14336 * (2 * 2 + 1))
    bf16 = {op.name: op for op in build_ops(scenario("h100-sxm", "llama-3.1-8b", prompt=1000), "prefill", batch=1)}
    assert bf16["qkv_proj"].activation_bytes == pytest.approx(1000 * (4096 + 6144) * 2)
    assert bf16["norms"].activation_bytes == pytest.approx(1000 * 4096 * 2 * 2)


def test_tp_ranks_hold_replicated_weights_whole():
    """DeepSeek-V3 (H = 7,168, 61 layers of which 58 MoE with 256 experts, r_q = 1,536, r_kv = 512, d_rope = 64)
    at TP 8, fp8 weights (1 B). Per layer: norms 2 x 7,168 = 14,336; q_a 7,168 x 1,536 + 1,536 = 11,011,584;
    kv_a 7,168 x 576 + 512 = 4,129,280 -> 15,155,200 x 61 = 924,467,200; final norm 7,168; routers
    58 x (7,168 x 256 + 256 correction biases) = 106,445,312 -> 1,030,919,680 params, held whole on every rank:
    1,030,919,680 x 7/8 = 902,054,720 B above the even 1/8 share.
    Llama-3.1-70B at TP 16: 8 KV heads, so each rank holds one whole KV head (128 + 128 wide) where the even
    share is half of one: 80 x 8,192 x 256 x 1/2 = 83,886,080 params, plus norms (80 x 2 + 1) x 8,192 x 15/16
    = 1,236,480, at 2 B: 170,245,120 B."""
    from roofline.models.memory import tp_replicated_weight_bytes_per_device

    deepseek = scenario("h200", "deepseek-v3", tp=8, weights="fp8")
    assert deepseek.model.moe.router_bias  # noaux_tc: e_score_correction_bias, one per expert
    assert tp_replicated_weight_bytes_per_device(deepseek) == pytest.approx(902_054_720)
    llama = scenario("h100-sxm", "llama-3.1-70b", tp=16)
    assert tp_replicated_weight_bytes_per_device(llama) == pytest.approx(170_245_120)
    assert tp_replicated_weight_bytes_per_device(scenario("h100-sxm", "llama-3.1-70b")) == 0.0
    footprint = memory_footprint(deepseek)
    assert footprint.per_device_weights_bytes == pytest.approx(footprint.weights_bytes / 8 + 902_054_720)
