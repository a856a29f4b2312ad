"""The presets users asked for (issue 29 item 4): hand-derived figures for each, with the source in the docstring.

Ridge point = dense bf16 peak / memory bandwidth (FLOP per byte). Parameter counts are worked from each config.json
(2 FLOP per multiply-add is not involved here: these are weights, one per matrix element).
"""

from __future__ import annotations

import pytest

from roofline.presets import load_catalog

NEW_HARDWARE = ("m2-max", "m3-pro", "m4-pro", "m5-max", "arc-a770", "rtx-3080", "rtx-3080-ti", "rx-7900-xt",
                "rx-9070-xt", "jetson-orin-nano-8gb", "jetson-orin-nx-16gb", "jetson-agx-thor")
NEW_MODELS = ("llama-3.2-1b", "llama-3.2-3b", "qwen2.5-14b", "qwen3-4b", "qwen3-30b-a3b", "llama-4-maverick")
TERA, GIGA = 1e12, 1e9


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    """The built-in catalog only (an empty user folder)."""
    return load_catalog(user_dir=tmp_path_factory.mktemp("no-user-presets"))


def test_new_presets_load_and_are_listed(catalog):
    """Every new file loads without an error or warning and is in the catalog `roofline presets` lists."""
    assert catalog.errors == []
    assert [w for w in catalog.warnings if any(i in w.path for i in NEW_HARDWARE + NEW_MODELS)] == []
    assert set(NEW_HARDWARE) <= set(catalog.hardware)
    assert set(NEW_MODELS) <= set(catalog.models)


@pytest.mark.parametrize(("hw_id", "peak_tflops", "bw_gb_per_s", "ridge"), [
    ("rtx-3080", 59.5, 760, 78.29),        # GA102 whitepaper: 59.5 TF / 760 GB/s
    ("rtx-3080-ti", 68.2, 912, 74.78),     # 80 SM x 512 FLOP/clk x 1.665 GHz / 912 GB/s
    ("rx-7900-xt", 103.2, 800, 129.0),     # 84 CU x 512 x 2.4 GHz / 800 GB/s
    ("rx-9070-xt", 194.7, 640, 304.2),     # 779 sparse INT8 TOPS / 2 / 2 = 194.7 TF / 640 GB/s
    ("arc-a770", 137.6, 560, 245.7),       # 512 XMX x 128 FLOP/clk x 2.1 GHz / 560 GB/s
    ("m4-pro", 8.6, 273, 31.50),           # 17.2 TF x 20/40 cores / 273 GB/s
    ("m5-max", 68.8, 614, 112.05),         # 4 x 17.2 TF (Apple's 4x AI claim) / 614 GB/s
    ("jetson-orin-nano-8gb", 16.7, 102, 163.7),  # 67 sparse TOPS / 4 / 102 GB/s
    ("jetson-agx-thor", 258.8, 273, 948.0),      # 2070 sparse FP4 / 8 / 273 GB/s
])
def test_ridge_is_peak_over_bandwidth(catalog, hw_id, peak_tflops, bw_gb_per_s, ridge):
    """Ridge (bf16) = dense peak / bandwidth, worked by hand from each preset's source (see the comment per row)."""
    hw = catalog.hardware[hw_id]
    assert hw.dense_peak_flops_per_s["bf16"] == pytest.approx(peak_tflops * TERA)
    assert hw.mem_bw_bytes_per_s == pytest.approx(bw_gb_per_s * GIGA)
    assert hw.ridge_flops_per_byte("bf16") == pytest.approx(ridge, rel=1e-3)
    assert peak_tflops * 1e3 / bw_gb_per_s == pytest.approx(ridge, rel=1e-3)


def test_apple_estimates_scale_with_gpu_cores(catalog):
    """Apple publishes no GPU FLOPS: the M2 Max is half the M2 Ultra (two M2 Max dies, 38 of 76 cores), the M3 Pro
    18/40 of the M3 Max and the M4 Pro 20/40 of the M4 Max (the project's hmc-tech estimates), fp16 = fp32."""
    peak = {i: catalog.hardware[i].dense_peak_flops_per_s for i in ("m2-max", "m2-ultra", "m3-pro", "m3-max",
                                                                    "m4-pro", "m4-max")}
    assert peak["m2-max"]["fp32"] == pytest.approx(peak["m2-ultra"]["fp32"] / 2)
    assert peak["m3-pro"]["fp32"] == pytest.approx(peak["m3-max"]["fp32"] * 18 / 40, rel=0.01)
    assert peak["m4-pro"]["fp32"] == pytest.approx(peak["m4-max"]["fp32"] * 20 / 40)
    for name in ("m2-max", "m3-pro", "m4-pro"):
        assert peak[name]["fp16"] == peak[name]["fp32"]


def test_edge_tensor_ratios(catalog):
    """Jetson: the only published figure is sparse INT8 (Orin) or sparse FP4 (Thor); dense = sparse / 2, and each
    halving of the operand width doubles the rate. Orin Nano Super 67 / 2 = 33.5 INT8, 16.7 FP16 (rounded);
    Thor 2070 / 2 = 1035 FP4, 517.5 FP8, 258.8 FP16 (rounded)."""
    nano = catalog.hardware["jetson-orin-nano-8gb"].dense_peak_flops_per_s
    assert nano["int8"] == pytest.approx(67e12 / 2)
    assert nano["bf16"] == pytest.approx(nano["int8"] / 2, rel=0.01)
    thor = catalog.hardware["jetson-agx-thor"].dense_peak_flops_per_s
    assert thor["fp4"] == pytest.approx(2070e12 / 2)
    assert thor["fp8"] == pytest.approx(thor["fp4"] / 2)
    assert thor["bf16"] == pytest.approx(thor["fp8"] / 2, rel=1e-3)


def test_llama_3_2_1b_parameter_count_by_hand(catalog):
    """Llama-3.2-1B config.json: hidden 2048, 16 layers, 32 heads of 64, 8 KV heads, MLP 8192, vocab 128256, tied.

    Per layer: q and o 2048 x 2048 = 4,194,304 each; k and v 2048 x 512 = 1,048,576 each; gate/up/down
    3 x 2048 x 8192 = 50,331,648; two norms 4,096; total 60,821,504. x 16 = 973,144,064; + embedding
    128,256 x 2,048 = 262,668,288 (tied: counted once) + final norm 2,048 = 1,235,814,400, exactly the HF
    safetensors total (1.24B published, within 1 %)."""
    model = catalog.models["llama-3.2-1b"]
    assert model.params == 1_235_814_400
    assert model.embedding_params() == 262_668_288
    assert model.params == pytest.approx(1.24e9, rel=0.01)


def test_llama_3_2_3b_parameter_count(catalog):
    """Llama-3.2-3B: 28 layers x (q, o 3072 x 3072; k, v 3072 x 1024; MLP 3 x 3072 x 8192; norms 6,144)
    = 28 x 100,669,440 = 2,818,744,320, + embedding 128,256 x 3,072 = 394,002,432 + 3,072 = 3,212,749,824
    (HF safetensors total, 3.21B)."""
    assert catalog.models["llama-3.2-3b"].params == 3_212_749_824


def test_qwen3_30b_a3b_total_and_active_by_hand(catalog):
    """Qwen3-30B-A3B config.json: hidden 2048, 48 layers, 32 heads and 4 KV heads of 128, 128 experts of width 768,
    top-8, vocab 151936, untied.

    Attention per layer: q 2048 x 4096 = 8,388,608, k and v 2048 x 512 = 1,048,576 each, o 8,388,608, q/k norms
    256: 18,874,624. Router 2048 x 128 = 262,144. One expert 3 x 2048 x 768 = 4,718,592. Norms 4,096.
    Active per layer (8 experts) 56,889,600; x 48 = 2,730,700,800; + embedding and LM head 2 x 151,936 x 2,048
    = 622,329,856 + final norm 2,048 = 3,353,032,704 (published 3.3B activated: 1.6 % over, the input embedding
    being counted). Total per layer (128 experts) 623,120,640; x 48 = 29,909,790,720 (the card's 29.9B
    non-embedding) + 622,331,904 = 30,532,122,624 (published 30.5B)."""
    model = catalog.models["qwen3-30b-a3b"]
    assert model.active_params == 3_353_032_704
    assert model.params == 30_532_122_624
    assert model.params - model.embedding_params() - 151_936 * 2048 - 2048 == 29_909_790_720
    assert model.active_params == pytest.approx(3.3e9, rel=0.02)


def test_llama_4_maverick_interleaves_moe_and_dense_layers(catalog):
    """Llama 4 Maverick: interleave_moe_layer_step 2, so 24 of 48 layers are MoE (128 experts + a shared expert,
    top-1) and 24 dense (MLP 16384); NoPE every 4th layer (3, 7, ...) falls on MoE layers, so the MoE layers
    split 12 chunked + 12 global. 400B total and 17B active published (model card): within 0.2 % and 2 %."""
    model = catalog.models["llama-4-maverick"]
    moe_layers = sum(g.count for g in model.layer_groups if g.moe)
    dense = [g for g in model.layer_groups if not g.moe]
    assert moe_layers == 24 and sum(g.count for g in dense) == 24
    assert all(g.chunk_tokens == 8192 for g in dense)
    assert model.moe.num_experts == 128 and model.moe.top_k == 1
    assert model.moe.shared_intermediate_size == 8192
    assert model.intermediate_size == 16384
    assert model.params == pytest.approx(400e9, rel=0.002)
    assert model.active_params == pytest.approx(17e9, rel=0.02)


@pytest.mark.parametrize("model_id", NEW_MODELS)
def test_new_models_match_published_totals(catalog, model_id):
    """Each new model's config-derived total is within 1 % of the figure its model card publishes."""
    model = catalog.models[model_id]
    assert model.params == pytest.approx(model.published_params, rel=0.01)



def test_gaudi3_fp8_and_bf16_share_the_published_mme_rate(catalog):
    """Intel's Gaudi 3 white paper and Hot Chips 2024 table: 1835 TF for both FP8 and BF16 on the MME (one rate,
    not 2x). Only BF16 has a public GEMM measurement (Bekman MAMF 1288.8 TF = 0.702 of 1835); FP8 has none, so it
    carries no measured fraction (the generic one applies) and the notes say so."""
    hw = catalog.hardware["gaudi3"]
    assert hw.dense_peak_flops_per_s["fp8"] == hw.dense_peak_flops_per_s["bf16"] == pytest.approx(1835 * TERA)
    assert hw.achievable_matmul_fraction["bf16"] == pytest.approx(1288.8 / 1835, abs=5e-4)
    assert "fp8" not in hw.achievable_matmul_fraction
    assert "FP8 GEMM measurement" in hw.notes and "Sustained load" in hw.notes


@pytest.mark.parametrize(("dtype", "bits"), [
    ("awq_g128", 4 + 16 / 128 + 4 / 128),   # AutoAWQ: fp16 scale + packed 4-bit zero per group of 128
    ("gptq_g32", 4 + 16 / 32 + 4 / 32),     # 4.625
    ("marlin_g128", 4 + 16 / 128),          # symmetric, scales only: 4.125
    ("mlx_q4", 4 + 32 / 64),                # MLX affine default: fp16 scale + fp16 bias per 64 = 4.5
    ("mlx_q8", 8 + 32 / 64),                # 8.5
    ("mlc_q4f16_1", 4 + 16 / 32),           # MLC: int4, group 32, fp16 scale = 4.5
    ("mlc_q3f16_1", 32 / 10 + 16 / 40),     # int3 ten to a uint32, group 40: 3.6
    ("exl2_4.65", 4.65),                    # EXL2 -b: the converter's average bits per weight
    ("exl3_3.0", 3.0),
])
def test_group_quantised_formats_carry_their_scale_overhead(dtype, bits):
    """Bits per weight of the formats added for issue 29, worked from each layout (models/dtypes.py docstring);
    all are weight-only, so a bf16-activation GEMM computes at the bf16 peak."""
    from roofline.models.dtypes import WEIGHT_FORMAT_KERNEL_FAMILY, matmul_compute_dtype, weight_bytes_per_param

    assert weight_bytes_per_param(dtype) == pytest.approx(bits / 8)
    assert matmul_compute_dtype(dtype, "bf16") == "bf16"
    assert dtype in WEIGHT_FORMAT_KERNEL_FAMILY


def test_int4_is_awq_and_gptq_at_group_128():
    """The existing int4 entry is the same AWQ/GPTQ group-128 layout the explicit names spell out."""
    from roofline.models.dtypes import WEIGHT_BITS_PER_ELEMENT as bits

    assert bits["int4"] == bits["awq_g128"] == bits["gptq_g128"]
