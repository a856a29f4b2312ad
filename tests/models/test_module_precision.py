"""Per-module precision (attention, embedding, LM head, experts) and 4-bit activations (W4A4), derived by hand."""

from __future__ import annotations

from dataclasses import replace

import pytest

from roofline.models.dtypes import matmul_compute_dtype, module_activations
from roofline.models.errors import ModelInputError
from roofline.models.estimate import ceilings, compute_and_memory_s, scenario_ceilings
from roofline.models.hf_config import architecture_from_hf_config, released_formats
from roofline.models.memory import memory_footprint, weight_bytes_total
from roofline.models.ops import build_ops
from roofline.models.scenario import Precisions, released_precisions
from tests.conftest import hardware, model, scenario

# Llama-3.1-8B: H = 4096, 32 layers, 32 query / 8 KV heads of 128, V = 128256, untied.
PARAMS = 8_030_261_248
ATTENTION_PER_LAYER = 4096 * (4096 + 2 * 1024 + 4096)  # q, k, v, o = 41,943,040
LM_HEAD = 128256 * 4096  # 525,336,576
H100_BF16, H100_FP8 = 989.4e12, 1978.9e12
B200_FP4 = 9000e12


def _with(s, **precisions):
    return replace(s, precisions=Precisions(**precisions))


def _op(ops, name):
    return next(op for op in ops if op.name == name)


def test_nothing_set_keeps_todays_numbers():
    """Per-module fields None: the ops and the footprint are those of weights/activations alone."""
    s = scenario("h100-sxm", "llama-3.1-8b", weights="fp8", activations="fp8", kv="fp8")
    same = _with(s, weights="fp8", activations="fp8", kv="fp8", attention_weights=None, lm_head_weights=None)
    assert build_ops(s, "decode", batch=4.0, context=900.0) == build_ops(same, "decode", batch=4.0, context=900.0)
    assert weight_bytes_total(s) == PARAMS * 1.0
    assert all(op.compute_dtype == "" for op in build_ops(s, "prefill", batch=1.0))


def test_fp8_checkpoint_with_a_16_bit_lm_head():
    """fp8 everywhere but the LM head (an ``ignored_layers: [lm_head]`` checkpoint): weights
    (8,030,261,248 - 525,336,576) * 1 + 525,336,576 * 2 = 8,555,597,824 bytes. The head GEMM streams V*H*2 bytes,
    takes 16-bit inputs and computes at the bf16 peak; the MLP stays fp8 x fp8."""
    s = _with(scenario("h100-sxm", "llama-3.1-8b"), weights="fp8", activations="fp8", lm_head_weights="bf16")
    assert weight_bytes_total(s) == 8_555_597_824
    ops = build_ops(s, "decode", batch=1.0, context=100.0)
    head = _op(ops, "lm_head")
    assert head.weight_bytes == LM_HEAD * 2
    assert head.activation_bytes == 4096 * 2 + 128256 * 2  # input and logits, both 16-bit
    assert head.compute_dtype == "bf16"
    assert _op(ops, "mlp gate_up").compute_dtype == ""  # the scenario's fp8
    c = scenario_ceilings(s, "bound")
    assert c.compute_dtype == "fp8"
    compute_s, _ = compute_and_memory_s(head, c)
    assert compute_s == pytest.approx(2 * 4096 * 128256 / H100_BF16, rel=1e-12)


def test_16_bit_attention_beside_fp8_mlp():
    """attention_weights bf16, weights and activations fp8: weights PARAMS + 32 * 41,943,040 bytes (the attention
    projections at 2 bytes instead of 1). Prefill of 2048 tokens: qkv_proj's FLOPs 2*2048*4096*6144 run at the
    bf16 peak (989.4 TFLOP/s), the MLP's at the fp8 peak (1978.9)."""
    s = _with(scenario("h100-sxm", "llama-3.1-8b", prompt=2048), weights="fp8", activations="fp8",
              attention_weights="bf16")
    assert weight_bytes_total(s) == PARAMS + 32 * ATTENTION_PER_LAYER
    ops = build_ops(s, "prefill", batch=1.0)
    qkv, gate_up = _op(ops, "qkv_proj"), _op(ops, "mlp gate_up")
    assert qkv.weight_bytes == 4096 * 6144 * 2
    assert qkv.activation_bytes == 2048 * (4096 * 2 + 6144 * 2)
    c = scenario_ceilings(s, "bound")
    assert compute_and_memory_s(qkv, c)[0] == pytest.approx(2 * 2048 * 4096 * 6144 / H100_BF16, rel=1e-12)
    assert compute_and_memory_s(gate_up, c)[0] == pytest.approx(2 * 2048 * 4096 * 2 * 14336 / H100_FP8, rel=1e-12)
    # the attention kernel follows the attention block: bf16 math
    attention = _op(ops, "attention")
    assert attention.compute_dtype == "bf16"
    assert compute_and_memory_s(attention, c)[0] == pytest.approx(attention.flops / H100_BF16, rel=1e-12)


def test_fp8_kv_with_bf16_attention_math():
    """W8A8 with an fp8 KV cache: the attention kernel would run fp8 x fp8 (1978.9 TFLOP/s on the H100);
    attention_math bf16 dequantises the cache in the kernel and computes at 989.4. The KV bytes are fp8 either way:
    decode at c = 1000, batch 1: 1000 * 8 * (128 + 128) * 1 byte read per layer."""
    base = dict(weights="fp8", activations="fp8", kv="fp8")
    s = _with(scenario("h100-sxm", "llama-3.1-8b"), **base)
    bf16_math = _with(s, **base, attention_math="bf16")
    c = scenario_ceilings(s, "bound")
    fp8_op = _op(build_ops(s, "decode", batch=1.0, context=1000.0), "attention")
    bf16_op = _op(build_ops(bf16_math, "decode", batch=1.0, context=1000.0), "attention")
    assert fp8_op.kv_read_bytes == bf16_op.kv_read_bytes == 1000 * 8 * 256 * 1
    assert compute_and_memory_s(fp8_op, c)[0] == pytest.approx(fp8_op.flops / H100_FP8, rel=1e-12)
    assert compute_and_memory_s(bf16_op, c)[0] == pytest.approx(bf16_op.flops / H100_BF16, rel=1e-12)


def test_gpt_oss_mxfp4_experts_bf16_elsewhere():
    """gpt-oss-20b as released: MXFP4 experts (4.25 bits), bf16 elsewhere. Routed experts: 24 layers x 32 experts
    x (3 * 2880 * 2880 + 2 * 2880 + 2880) parameters; the rest at 2 bytes."""
    m = model("gpt-oss-20b")
    p = released_precisions(m)
    assert (p.weights, p.expert_weights_or_weights, p.module("attention").weights) == ("bf16", "fp4", "bf16")
    experts = 24 * 32 * (3 * 2880 * 2880 + 3 * 2880)
    assert m.routed_expert_params_total() == experts
    s = replace(scenario("h100-sxm", "gpt-oss-20b"), precisions=p)
    assert weight_bytes_total(s) == pytest.approx((m.params - experts) * 2 + experts * 4.25 / 8, rel=1e-15)
    assert memory_footprint(s).weights_bytes == weight_bytes_total(s)


# --- FP4 activations (W4A4) --------------------------------------------------------------------------------------

def test_fp4_activations_reach_the_fp4_peak_on_b200():
    """B200 dense FP4 9 PFLOP/s (NVIDIA quotes 18 PF with 2:4 sparsity; the preset halves it). NVFP4 weights and
    activations: prefill of 4096 tokens, the MLP gate_up GEMM 2*4096*4096*(2*14336) = 9.62e11 FLOP takes
    9.62e11 / 9e15 = 106.9 us at the bound. Its inputs are 4.5 bits: 4096 * 4096 * 0.5625 bytes, outputs 16-bit."""
    s = scenario("b200", "llama-3.1-8b", prompt=4096, weights="nvfp4", activations="nvfp4")
    assert s.precisions.compute_dtype == "nvfp4"
    c = scenario_ceilings(s, "bound")
    assert (c.compute_dtype, c.matmul_flops_per_s) == ("fp4", B200_FP4)
    gate_up = _op(build_ops(s, "prefill", batch=1.0), "mlp gate_up")
    flops = 2 * 4096 * 4096 * 2 * 14336
    assert gate_up.flops == flops
    assert gate_up.activation_bytes == 4096 * (4096 * 0.5625 + 2 * 14336 * 2)
    assert compute_and_memory_s(gate_up, c)[0] == pytest.approx(flops / 9e15, rel=1e-12)
    assert flops / 9e15 == pytest.approx(106.9e-6, rel=1e-3)
    # MXFP4 (4.25 bits) W4A4 uses the same peak; B300 14 PF, RTX 5090 1676 TF dense FP4
    assert ceilings(hardware("b200"), matmul_compute_dtype("fp4", "fp4"), "bound").matmul_flops_per_s == B200_FP4
    assert ceilings(hardware("b300"), "fp4", "bound").matmul_flops_per_s == 14000e12
    assert ceilings(hardware("rtx-5090"), "nvfp4", "bound").matmul_flops_per_s == 1676e12


def test_weight_only_fp4_stays_at_the_activation_peak():
    """fp4 weights with bf16 activations dequantise and compute in bf16 (B200 2.25 PF); with fp8 activations at
    the fp8 peak; an H100 has no fp4 peak, so W4A4 falls back to its fp8 rate."""
    assert matmul_compute_dtype("fp4", "bf16") == "bf16"
    assert matmul_compute_dtype("nvfp4", "fp8") == "fp8"
    assert matmul_compute_dtype("bf16", "nvfp4") == "bf16"
    assert hardware("b200").matmul_peak("bf16")[1] == 2250e12
    assert hardware("h100-sxm").matmul_peak("nvfp4") == ("fp8", H100_FP8)


def test_blackwell_presets_have_an_fp4_peak_with_a_source():
    for hw_id in ("b200", "b300", "gb200", "rtx-5090"):
        hw = hardware(hw_id)
        assert hw.dense_peak_flops_per_s.get("fp4", 0) > hw.dense_peak_flops_per_s["fp8"]
        assert hw.source.startswith(("NVIDIA", "https://"))


def test_unquantised_modules_take_16_bit_inputs():
    assert module_activations("bf16", "fp8") == "bf16"
    assert module_activations("fp32", "nvfp4") == "bf16"
    assert module_activations("fp8", "fp8") == "fp8"
    assert module_activations("bf16", "bf16") == "bf16"
    with pytest.raises(ModelInputError, match="attention_weights"):
        Precisions(attention_weights="fp5")


# --- released formats from config.json ----------------------------------------------------------------------------

_LLAMA = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
          "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256, "torch_dtype": "bfloat16"}


@pytest.mark.parametrize(("quant", "expected"), [
    ({"quant_method": "fp8", "activation_scheme": "dynamic", "ignored_layers": ["lm_head"]},
     {"default_weights": "fp8", "default_activations": "fp8", "default_lm_head_weights": "bf16"}),
    ({"quant_method": "fbgemm_fp8", "modules_to_not_convert": ["model.layers.0.self_attn", "lm_head"]},
     {"default_weights": "fp8", "default_activations": "fp8", "default_attention_weights": "bf16",
      "default_lm_head_weights": "bf16"}),
    ({"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn", "lm_head"]},
     {"default_expert_weights": "fp4"}),
    ({"quant_method": "compressed-tensors", "ignore": ["lm_head"], "config_groups": {"group_0": {
        "weights": {"num_bits": 4, "type": "float", "group_size": 16},
        "input_activations": {"num_bits": 4, "type": "float", "group_size": 16}, "targets": ["Linear"]}}},
     {"default_weights": "nvfp4", "default_activations": "nvfp4", "default_lm_head_weights": "bf16"}),
    ({"quant_method": "compressed-tensors", "ignore": ["lm_head"], "config_groups": {"group_0": {
        "weights": {"num_bits": 4, "type": "int", "group_size": 128}, "targets": ["Linear"]}}},
     {"default_weights": "int4", "default_lm_head_weights": "bf16"}),
    ({"quant_method": "modelopt", "quant_algo": "NVFP4", "exclude_modules": ["lm_head", "model.embed_tokens"]},
     {"default_weights": "nvfp4", "default_activations": "nvfp4", "default_embedding_weights": "bf16",
      "default_lm_head_weights": "bf16"}),
])
def test_quantization_config_gives_the_released_formats(quant, expected):
    assert released_formats({**_LLAMA, "quantization_config": quant}) == expected


def test_config_json_with_an_fp8_quantization_config_imports_per_module():
    m = architecture_from_hf_config({**_LLAMA, "quantization_config": {
        "quant_method": "fp8", "ignored_layers": ["lm_head"]}}, model_id="x")
    p = released_precisions(m)
    assert (p.weights, p.activations, p.lm_head_weights) == ("fp8", "fp8", "bf16")
    # an explicit --weights applies everywhere again
    assert released_precisions(m, weights="int4").lm_head_weights is None
