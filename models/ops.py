"""The operations of one forward pass, per device, with FLOPs and bytes by kind.

Conventions (per occurrence, per device after tensor-parallel split; ``count`` occurrences
per pass):

- A weight GEMM of T tokens, K inputs, N outputs: FLOPs 2*T*K*N; weight bytes K*N*b_w;
  activation bytes T*(K*b_a + N*b_out) (read input, write output; b_out = b_a at 16 bits, see below).
- Decode attention at context c (keys attended, the new token included) for B sequences,
  h_q query heads, g KV heads of width d per device: FLOPs 2*B*h_q*c*(d_qk+d_v) plus
  5 per score for softmax; KV read B*c*g*(d_qk+d_v)*b_kv; KV write B*g*(d_qk+d_v)*b_kv.
  Its intensity is about 2*(h_q/g)/b_kv: the GQA group size at 16-bit, whatever B is.
- Prefill attention over a causal prompt of P tokens: a fused (FlashAttention) kernel
  computes only the causal pairs sum(min(i, window), i=1..P) and never stores scores;
  the unfused path computes the full P x P score matrix and writes it, softmaxes it
  (read + write) and reads it again for the weighted sum.
- MLA (DeepSeek-V3): prefill decompresses the latent into per-head K/V (plain MHA with
  d_qk = d_nope + d_rope); decode uses weight absorption and attends over the cached
  latent (r_kv + d_rope per token, shared by all heads, replicated on every TP rank).
- MoE expert GEMMs: FLOPs for T*k routed token-expert pairs; weight bytes for the expected
  number of distinct experts the T tokens touch, E*(1-(1-k/E)^T).
- TP: heads, KV heads (at least one per device), MLP and expert widths, vocabulary split
  across ``tp``; two ring all-reduces per layer (after attention, after the MLP) and one
  after the vocabulary-parallel embedding, each sending 2*(tp-1)/tp * T*H*b_a bytes; one
  all-gather of the logits, (tp-1)/tp * B*V*b_a bytes.
- PP: layers run stage after stage; (pp-1) activation sends of T*H*b_a bytes per pass.
- 8-bit activations (W8A8) are GEMM inputs only: the residual stream, GEMM outputs, element-wise reads
  and what collectives carry stay 16-bit, b_out = max(b_a, 2) (see RESIDUAL_MIN_BYTES_PER_ELEMENT). A
  GEMM moves T*(K*b_a + N*b_out) activation bytes; a norm or gated activation that feeds a GEMM writes
  at b_a (its quantisation fused), the other element-wise ops write 16-bit.

Values may be numpy arrays: batch and context broadcast, so one call evaluates a sweep.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .architecture import LayerGroup, ModelArchitecture
from .dtypes import activation_bytes_per_element, kv_bytes_per_element, weight_bytes_per_param
from .scenario import Scenario

Number = float | np.ndarray

SOFTMAX_FLOPS_PER_SCORE = 5  # max, subtract, exp, sum, divide
RMSNORM_FLOPS_PER_ELEMENT = 4  # square, accumulate, scale by rsqrt, multiply by weight
ROPE_FLOPS_PER_ELEMENT = 3  # a rotation is 4 multiplies and 2 adds per pair of elements
GATED_ACTIVATION_FLOPS_PER_ELEMENT = 5  # SiLU/GELU of the gate (~4) times the up projection (1)

# FP8 (W8A8) serving recipes quantise activations only as GEMM inputs (a per-tensor scale applied
# at the GEMM); the residual stream between layers, which the tensor-parallel all-reduces sum and
# the pipeline stages pass on, stays 16-bit (TensorRT-LLM and vLLM FP8 checkpoints keep bf16/fp16
# hidden states and all-reduces). So collectives move at least 2 bytes per element.
RESIDUAL_MIN_BYTES_PER_ELEMENT = 2.0

KINDS = ("matmul", "attention", "elementwise", "embedding", "collective")


@dataclass(frozen=True, slots=True, kw_only=True)
class Op:
    """One kernel of a pass: work per occurrence per device, ``count`` occurrences."""

    phase: str
    name: str
    kind: str
    count: int
    flops: Number
    weight_bytes: Number = 0.0
    activation_bytes: Number = 0.0
    kv_read_bytes: Number = 0.0
    kv_write_bytes: Number = 0.0
    comm_bytes: Number = 0.0
    weight_dtype: str = ""  # storage format of weight_bytes (for dequantisation costs)
    # the dtype the op computes in when it is not the scenario's (per-module precision); "" = the scenario's
    compute_dtype: str = ""
    # the sizes the formulas above were evaluated with (T, K, N, b_w, ...), for explanations
    dims: tuple[tuple[str, float], ...] = ()
    # tokens of the pass a weight GEMM belongs to (B*P in prefill, B in decode; 0: not a weight GEMM): an engine that
    # evaluates a prompt in micro-batches streams the weights once per micro-batch (estimate.micro_batches), which is
    # engine behaviour and so charged in ``expected`` only, never here
    pass_tokens: Number = 0.0

    @property
    def memory_bytes(self) -> Number:
        """Bytes moved to or from device memory (HBM/DRAM)."""
        return self.weight_bytes + self.activation_bytes + self.kv_read_bytes + self.kv_write_bytes

    @property
    def arithmetic_intensity_flops_per_byte(self) -> Number:
        return np.divide(self.flops, np.maximum(self.memory_bytes, 1e-30))


@dataclass(frozen=True, slots=True)
class _Sizes:
    """Per-device element sizes and head counts for one scenario (``b_w``, ``w_dtype``, ``b_a``, ``compute``: the
    module being built; :func:`module_sizes` gives another module's)."""

    b_w: float
    b_we: float  # routed-expert weights
    w_dtype: str
    we_dtype: str
    b_a: float
    b_kv: float
    tp: int
    q_heads: int
    kv_heads: int
    hidden: int
    compute: str = ""  # the GEMMs' compute dtype when not the scenario's
    attention_kernel: str = ""  # the attention kernel's compute dtype when not the scenario's
    expert_compute: str = ""
    modules: tuple[tuple[str, float, str, float, str], ...] = ()  # (module, b_w, w_dtype, b_a, compute)


def module_sizes(s: _Sizes, module: str) -> _Sizes:
    """``s`` with the weights, GEMM inputs and compute dtype of ``module`` (attention, embedding, lm_head)."""
    for name, b_w, w_dtype, b_a, compute in s.modules:
        if name == module:
            return replace(s, b_w=b_w, w_dtype=w_dtype, b_a=b_a, compute=compute)
    return s


def expected_distinct_experts(num_experts: int, top_k: int, tokens: Number) -> Number:
    """E*(1-(1-k/E)^T): distinct experts T independently routed tokens touch, in expectation."""
    return num_experts * (1.0 - np.power(1.0 - top_k / num_experts, tokens))


def causal_attention_pairs(prompt_tokens: Number, window_tokens: int | None) -> Number:
    """(query, key) pairs of causal attention over a prompt: sum of min(i, W) for i = 1..P."""
    p = np.asarray(prompt_tokens, dtype=float)
    full = p * (p + 1.0) / 2.0
    if window_tokens is None:
        return full
    w = float(window_tokens)
    windowed = w * (w + 1.0) / 2.0 + (p - w) * w
    return np.where(p <= w, full, windowed)


def residual_bytes_per_element(s: _Sizes) -> float:
    """Bytes per element of the 16-bit stream: the residual, GEMM outputs, what collectives carry."""
    return max(s.b_a, RESIDUAL_MIN_BYTES_PER_ELEMENT)


def _matmul(phase: str, name: str, count: int, tokens: Number, k: float, n: float, s: _Sizes,
            weight_matrices: Number = 1.0) -> Op:
    """T x K input at the activation format b_a, T x N output at the 16-bit stream's b_out (an FP8 GEMM writes
    bf16)."""
    b_out = residual_bytes_per_element(s)
    return Op(
        phase=phase, name=name, kind="matmul", count=count,
        flops=2.0 * tokens * k * n,
        weight_bytes=weight_matrices * k * n * s.b_w,
        activation_bytes=tokens * (k * s.b_a + n * b_out),
        weight_dtype=s.w_dtype, compute_dtype=s.compute, pass_tokens=tokens,
        dims=(("T", tokens), ("K", k), ("N", n), ("b_w", s.b_w), ("b_a", s.b_a), ("b_out", b_out)),
    )


def _elementwise(phase: str, name: str, count: int, elements: Number, flops_per_element: float,
                 reads: float, s: _Sizes, weight_elements: float = 0.0, feeds_gemm: bool = False) -> Op:
    """Reads (and weights, e.g. a norm's scale) in the 16-bit stream; the write is in the activation format when
    it is a GEMM's input (the quantisation fused into the norm or the gated activation), else 16-bit too."""
    b_in = residual_bytes_per_element(s)
    b_out = s.b_a if feeds_gemm else b_in
    return Op(
        phase=phase, name=name, kind="elementwise", count=count,
        flops=flops_per_element * elements,
        weight_bytes=weight_elements * b_in,
        activation_bytes=elements * (reads * b_in + b_out),
        dims=(("elements", elements), ("FLOP/element", flops_per_element), ("reads", reads), ("b_in", b_in),
              ("b_out", b_out)),
    )


def _all_reduce(phase: str, name: str, count: int, tokens: Number, s: _Sizes) -> Op:
    b_r = residual_bytes_per_element(s)
    message = tokens * s.hidden * b_r
    return Op(
        phase=phase, name=name, kind="collective", count=count, flops=0.0,
        comm_bytes=2.0 * (s.tp - 1) / s.tp * message,
        dims=(("tp", s.tp), ("T", tokens), ("H", s.hidden), ("b_a", b_r)),
    )


def chunked_attention_pairs(prompt_tokens: Number, chunk_tokens: int) -> Number:
    """(query, key) pairs of chunked causal attention (Llama 4): each query sees the keys of its own chunk of C
    up to itself, sum of ((i-1) mod C) + 1 for i = 1..P = n*C(C+1)/2 + r(r+1)/2 with P = n*C + r."""
    p = np.asarray(prompt_tokens, dtype=float)
    c = float(chunk_tokens)
    full, rest = np.floor(p / c), np.mod(p, c)
    return full * c * (c + 1.0) / 2.0 + rest * (rest + 1.0) / 2.0


def attended_keys(context: Number, window: int | None, chunk: int | None) -> Number:
    """Keys one decode query attends to at context c (the new token included): min(c, W) under a window or a
    sparse top-k, ((c-1) mod C) + 1 under chunked attention, else c."""
    if chunk is not None:
        return np.mod(np.asarray(context, dtype=float) - 1.0, chunk) + 1.0
    return np.minimum(context, window) if window is not None else context


def _gqa_attention(phase: str, count: int, batch: Number, context: Number, prompt: Number,
                   window: int | None, flash: bool, m: ModelArchitecture, s: _Sizes, chunk: int | None = None,
                   label: str | None = None) -> list[Op]:
    a = m.attention
    hq, g, dqk, dv = s.q_heads, s.kv_heads, a.head_dim, a.v_head_dim
    if label is None:
        label = ("attention" if window is None else f"attention (window {window})") if chunk is None \
            else f"attention (chunk {chunk})"
    if phase == "decode":
        keys = attended_keys(context, window, chunk)
        pairs = batch * keys * hq
        q_bytes, o_bytes = batch * hq * dqk * s.b_a, batch * hq * dv * s.b_a
        k_read, v_read = batch * keys * g * dqk * s.b_kv, batch * keys * g * dv * s.b_kv
        kv_write = batch * g * (dqk + dv) * s.b_kv
        if flash:
            return [Op(phase=phase, name=label, kind="attention", count=count,
                       flops=pairs * (2.0 * (dqk + dv) + SOFTMAX_FLOPS_PER_SCORE),
                       activation_bytes=q_bytes + o_bytes, kv_read_bytes=k_read + v_read,
                       kv_write_bytes=kv_write, compute_dtype=s.attention_kernel,
                       dims=(("B", batch), ("c", keys), ("h_q", hq), ("g", g), ("d_qk", dqk), ("d_v", dv),
                             ("b_kv", s.b_kv), ("b_a", s.b_a)))]
        scores = pairs * s.b_a
        return [
            Op(phase=phase, name=f"{label} scores", kind="attention", count=count,
               flops=2.0 * pairs * dqk, activation_bytes=q_bytes + scores, kv_read_bytes=k_read,
               kv_write_bytes=kv_write, compute_dtype=s.attention_kernel),
            Op(phase=phase, name=f"{label} softmax", kind="elementwise", count=count,
               flops=SOFTMAX_FLOPS_PER_SCORE * pairs, activation_bytes=2.0 * scores),
            Op(phase=phase, name=f"{label} weighted sum", kind="attention", count=count,
               flops=2.0 * pairs * dv, activation_bytes=scores + o_bytes, kv_read_bytes=v_read,
               compute_dtype=s.attention_kernel),
        ]
    tokens = batch * prompt
    q_bytes, o_bytes = tokens * hq * dqk * s.b_a, tokens * hq * dv * s.b_a
    k_bytes, v_bytes = tokens * g * dqk * s.b_a, tokens * g * dv * s.b_a
    kv_write = tokens * g * (dqk + dv) * s.b_kv
    if flash:
        pairs = batch * hq * (causal_attention_pairs(prompt, window) if chunk is None
                              else chunked_attention_pairs(prompt, chunk))
        return [Op(phase=phase, name=label, kind="attention", count=count,
                   flops=pairs * (2.0 * (dqk + dv) + SOFTMAX_FLOPS_PER_SCORE),
                   activation_bytes=q_bytes + k_bytes + v_bytes + o_bytes, kv_write_bytes=kv_write,
                   compute_dtype=s.attention_kernel)]
    pairs = batch * hq * prompt * prompt  # the unfused path computes and stores the full P x P matrix
    scores = pairs * s.b_a
    return [
        Op(phase=phase, name=f"{label} scores", kind="attention", count=count, flops=2.0 * pairs * dqk,
           activation_bytes=q_bytes + k_bytes + scores, kv_write_bytes=kv_write, compute_dtype=s.attention_kernel),
        Op(phase=phase, name=f"{label} softmax", kind="elementwise", count=count,
           flops=SOFTMAX_FLOPS_PER_SCORE * pairs, activation_bytes=2.0 * scores),
        Op(phase=phase, name=f"{label} weighted sum", kind="attention", count=count,
           flops=2.0 * pairs * dv, activation_bytes=scores + v_bytes + o_bytes, compute_dtype=s.attention_kernel),
    ]


def _mla_block(phase: str, count: int, batch: Number, context: Number, prompt: Number,
               flash: bool, m: ModelArchitecture, s: _Sizes) -> list[Op]:
    """MLA projections and attention (DeepSeek-V3); q_a and kv_a are replicated across TP."""
    a, H = m.attention, s.hidden
    hq, nope, rope, dv, r_kv = s.q_heads, a.qk_nope_head_dim, a.qk_rope_head_dim, a.v_head_dim, a.kv_lora_rank
    tokens = batch if phase == "decode" else batch * prompt
    latent = r_kv + rope
    ops: list[Op] = []
    if a.q_lora_rank is None:
        ops.append(_matmul(phase, "q_proj", count, tokens, H, hq * (nope + rope), s))
    else:
        ops += [
            _matmul(phase, "q_a_proj", count, tokens, H, a.q_lora_rank, s),
            _elementwise(phase, "q_a_norm", count, tokens * a.q_lora_rank, RMSNORM_FLOPS_PER_ELEMENT, 1, s,
                         a.q_lora_rank, feeds_gemm=True),
            _matmul(phase, "q_b_proj", count, tokens, a.q_lora_rank, hq * (nope + rope), s),
        ]
    ops += [
        _matmul(phase, "kv_a_proj", count, tokens, H, latent, s),
        _elementwise(phase, "kv_a_norm", count, tokens * r_kv, RMSNORM_FLOPS_PER_ELEMENT, 1, s, r_kv, feeds_gemm=True),
        _elementwise(phase, "rope", count, tokens * (hq + 1) * rope, ROPE_FLOPS_PER_ELEMENT, 1, s),
    ]
    if a.indexer_heads:
        ops += _indexer(phase, count, batch, context, prompt, m, s)
    if phase == "prefill":
        ops.append(_matmul(phase, "kv_b_proj (decompress)", count, tokens, r_kv, hq * (nope + dv), s))
        mha = replace(s, kv_heads=hq)
        attn = _gqa_attention(phase, count, batch, context, prompt, a.sparse_top_k, flash,
                              _with_head_dims(m, nope + rope, dv), mha,
                              label=None if a.sparse_top_k is None else f"attention (top {a.sparse_top_k})")
        # the cache stores the latent, not the decompressed heads
        first = attn[0]
        attn[0] = Op(**{**_fields(first), "kv_write_bytes": tokens * latent * s.b_kv})
        return ops + attn
    keys = attended_keys(context, a.sparse_top_k, None)  # DeepSeek sparse attention: the top-k selected keys
    pairs = batch * keys * hq
    kv_read = batch * keys * latent * s.b_kv
    kv_write = batch * latent * s.b_kv
    ops.append(Op(phase=phase, name="q absorb (W_UK)", kind="matmul", count=count,
                  flops=2.0 * batch * hq * nope * r_kv, weight_bytes=hq * nope * r_kv * s.b_w,
                  activation_bytes=batch * hq * (nope + r_kv) * s.b_a, weight_dtype=s.w_dtype,
                  compute_dtype=s.compute))
    q_bytes, o_bytes = batch * hq * latent * s.b_a, batch * hq * r_kv * s.b_a
    if flash:
        ops.append(Op(phase=phase, name="attention (latent)", kind="attention", count=count,
                      flops=pairs * (2.0 * (latent + r_kv) + SOFTMAX_FLOPS_PER_SCORE),
                      activation_bytes=q_bytes + o_bytes, kv_read_bytes=kv_read, kv_write_bytes=kv_write,
                      compute_dtype=s.attention_kernel))
    else:
        scores = pairs * s.b_a
        ops += [
            Op(phase=phase, name="attention (latent) scores", kind="attention", count=count,
               flops=2.0 * pairs * latent, activation_bytes=q_bytes + scores, kv_read_bytes=kv_read,
               kv_write_bytes=kv_write, compute_dtype=s.attention_kernel),
            Op(phase=phase, name="attention (latent) softmax", kind="elementwise", count=count,
               flops=SOFTMAX_FLOPS_PER_SCORE * pairs, activation_bytes=2.0 * scores),
            Op(phase=phase, name="attention (latent) weighted sum", kind="attention", count=count,
               flops=2.0 * pairs * r_kv, activation_bytes=scores + o_bytes,
               kv_read_bytes=batch * keys * r_kv * s.b_kv, compute_dtype=s.attention_kernel),
        ]
    ops.append(Op(phase=phase, name="v absorb (W_UV)", kind="matmul", count=count,
                  flops=2.0 * batch * hq * r_kv * dv, weight_bytes=hq * r_kv * dv * s.b_w,
                  activation_bytes=batch * hq * (r_kv + dv) * s.b_a, weight_dtype=s.w_dtype,
                  compute_dtype=s.compute))
    return ops


INDEXER_FLOPS_PER_SCORE = 3  # ReLU, times the head's weight, summed over the heads


def _indexer(phase: str, count: int, batch: Number, context: Number, prompt: Number, m: ModelArchitecture,
             s: _Sizes) -> list[Op]:
    """DeepSeek V3.2's lightning indexer, replicated on every TP rank: q (from the q latent), one shared key and
    per-head weights; it scores every cached key, n_i heads of d_i, and keeps the top k. Its keys are cached
    (d_i per token at the KV format) and read in full: the part of decode that still grows with the context.
    Scores per query: 2*n_i*d_i FLOPs + 3*n_i (ReLU, weight, sum)."""
    a, H = m.attention, s.hidden
    n_i, d_i = a.indexer_heads, a.indexer_head_dim
    tokens = batch if phase == "decode" else batch * prompt
    q_in = a.q_lora_rank or H
    ops = [
        _matmul(phase, "indexer q", count, tokens, q_in, n_i * d_i, s),
        _matmul(phase, "indexer k, weights", count, tokens, H, d_i + n_i, s),
    ]
    per_score = 2.0 * n_i * d_i + INDEXER_FLOPS_PER_SCORE * n_i
    if phase == "decode":
        scores = batch * context
        ops.append(Op(phase=phase, name="indexer scores", kind="attention", count=count, flops=scores * per_score,
                      activation_bytes=batch * (n_i * d_i + n_i) * s.b_a + scores * 4.0,
                      kv_read_bytes=scores * d_i * s.b_kv, kv_write_bytes=batch * d_i * s.b_kv,
                      compute_dtype=s.attention_kernel,
                      dims=(("B", batch), ("c", context), ("n_i", n_i), ("d_i", d_i), ("b_kv", s.b_kv))))
        return ops
    pairs = batch * causal_attention_pairs(prompt, None)
    ops.append(Op(phase=phase, name="indexer scores", kind="attention", count=count, flops=pairs * per_score,
                  activation_bytes=tokens * (n_i * d_i + n_i + d_i) * s.b_a, kv_write_bytes=tokens * d_i * s.b_kv,
                  compute_dtype=s.attention_kernel))
    return ops


# The recurrent state of linear-attention and Mamba layers is kept 16-bit (vLLM's mamba_ssm_cache_dtype "auto":
# the model's dtype); the KV format does not apply to it.
STATE_BYTES_PER_ELEMENT = 2.0


def _linear_block(phase: str, count: int, batch: Number, prompt: Number, m: ModelArchitecture, s: _Sizes
                  ) -> list[Op]:
    """A linear-attention or Mamba layer (:class:`architecture.LinearMixer`), heads split over TP: in_proj, the
    depthwise convolution (2k FLOPs per channel), the recurrence (``state_flops_per_element`` per state element
    per token), the gated norm and out_proj. Decode reads and writes each sequence's state once per step
    (constant in the context: nothing here grows with c); prefill writes the final state."""
    lin = m.linear
    assert lin is not None
    tp, H = s.tp, s.hidden
    tokens = batch if phase == "decode" else batch * prompt
    state_bytes = batch * lin.state_elements_per_sequence / tp * STATE_BYTES_PER_ELEMENT
    ops = [_matmul(phase, "linear in_proj", count, tokens, H, lin.in_proj_size / tp, s)]
    if lin.inner_proj_params:
        inner = lin.inner_proj_params / tp
        b_out = residual_bytes_per_element(s)
        ops.append(Op(phase=phase, name="linear inner proj", kind="matmul", count=count, flops=2.0 * tokens * inner,
                      weight_bytes=inner * s.b_w, activation_bytes=tokens * lin.out_proj_in / tp * (s.b_a + b_out),
                      weight_dtype=s.w_dtype, compute_dtype=s.compute, pass_tokens=tokens))
    ops += [
        _elementwise(phase, "linear conv", count, tokens * lin.conv_channels / tp, 2 * lin.conv_kernel, 1, s,
                     lin.conv_channels * lin.conv_kernel / tp),
        Op(phase=phase, name=f"linear recurrence ({lin.kind})", kind="attention", count=count,
           flops=tokens * lin.state_flops_per_element * lin.state_elements / tp,
           activation_bytes=tokens * (lin.conv_channels + lin.out_proj_in) / tp * s.b_a,
           kv_read_bytes=state_bytes if phase == "decode" else 0.0, kv_write_bytes=state_bytes,
           compute_dtype=s.attention_kernel,
           dims=(("T", tokens), ("state", lin.state_elements_per_sequence / tp),
                 ("b_state", STATE_BYTES_PER_ELEMENT))),
        _elementwise(phase, "linear gated norm", count, tokens * lin.out_proj_in / tp, RMSNORM_FLOPS_PER_ELEMENT, 2,
                     s, lin.out_proj_in / tp, feeds_gemm=True),
        _matmul(phase, "linear out_proj", count, tokens, lin.out_proj_in / tp, H, s),
    ]
    return ops


def _fields(op: Op) -> dict:
    return {name: getattr(op, name) for name in Op.__slots__}


def _with_head_dims(m: ModelArchitecture, head_dim: int, v_head_dim: int) -> ModelArchitecture:
    from dataclasses import replace

    attention = replace(m.attention, kind="gqa", head_dim=head_dim, v_head_dim=v_head_dim,
                        num_kv_heads=m.attention.num_heads)
    return replace(m, attention=attention)


def _mlp(phase: str, count: int, tokens: Number, width: int, label: str, s: _Sizes, gated: bool = True
         ) -> list[Op]:
    per_device = width / s.tp
    if not gated:
        return [
            _matmul(phase, f"{label} up", count, tokens, s.hidden, per_device, s),
            _elementwise(phase, f"{label} activation", count, tokens * per_device, 4, 1, s, feeds_gemm=True),
            _matmul(phase, f"{label} down", count, tokens, per_device, s.hidden, s),
        ]
    return [
        _matmul(phase, f"{label} gate_up", count, tokens, s.hidden, 2 * per_device, s),
        _elementwise(phase, f"{label} activation", count, tokens * per_device,
                     GATED_ACTIVATION_FLOPS_PER_ELEMENT, 2, s, feeds_gemm=True),
        _matmul(phase, f"{label} down", count, tokens, per_device, s.hidden, s),
    ]


def _moe(phase: str, count: int, tokens: Number, m: ModelArchitecture, s: _Sizes) -> list[Op]:
    moe = m.moe
    assert moe is not None
    width = moe.expert_intermediate_size / s.tp
    routed = tokens * moe.top_k
    distinct = expected_distinct_experts(moe.num_experts, moe.top_k, tokens)
    H = s.hidden
    b_out = residual_bytes_per_element(s)
    ops = [
        _matmul(phase, "router", count, tokens, H, moe.num_experts + (1 if moe.shared_expert_gate else 0), s),
        Op(phase=phase, name="experts gate_up", kind="matmul", count=count,
           flops=2.0 * routed * H * 2 * width, weight_bytes=distinct * H * 2 * width * s.b_we,
           activation_bytes=routed * (H * s.b_a + 2 * width * b_out), weight_dtype=s.we_dtype,
           compute_dtype=s.expert_compute, pass_tokens=tokens),
        _elementwise(phase, "experts activation", count, routed * width, GATED_ACTIVATION_FLOPS_PER_ELEMENT, 2, s,
                     feeds_gemm=True),
        Op(phase=phase, name="experts down", kind="matmul", count=count,
           flops=2.0 * routed * width * H, weight_bytes=distinct * width * H * s.b_we,
           activation_bytes=routed * (width * s.b_a + H * b_out), weight_dtype=s.we_dtype,
           compute_dtype=s.expert_compute, pass_tokens=tokens),
    ]
    if moe.shared_intermediate_size:
        ops += _mlp(phase, count, tokens, moe.shared_intermediate_size, "shared expert", s)
    return ops


def _layer_group_ops(phase: str, group: LayerGroup, batch: Number, context: Number, prompt: Number,
                     scenario: Scenario, s: _Sizes) -> list[Op]:
    m = scenario.model
    a = m.attention
    n = group.count
    tokens = batch if phase == "decode" else batch * prompt
    flash = scenario.batching.flash_attention
    H = s.hidden
    ops = [_elementwise(phase, "norms", n * m.norms_per_layer, tokens * H, RMSNORM_FLOPS_PER_ELEMENT, 1, s, H,
                        feeds_gemm=True)]
    sa = module_sizes(s, "attention")
    if group.mixer != "attention":
        return _mixerless_ops(phase, group, tokens, batch, prompt, scenario, s, sa, ops)
    if a.is_mla:
        ops += _mla_block(phase, n, batch, context, prompt, flash, m, sa)
        o_in = s.q_heads * a.v_head_dim
    else:
        qkv_out = (s.q_heads * a.head_dim) * (2 if a.output_gate else 1) + s.kv_heads * (a.head_dim + a.v_head_dim)
        ops.append(_matmul(phase, "qkv_proj", n, tokens, H, qkv_out, sa))
        if a.qk_norm:
            ops.append(_elementwise(phase, "q/k norm", n, tokens * (s.q_heads + s.kv_heads) * a.head_dim,
                                    RMSNORM_FLOPS_PER_ELEMENT, 1, s, 2 * a.head_dim))
        ops.append(_elementwise(phase, "rope", n, tokens * (s.q_heads + s.kv_heads) * a.head_dim,
                                ROPE_FLOPS_PER_ELEMENT, 1, s))
        ops += _gqa_attention(phase, n, batch, context, prompt, group.window_tokens, flash, m, sa,
                              chunk=group.chunk_tokens)
        o_in = s.q_heads * a.v_head_dim
        if a.output_gate:
            ops.append(_elementwise(phase, "attention output gate", n, tokens * o_in,
                                    GATED_ACTIVATION_FLOPS_PER_ELEMENT, 2, s, feeds_gemm=True))
    ops.append(_matmul(phase, "o_proj", n, tokens, o_in, H, sa))
    if s.tp > 1:
        ops.append(_all_reduce(phase, "all-reduce (attention)", n, tokens, s))
    ops.append(_elementwise(phase, "residual add", (2 if group.ffn else 1) * n, tokens * H, 1, 2, s))
    return ops + _ffn_ops(phase, group, tokens, m, s)


def _ffn_ops(phase: str, group: LayerGroup, tokens: Number, m: ModelArchitecture, s: _Sizes) -> list[Op]:
    if not group.ffn:
        return []
    n = group.count
    ops = _moe(phase, n, tokens, m, s) if group.moe else _mlp(phase, n, tokens, m.intermediate_size, "mlp", s,
                                                              gated=m.mlp_gated)
    if s.tp > 1:
        ops.append(_all_reduce(phase, "all-reduce (mlp)", n, tokens, s))
    return ops


def _mixerless_ops(phase: str, group: LayerGroup, tokens: Number, batch: Number, prompt: Number,
                   scenario: Scenario, s: _Sizes, sa: _Sizes, ops: list[Op]) -> list[Op]:
    """A layer whose token mixer is linear (constant state) or absent (an MLP-only layer); ``ops``: its norms."""
    m, n = scenario.model, group.count
    if group.mixer == "linear":
        ops += _linear_block(phase, n, batch, prompt, m, sa)
        if s.tp > 1:
            ops.append(_all_reduce(phase, "all-reduce (linear)", n, tokens, s))
    adds = (1 if group.mixer == "linear" else 0) + (1 if group.ffn else 0)
    if adds:
        ops.append(_elementwise(phase, "residual add", adds * n, tokens * s.hidden, 1, 2, s))
    return ops + _ffn_ops(phase, group, tokens, m, s)


_MERGE_FIELDS = ("flops", "weight_bytes", "activation_bytes", "kv_read_bytes", "kv_write_bytes", "comm_bytes")


def _same(a: Number, b: Number) -> bool:
    if isinstance(a, float | int) and isinstance(b, float | int):  # the common case, kept cheap
        return a == b
    return a is b or bool(np.array_equal(a, b))


def _merge(ops: list[Op]) -> list[Op]:
    """Combine ops of the same name from different layer groups (identical shapes add counts)."""
    merged: dict[str, Op] = {}
    for op in ops:
        key = op.name
        if key in merged:
            prev = merged[key]
            per_layer_same = all(_same(getattr(prev, f), getattr(op, f)) for f in _MERGE_FIELDS)
            if per_layer_same:
                merged[key] = Op(**{**_fields(prev), "count": prev.count + op.count})
                continue
            key = f"{op.name} [{len(merged)}]"
        merged[key] = op
    return list(merged.values())


def _module_entry(p, module: str, tied: bool, scenario_compute: str) -> tuple[str, float, str, float, str]:
    mp = p.module(module, tied=tied)
    compute = "" if mp.compute_dtype == scenario_compute else mp.compute_dtype
    return (module, weight_bytes_per_param(mp.weights), mp.weights, activation_bytes_per_element(mp.activations),
            compute)


def sizes_for(scenario: Scenario) -> _Sizes:
    m, p, tp = scenario.model, scenario.precisions, scenario.parallelism.tp
    ratio = scenario.batching.kv_compression_ratio
    main = p.compute_dtype
    tied = m.tie_word_embeddings
    modules = tuple(_module_entry(p, name, tied, main) for name in ("attention", "embedding", "lm_head"))
    kernel = p.attention_compute_dtype
    expert = p.module("experts").compute_dtype
    return _Sizes(
        b_w=weight_bytes_per_param(p.weights),
        b_we=weight_bytes_per_param(p.expert_weights_or_weights),
        w_dtype=p.weights,
        we_dtype=p.expert_weights_or_weights,
        b_a=activation_bytes_per_element(p.activations),
        b_kv=kv_bytes_per_element(p.kv) / ratio,
        tp=tp,
        q_heads=m.attention.num_heads // tp,
        kv_heads=math.ceil(m.attention.num_kv_heads / tp),
        hidden=m.hidden_size,
        attention_kernel="" if kernel == main else kernel,
        expert_compute="" if expert == main else expert,
        modules=modules,
    )


def layer_group_ops(scenario: Scenario, phase: str, group_index: int, *, batch: Number, context: Number = 0.0,
                    prompt: Number | None = None) -> list[Op]:
    """The ops of one layer group of the model (``scenario.model.layer_groups[group_index]``), counts over its layers:
    what kernels.py counts per layer of an architecture kind."""
    m = scenario.model
    prompt = scenario.batching.prompt_tokens if prompt is None else prompt
    return _layer_group_ops(phase, m.layer_groups[group_index], batch, context, prompt, scenario, sizes_for(scenario))


def build_ops(scenario: Scenario, phase: str, *, batch: Number, context: Number = 0.0,
              prompt: Number | None = None) -> list[Op]:
    """Every op of one pass, per device.

    ``phase`` is ``prefill`` (``batch`` prompts of ``prompt`` tokens, default the scenario's)
    or ``decode`` (one new token per sequence, attending to ``context`` tokens).
    """
    if phase not in ("prefill", "decode"):
        raise ValueError(f"phase must be prefill or decode, not {phase!r}")
    m = scenario.model
    s = sizes_for(scenario)
    prompt = scenario.batching.prompt_tokens if prompt is None else prompt
    tokens = batch if phase == "decode" else batch * prompt
    H = s.hidden
    b_r = residual_bytes_per_element(s)  # the 16-bit stream: embedding output, pipeline sends, gathered logits
    ops: list[Op] = [Op(phase=phase, name="embedding", kind="embedding", count=1, flops=0.0,
                        weight_bytes=tokens * H * module_sizes(s, "embedding").b_w / s.tp,
                        activation_bytes=tokens * H * b_r)]
    if s.tp > 1:
        ops.append(_all_reduce(phase, "all-reduce (embedding)", 1, tokens, s))
    layer_ops: list[Op] = []
    for group in m.layer_groups:
        layer_ops += _layer_group_ops(phase, group, batch, context, prompt, scenario, s)
    ops += _merge(layer_ops)
    pp = scenario.parallelism.pp
    if pp > 1:
        ops.append(Op(phase=phase, name="pipeline send", kind="collective", count=pp - 1, flops=0.0,
                      comm_bytes=tokens * H * b_r, dims=(("T", tokens), ("H", H), ("b_a", b_r))))
    ops.append(_elementwise(phase, "final norm", 1, batch * H, RMSNORM_FLOPS_PER_ELEMENT, 1, s, H, feeds_gemm=True))
    # logits only for the last position of each sequence, also in prefill
    ops.append(_matmul(phase, "lm_head", 1, batch, H, m.vocab_size / s.tp, module_sizes(s, "lm_head")))
    if s.tp > 1:  # the vocabulary-parallel logits are gathered: each device sends its (tp-1)/tp share
        ops.append(Op(phase=phase, name="all-gather (logits)", kind="collective", count=1, flops=0.0,
                      comm_bytes=(s.tp - 1) / s.tp * batch * m.vocab_size * b_r,
                      dims=(("tp", s.tp), ("B", batch), ("V", m.vocab_size), ("b_a", b_r))))
    return ops
