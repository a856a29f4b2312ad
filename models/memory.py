"""Memory footprint per device and whether it fits; the largest batch that does.

Per device (tp x pp devices):
- weights: all parameters (every expert) x bytes per weight / (tp * pp), plus what every TP rank holds whole
  (:func:`tp_replicated_weight_bytes_per_device`): norms, MLA's q_a/kv_a projections, MoE routers, and the K/V
  projections when there are fewer KV heads than TP ranks (the ops read these in full on every device);
- KV cache: batch x cached tokens x KV elements per token per device x bytes, over the
  attention layers of one stage (layers / pp). Cached tokens are prompt + output, capped at the window
  for sliding-window layers and at the chunk for chunked-attention layers (Llama 4). KV heads split across TP
  (at least one per device); MLA's latent (and DeepSeek V3.2's indexer keys) is replicated on every TP rank.
  Linear-attention and Mamba layers add a constant state per sequence (16-bit, split over TP);
- activations: the workspace of one prefill forward pass. Serving engines prefill in chunks of
  a token budget per pass (vLLM's ``--max-num-batched-tokens``, commonly 8192), so a pass holds
  min(B*P, 8192) tokens: the residual stream and its normalised copy (2*H), the widest
  intermediate (q/k/v or the gated MLP/experts) and, without FlashAttention, those queries'
  scores against the prompt and their softmax; plus fp32 logits for the last positions;
- runtime reserve: CUDA context (about 0.3 GiB with lazy loading, pytorch/pytorch#107667)
  plus library workspaces and allocator slack: 1 GiB, a documented default.
Memory grows monotonically with the batch, so the largest batch that fits is found by bisection.
"""

from __future__ import annotations

from dataclasses import dataclass

from .dtypes import weight_bytes_per_param
from .ops import STATE_BYTES_PER_ELEMENT, residual_bytes_per_element, sizes_for
from .scenario import Scenario

GIB = 1024**3
RUNTIME_RESERVE_BYTES_PER_DEVICE = 1.0 * GIB
LOGITS_BYTES_PER_ELEMENT = 4.0
PREFILL_CHUNK_TOKENS = 8192
MAX_SEARCH_BATCH = 1 << 31


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryFootprint:
    """Bytes per device and in total (total = per device x devices, weights counted once)."""

    devices: int
    capacity_bytes: float
    weights_bytes: float
    kv_cache_bytes: float
    activation_bytes: float
    runtime_reserve_bytes: float
    per_device_weights_bytes: float
    per_device_kv_cache_bytes: float
    per_device_activation_bytes: float
    per_device_runtime_reserve_bytes: float
    max_batch: int

    @property
    def total_bytes(self) -> float:
        return self.weights_bytes + self.kv_cache_bytes + self.activation_bytes + self.runtime_reserve_bytes

    @property
    def per_device_bytes(self) -> float:
        return (self.per_device_weights_bytes + self.per_device_kv_cache_bytes
                + self.per_device_activation_bytes + self.per_device_runtime_reserve_bytes)

    @property
    def fits(self) -> bool:
        return self.per_device_bytes <= self.capacity_bytes


def kv_cache_bytes_per_sequence_per_device(scenario: Scenario, cached_tokens: int) -> float:
    m, pp = scenario.model, scenario.parallelism.pp
    s = sizes_for(scenario)
    a = m.attention
    per_token_per_layer = (a.kv_elements_per_token if a.is_mla
                           else s.kv_heads * (a.head_dim + a.v_head_dim))
    total = 0.0
    for group in m.layer_groups:
        if not group.has_attention:
            continue
        tokens = cached_tokens
        for cap in (group.window_tokens, group.chunk_tokens):  # a chunk keeps at most C keys, like a window
            if cap is not None:
                tokens = min(tokens, cap)
        total += group.count * tokens * per_token_per_layer * s.b_kv
    # linear-attention / Mamba layers: a constant state per sequence, heads split over TP
    total += m.state_elements_per_sequence / s.tp * STATE_BYTES_PER_ELEMENT
    return total / pp


def activation_bytes_per_device(scenario: Scenario, batch: int, prefill_chunk_tokens: int = PREFILL_CHUNK_TOKENS
                                ) -> float:
    """Workspace of one prefill pass over min(B*P, chunk) tokens, plus the last positions' logits."""
    return _activation_bytes(_activation_terms(scenario, prefill_chunk_tokens), batch)


def _activation_terms(scenario: Scenario, prefill_chunk_tokens: int = PREFILL_CHUNK_TOKENS
                      ) -> tuple[float, int, int, int, int]:
    """What the activation workspace is made of, for any batch: (bytes per token in the pass, prompt tokens,
    vocabulary, TP degree: the logits split over TP, tokens one pass holds: ``prefill_chunk_tokens``, by default
    :data:`PREFILL_CHUNK_TOKENS`). The scenario's engine plays no part: a caller that knows the stack ran smaller
    passes (llama.cpp's 512-token n_ubatch, engines.Engine.prefill_chunk_tokens) passes its chunk."""
    m, b = scenario.model, scenario.batching
    s = sizes_for(scenario)
    a = m.attention
    prompt = b.prompt_tokens
    widths = [s.q_heads * a.head_dim + s.kv_heads * (a.head_dim + a.v_head_dim), 2 * m.intermediate_size / s.tp]
    if m.moe is not None:
        widths.append(m.moe.top_k * 2 * m.moe.expert_intermediate_size / s.tp)
    per_token = (2 * m.hidden_size + max(widths)) * residual_bytes_per_element(s)  # the 16-bit stream
    if not b.flash_attention:  # each query's scores against the prompt, and their softmax
        per_token += 2 * s.q_heads * prompt * s.b_a
    return per_token, prompt, m.vocab_size, s.tp, prefill_chunk_tokens


def _activation_bytes(terms: tuple[float, int, int, int, int], batch: int) -> float:
    per_token, prompt, vocab, tp, chunk = terms
    tokens = min(batch * prompt, chunk)
    return tokens * per_token + batch * vocab / tp * LOGITS_BYTES_PER_ELEMENT


def tp_replicated_weight_bytes_per_device(scenario: Scenario) -> float:
    """Bytes each device holds beyond its 1/(tp*pp) share, for weights every TP rank keeps whole.

    Replicated per layer: the layer's norms (norms_per_layer x H); with MLA, q_a_proj (H x r_q, and its norm r_q)
    and kv_a_proj (H x (r_kv + d_rope), and its norm r_kv); with MoE, the router (H x E). Plus the final norm (H).
    Each rank stores R of them, against R / tp in the even share, so it adds R x (1 - 1/tp). With g < tp KV heads
    each rank holds one whole KV head's projections, H x (d_k + d_v), against g / tp of one in the even share.
    Layers split over pipeline stages, so the total is divided by pp. Stored at the non-expert weight format (the
    attention projections at the attention format).
    """
    m, par = scenario.model, scenario.parallelism
    tp, H, a = par.tp, m.hidden_size, scenario.model.attention
    if tp == 1:
        return 0.0
    per_layer = m.norms_per_layer * H
    attention = 0.0
    if a.is_mla:
        if a.q_lora_rank is not None:
            attention += H * a.q_lora_rank + a.q_lora_rank
        attention += H * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank
    replicated = per_layer * m.num_layers + H
    if m.moe is not None:
        replicated += sum(g.count for g in m.layer_groups if g.moe) * m.router_params()
    extra = replicated * (1.0 - 1.0 / tp) * weight_bytes_per_param(scenario.precisions.weights)
    extra_attention = attention * m.attention_layers * (1.0 - 1.0 / tp)
    if not a.is_mla and a.num_kv_heads < tp:
        extra_attention += m.attention_layers * H * (a.head_dim + a.v_head_dim) * (1.0 - a.num_kv_heads / tp)
    extra += extra_attention * weight_bytes_per_param(scenario.precisions.module("attention").weights)
    return extra / par.pp


def weight_bytes_total(scenario: Scenario) -> float:
    """Every parameter at its module's format (:class:`scenario.Precisions`): routed experts, the token mixers'
    projections, embedding, LM head (a tied one is the embedding, stored once), the rest at ``weights``."""
    m, p = scenario.model, scenario.precisions
    by_module = {
        "experts": m.routed_expert_params_total(),
        "attention": m.attention_params_total(),
        "embedding": m.embedding_params(),
        "lm_head": m.lm_head_params(),
    }
    params_by_format = {p.weights: m.params - sum(by_module.values())}
    for module, params in by_module.items():
        dtype = p.module(module, tied=m.tie_word_embeddings).weights
        params_by_format[dtype] = params_by_format.get(dtype, 0) + params
    return sum(params * weight_bytes_per_param(dtype) for dtype, params in params_by_format.items())


def memory_footprint(scenario: Scenario, prefill_chunk_tokens: int | None = None) -> MemoryFootprint:
    """The footprint per device (module docstring), the same under every engine; ``prefill_chunk_tokens``: the
    tokens one prefill pass holds where the caller knows the stack ran smaller passes (validation passes the row's
    engine's micro-batch); None: :data:`PREFILL_CHUNK_TOKENS`."""
    b, par = scenario.batching, scenario.parallelism
    devices = par.devices
    weights = weight_bytes_total(scenario)
    per_device_weights = weights / devices + tp_replicated_weight_bytes_per_device(scenario)
    kv_per_seq = kv_cache_bytes_per_sequence_per_device(scenario, b.prompt_tokens + b.output_tokens)
    capacity = scenario.hardware.memory_capacity_bytes
    fixed = per_device_weights + RUNTIME_RESERVE_BYTES_PER_DEVICE
    # the search below asks for some thirty batch sizes
    activation = _activation_terms(scenario, prefill_chunk_tokens or PREFILL_CHUNK_TOKENS)

    def fits(batch: int) -> bool:
        return fixed + batch * kv_per_seq + _activation_bytes(activation, batch) <= capacity

    if not fits(1):
        max_batch = 0
    else:
        low, high = 1, MAX_SEARCH_BATCH
        while high - low > 1:
            mid = (low + high) // 2
            low, high = (mid, high) if fits(mid) else (low, mid)
        max_batch = low
    act = _activation_bytes(activation, b.batch_size)
    return MemoryFootprint(
        devices=devices,
        capacity_bytes=capacity,
        weights_bytes=weights,
        kv_cache_bytes=kv_per_seq * b.batch_size * devices,
        activation_bytes=act * devices,
        runtime_reserve_bytes=RUNTIME_RESERVE_BYTES_PER_DEVICE * devices,
        per_device_weights_bytes=per_device_weights,
        per_device_kv_cache_bytes=kv_per_seq * b.batch_size,
        per_device_activation_bytes=act,
        per_device_runtime_reserve_bytes=RUNTIME_RESERVE_BYTES_PER_DEVICE,
        max_batch=max_batch,
    )
