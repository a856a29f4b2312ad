"""Hybrid (linear-attention / Mamba), chunked, sparse and sliding-window architectures, derived by hand."""

from __future__ import annotations

import pytest

from roofline.models.architecture import LayerGroup
from roofline.models.context_sums import context_pieces
from roofline.models.errors import ModelInputError
from roofline.models.hf_config import architecture_from_hf_config
from roofline.models.memory import kv_cache_bytes_per_sequence_per_device
from roofline.models.ops import attended_keys, build_ops, chunked_attention_pairs
from tests.conftest import model, scenario


def _kv_read(s, context, batch=1.0):
    return sum(op.kv_read_bytes * op.count for op in build_ops(s, "decode", batch=batch, context=float(context)))


def _op(ops, name):
    return next(op for op in ops if op.name == name)


# --- Nemotron-H-8B: 24 Mamba-2, 4 attention, 24 MLP layers -----------------------------------------------------

def test_nemotron_h_params_by_hand():
    """Mamba-2 layer (H 4096, 128 heads of 64 -> d_in 8192, 8 groups of state 128, conv 4):
    in_proj 4096 * (8192 z + 10240 xBC + 128 dt) = 76,021,760; conv (8192 + 2*8*128 = 10240) * 4 + 10240 bias
    = 51,200; A, D, dt bias 3 * 128 + norm 8192 = 8,576; out_proj 8192 * 4096 = 33,554,432; + its norm 4096.
    Attention layer: 4096 * (4096 + 2 * 8 * 128) + 4096 * 4096 = 41,943,040 (+ 4096). MLP layer (squared ReLU,
    up/down): 2 * 4096 * 21504 = 176,160,768 (+ 4096). Embedding and head 2 * 131072 * 4096; final norm 4096."""
    mamba = 76_021_760 + 51_200 + 8_576 + 33_554_432 + 4096
    attention = 41_943_040 + 4096
    mlp = 176_160_768 + 4096
    total = 24 * mamba + 4 * attention + 24 * mlp + 2 * 131072 * 4096 + 4096
    m = model("nemotron-h-8b")
    assert m.params == total
    assert total == pytest.approx(8.10e9, rel=1e-3)  # the published 8B
    assert m.attention_layers == 4 and not m.mlp_gated


def test_nemotron_h_state_is_constant_and_kv_grows_only_in_attention_layers():
    """State per sequence: 24 layers x (128 * 64 * 128 SSM + 10240 * 3 conv) = 24 * 1,079,296 elements, 2 bytes:
    51,806,208 bytes. KV per token: 4 layers x 8 heads x (128 + 128) x 2 bytes = 16,384 bytes."""
    s = scenario("h100-sxm", "nemotron-h-8b")
    state_bytes = 24 * (128 * 64 * 128 + 10240 * 3) * 2
    assert state_bytes == 51_806_208
    for tokens in (1, 1000, 100_000):
        assert kv_cache_bytes_per_sequence_per_device(s, tokens) == tokens * 16_384 + state_bytes
    # decode reads the state once per step, plus the attention layers' keys: at c = 1000 and c = 5000
    per_key = 4 * 8 * 256 * 2
    assert _kv_read(s, 1000) == pytest.approx(state_bytes + 1000 * per_key, rel=1e-12)
    assert _kv_read(s, 5000) == pytest.approx(state_bytes + 5000 * per_key, rel=1e-12)
    recurrence = _op(build_ops(s, "decode", batch=1.0, context=1000.0), "linear recurrence (mamba2)")
    assert recurrence.count == 24
    assert recurrence.kv_write_bytes == recurrence.kv_read_bytes == state_bytes / 24
    # 5 FLOPs per SSM state element per token
    assert recurrence.flops == 5 * 128 * 64 * 128


# --- Qwen3-Next-80B-A3B: 36 Gated DeltaNet + 12 gated attention layers ------------------------------------------

def test_qwen3_next_params_state_and_kv():
    """Params 79,674,391,296: the total an independent parser derives for this config (a stored fixture of the
    Qwen3-Coder-Next config, same shape). DeltaNet state per layer: 32 value heads x 128 x 128 = 524,288 plus the
    conv window (2 * 16 * 128 + 32 * 128 = 8192 channels) x 3 = 24,576; 36 layers, 2 bytes: 39,518,208 bytes.
    KV: 12 layers x 2 heads x (256 + 256) = 12,288 elements per token."""
    m = model("qwen3-next-80b-a3b")
    assert m.params == 79_674_391_296
    assert m.state_elements_per_sequence == 36 * (524_288 + 24_576)
    assert m.kv_elements_per_token == 12_288
    s = scenario("h100-sxm", "qwen3-next-80b-a3b")
    assert kv_cache_bytes_per_sequence_per_device(s, 4096) == 4096 * 12_288 * 2 + 39_518_208
    # gated attention: q_proj doubles (the output gate): 16 * 256 * 2 + 2 * 2 * 256 = 9216 outputs
    assert _op(build_ops(s, "decode", batch=1.0, context=10.0), "qkv_proj").weight_bytes == 2048 * 9216 * 2


def test_qwen3_next_state_splits_over_tp():
    """TP 4 splits the 32 value heads: each device holds a quarter of the state (and 1 of the 2 KV heads)."""
    s = scenario("h100-sxm", "qwen3-next-80b-a3b", tp=4)
    assert kv_cache_bytes_per_sequence_per_device(s, 1) == 12 * 1 * 512 * 2 + 39_518_208 / 4


def test_jamba_state_by_hand():
    """Mamba (d_in = 2 * 4096 = 8192, d_state 16, conv 4): 8192 * 16 + 8192 * 3 = 155,648 elements per layer, 28
    Mamba layers. KV: 4 attention layers x 8 x 256 per token."""
    m = model("jamba-v0.1")
    assert m.state_elements_per_sequence == 28 * 155_648
    assert m.kv_elements_per_token == 4 * 8 * 256
    assert m.active_params == pytest.approx(12e9, rel=0.02)


# --- Llama 4 Scout: chunked local attention ------------------------------------------------------------------------

def test_chunked_attention_keys_and_pairs():
    """A query at c attends to ((c-1) mod C) + 1 keys: C at c = C, 1 at c = C + 1. Prefill over P = 10000 with
    C = 8192: 8192 * 8193 / 2 + 1808 * 1809 / 2 pairs."""
    assert attended_keys(8192.0, None, 8192) == 8192
    assert attended_keys(8193.0, None, 8192) == 1
    assert attended_keys(10000.0, None, 8192) == 1808
    assert chunked_attention_pairs(10000, 8192) == 8192 * 8193 / 2 + 1808 * 1809 / 2
    assert chunked_attention_pairs(100, 8192) == 100 * 101 / 2


def test_llama4_scout_decode_and_memory_by_hand():
    """36 chunked layers (8192) and 12 global; 8 KV heads x 256 x 2 bytes = 4096 bytes per key per layer.
    Decode at c = 10000: 36 * 1808 + 12 * 10000 keys; at c = 16384: 36 * 8192 + 12 * 16384.
    KV cache for 20000 tokens: 36 * 8192 + 12 * 20000 token-layers."""
    s = scenario("h100-sxm", "llama-4-scout")
    assert _kv_read(s, 10000) == (36 * 1808 + 12 * 10000) * 4096
    assert _kv_read(s, 16384) == (36 * 8192 + 12 * 16384) * 4096
    assert kv_cache_bytes_per_sequence_per_device(s, 20000) == (36 * 8192 + 12 * 20000) * 4096
    assert model("llama-4-scout").context_breaks(1, 20000) == [8192, 16384]
    assert context_pieces(scenario("h100-sxm", "llama-4-scout", prompt=8000, output=9000)) == (
        (8001, 8192), (8193, 16384), (16385, 16999))


# --- DeepSeek-V3.2: sparse attention with a lightning indexer ------------------------------------------------------

def test_deepseek_sparse_attention_by_hand():
    """Latent 512 + 64 = 576 per key, indexer keys 128: 704 elements cached per token per layer. Decode at c:
    attention reads min(c, 2048) latents, the indexer every c keys. bf16, 61 layers:
    c = 1000: 61 * (1000 * 576 + 1000 * 128) * 2; c = 5000: 61 * (2048 * 576 + 5000 * 128) * 2."""
    m = model("deepseek-v3.2-exp")
    assert m.attention.kv_elements_per_token == 704
    s = scenario("h100-sxm", "deepseek-v3.2-exp", weights="fp8")
    assert _kv_read(s, 1000) == 61 * (1000 * 576 + 1000 * 128) * 2
    assert _kv_read(s, 5000) == 61 * (2048 * 576 + 5000 * 128) * 2
    assert kv_cache_bytes_per_sequence_per_device(s, 5000) == 61 * 5000 * 704 * 2
    # indexer params per layer: 1536 * 64 * 128 + 7168 * 128 + 2 * 128 + 7168 * 64 = 13,959,424
    assert m.attention.indexer_params(7168) == 13_959_424
    assert m.params - model("deepseek-v3").params == 61 * 13_959_424
    assert m.context_breaks(1000, 3000) == [2048]


# --- Gemma 3, GLM-4.5, Kimi K2, Qwen3 -----------------------------------------------------------------------------

def test_gemma3_five_local_to_one_global():
    """62 layers, every 6th global: 10 global, 52 local with a 1024 window; 16 KV heads x 256 per token-layer.
    KV for 4096 tokens: (52 * 1024 + 10 * 4096) * 4096 elements * 2 bytes."""
    m = model("gemma-3-27b")
    assert {(g.count, g.window_tokens) for g in m.layer_groups} == {(52, 1024), (10, None)}
    s = scenario("h100-sxm", "gemma-3-27b")
    assert kv_cache_bytes_per_sequence_per_device(s, 4096) == (52 * 1024 + 10 * 4096) * 4096 * 2
    assert m.tie_word_embeddings and m.norms_per_layer == 4


@pytest.mark.parametrize(("model_id", "total", "active"), [
    ("glm-4.5", 355e9, None), ("kimi-k2", 1.04e12, 32.6e9), ("qwen3-8b", 8.2e9, None),
    ("llama-4-scout", 109e9, 17e9), ("qwen3-next-80b-a3b", 80e9, None), ("jamba-v0.1", 51.6e9, 12e9),
])
def test_published_counts(model_id, total, active):
    """Within 2 % of the published totals (Llama 4 Scout's 109B includes its vision encoder: 1.1 % above the
    language model); active counts where the card gives more than one significant figure."""
    m = model(model_id)
    assert m.params == pytest.approx(total, rel=0.02)
    if active is not None:
        assert m.active_params == pytest.approx(active, rel=0.04)


def test_glm_active_count_leaves_out_the_embedding():
    """GLM-4.5's 32B active: 33.63B with the 151552 x 5120 embedding, 32.86B without (a lookup, not a GEMM)."""
    m = model("glm-4.5")
    assert m.active_params - m.embedding_params() == pytest.approx(32e9, rel=0.03)


def test_new_architectures_run_end_to_end():
    from roofline.models.inference import estimate

    for model_id in ("qwen3-next-80b-a3b", "nemotron-h-8b", "jamba-v0.1", "llama-4-scout", "deepseek-v3.2-exp",
                     "gemma-3-27b", "glm-4.5", "kimi-k2", "qwen3-8b"):
        s = scenario("b200", model_id, batch=4, prompt=2048, output=64, weights="fp8")
        e = estimate(s, "expected")
        assert e.decode.step_time_s > 0 and e.prefill.time_s > 0


# --- config.json import errors ------------------------------------------------------------------------------------

_NEMOTRON = {"model_type": "nemotron_h", "hidden_size": 64, "num_hidden_layers": 3, "hybrid_override_pattern": "M*-",
             "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 128,
             "mamba_num_heads": 4, "mamba_head_dim": 16, "n_groups": 1, "ssm_state_size": 8, "conv_kernel": 4,
             "vocab_size": 100}


def test_nemotron_pattern_must_match_the_layers():
    m = architecture_from_hf_config(_NEMOTRON, model_id="x")
    assert sorted((g.mixer, g.ffn) for g in m.layer_groups) == [("attention", False), ("linear", False),
                                                                 ("none", True)]
    with pytest.raises(ModelInputError, match="hybrid_override_pattern"):
        architecture_from_hf_config({**_NEMOTRON, "hybrid_override_pattern": "M*"}, model_id="x")
    with pytest.raises(ModelInputError, match="hybrid_override_pattern"):
        architecture_from_hf_config({**_NEMOTRON, "hybrid_override_pattern": "MXM"}, model_id="x")


def test_text_config_only_for_known_multimodal_types():
    with pytest.raises(ModelInputError, match="text_config"):
        architecture_from_hf_config({"model_type": "llava", "text_config": {}}, model_id="x")
    from dataclasses import replace

    m = architecture_from_hf_config(_NEMOTRON, model_id="x")
    with pytest.raises(ModelInputError, match="linear"):  # linear layers need the mixer's shape
        replace(m, linear=None)
    with pytest.raises(ModelInputError, match="mixer"):
        LayerGroup(count=1, mixer="rnn")
