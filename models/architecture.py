"""A decoder-only transformer's shape, and the parameter counts derived from it.

Counts (H = hidden size, h = query heads, g = KV heads, d = head dim, I = MLP width,
V = vocabulary):

- GQA attention per layer: q H*h*d, k and v H*g*d each, o h*d*H (+ biases where the model
  has them; + 2*d for q/k norms; + h attention-sink logits for gpt-oss).
- MLA attention (DeepSeek-V3) per layer: q_a H*r_q + r_q (norm), q_b r_q*h*(d_nope+d_rope),
  kv_a H*(r_kv+d_rope) + r_kv (norm), kv_b r_kv*h*(d_nope+d_v), o h*d_v*H.
- Gated MLP (SwiGLU/GeGLU) 3*H*I; plain MLP 2*H*I.
- MoE layer: router H*E, E experts of 3*H*I_e, shared experts 3*H*I_s.
- Norms: one H-vector each; embeddings V*H, LM head V*H unless tied.
- Gated attention output (Qwen3-Next): q_proj also produces a gate per query element, + H*h*d.
- DeepSeek sparse attention (V3.2) adds an indexer per layer: wq_b r_q*(n_i*d_i), wk H*d_i and its LayerNorm
  2*d_i, weights_proj H*n_i (n_i indexer heads of width d_i).
- Linear-attention and Mamba layers (:class:`LinearMixer`): in_proj H*N_in, a depthwise causal convolution
  C*k (+ C bias), per-head vectors, out_proj N_out*H; their state per sequence is a constant.
Active parameters count k of E routed experts.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ModelInputError


@dataclass(frozen=True, slots=True, kw_only=True)
class Attention:
    """Attention block shape. ``kind`` is ``gqa`` (covers MHA g=h and MQA g=1) or ``mla``."""

    kind: str = "gqa"
    num_heads: int
    num_kv_heads: int
    head_dim: int
    v_head_dim: int
    qkv_bias: bool = False
    o_bias: bool = False
    qk_norm: bool = False
    sinks: bool = False
    q_lora_rank: int | None = None
    kv_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    output_gate: bool = False  # Qwen3-Next: sigmoid(gate) * attention output, the gate from q_proj
    # DeepSeek sparse attention (V3.2): each query attends to the top-k keys a lightweight indexer picks
    sparse_top_k: int | None = None
    indexer_heads: int = 0
    indexer_head_dim: int = 0

    @property
    def is_mla(self) -> bool:
        return self.kind == "mla"

    @property
    def rope_dim(self) -> int:
        """Dims RoPE rotates per head (the whole q/k head outside MLA)."""
        return self.qk_rope_head_dim if self.is_mla else self.head_dim

    @property
    def kv_elements_per_token(self) -> int:
        """KV-cache elements one token stores per layer (all KV heads, before TP)."""
        if self.is_mla:
            return self.kv_lora_rank + self.qk_rope_head_dim + self.indexer_head_dim
        return self.num_kv_heads * (self.head_dim + self.v_head_dim)

    def indexer_params(self, hidden: int) -> int:
        """DeepSeek V3.2's lightning indexer (0 without one): wq_b, wk, k_norm (weight and bias), weights_proj."""
        if not self.indexer_heads:
            return 0
        q_in = self.q_lora_rank or hidden
        d, n = self.indexer_head_dim, self.indexer_heads
        return q_in * n * d + hidden * d + 2 * d + hidden * n


@dataclass(frozen=True, slots=True, kw_only=True)
class LinearMixer:
    """A token mixer whose per-sequence state does not grow with the context: Mamba (``mamba``), Mamba-2
    (``mamba2``) or Gated DeltaNet linear attention (``gated_deltanet``).

    Projections: ``in_proj_size`` outputs from H (plus ``inner_proj_params`` of small inner projections, Mamba's
    x_proj/dt_proj); a depthwise causal convolution over ``conv_channels`` with ``conv_kernel`` taps; per-channel
    or per-head vectors ``vector_params`` (A, D, dt bias, the gated norm); ``out_proj_in`` inputs back to H.
    State per sequence: ``state_elements`` (the recurrent matrix state) + ``conv_channels * (conv_kernel - 1)``
    (the convolution's window). A token's recurrence costs ``state_flops_per_element`` FLOPs per state element.
    """

    kind: str
    in_proj_size: int
    out_proj_in: int
    conv_channels: int
    conv_kernel: int
    conv_bias: bool = False
    inner_proj_params: int = 0
    vector_params: int = 0
    state_elements: int
    state_flops_per_element: int
    heads: int  # the recurrent heads (what TP splits)

    def params(self, hidden: int) -> int:
        conv = self.conv_channels * self.conv_kernel + (self.conv_channels if self.conv_bias else 0)
        return (hidden * self.in_proj_size + self.inner_proj_params + conv + self.vector_params
                + self.out_proj_in * hidden)

    @property
    def state_elements_per_sequence(self) -> int:
        """Recurrent state plus the convolution window, per layer, before TP."""
        return self.state_elements + self.conv_channels * (self.conv_kernel - 1)


@dataclass(frozen=True, slots=True, kw_only=True)
class MoE:
    """Mixture-of-experts MLP: ``top_k`` of ``num_experts`` routed experts per token."""

    num_experts: int
    top_k: int
    expert_intermediate_size: int
    shared_intermediate_size: int = 0
    router_bias: bool = False
    expert_bias: bool = False
    shared_expert_gate: bool = False  # Qwen3-Next: sigmoid(H -> 1) scales the shared expert


MIXERS = ("attention", "linear", "none")


@dataclass(frozen=True, slots=True, kw_only=True)
class LayerGroup:
    """``count`` identical decoder layers.

    ``mixer``: ``attention`` (softmax attention over a KV cache), ``linear`` (the model's :class:`LinearMixer`,
    a constant state per sequence) or ``none`` (Nemotron-H's MLP-only layers). Attention is limited by a sliding
    ``window_tokens`` or, Llama 4's chunked local attention, by ``chunk_tokens``: a query at position c attends
    to the keys of its own chunk, ((c-1) mod C) + 1 of them. ``ffn``: whether the layer has an MLP (dense, or
    MoE when ``moe``); Nemotron-H's attention and Mamba layers have none.
    """

    count: int
    window_tokens: int | None = None
    moe: bool = False
    mixer: str = "attention"
    chunk_tokens: int | None = None
    ffn: bool = True

    def __post_init__(self) -> None:
        if self.mixer not in MIXERS:
            raise ModelInputError("layer_types", f"unknown mixer {self.mixer!r} (known: {', '.join(MIXERS)})")

    @property
    def has_attention(self) -> bool:
        return self.mixer == "attention"


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelArchitecture:
    id: str
    name: str
    family: str = ""
    hidden_size: int
    vocab_size: int
    attention: Attention
    intermediate_size: int
    mlp_gated: bool = True
    mlp_bias: bool = False
    moe: MoE | None = None
    linear: LinearMixer | None = None
    layer_groups: tuple[LayerGroup, ...]
    norms_per_layer: int = 2
    tie_word_embeddings: bool = False
    max_position_embeddings: int | None = None
    published_params: float | None = None
    published_active_params: float | None = None
    default_weights: str | None = None
    default_expert_weights: str | None = None  # e.g. gpt-oss ships MXFP4 experts, bf16 elsewhere
    default_activations: str | None = None  # e.g. DeepSeek-V3 runs fp8 x fp8 GEMMs (W8A8)
    # modules a quantised checkpoint leaves unconverted (config.json quantization_config), e.g. bf16 attention
    default_attention_weights: str | None = None
    default_embedding_weights: str | None = None
    default_lm_head_weights: str | None = None
    source: str = ""

    def __post_init__(self) -> None:
        positive = {
            "hidden_size": self.hidden_size,
            "vocab_size": self.vocab_size,
            "num_attention_heads": self.attention.num_heads,
            "num_key_value_heads": self.attention.num_kv_heads,
            "head_dim": self.attention.head_dim,
            "num_hidden_layers": self.num_layers,
        }
        for name, value in positive.items():
            if not isinstance(value, int) or value <= 0:
                raise ModelInputError(name, f"must be a positive integer, got {value!r}")
        if not self.attention.is_mla and self.attention.num_heads % self.attention.num_kv_heads:
            raise ModelInputError(
                "num_key_value_heads",
                f"{self.attention.num_kv_heads} does not divide num_attention_heads "
                f"{self.attention.num_heads}",
            )
        if self.moe is not None and not 0 < self.moe.top_k <= self.moe.num_experts:
            raise ModelInputError("num_experts_per_tok", "must be between 1 and the number of experts")
        if self.linear is None and any(g.mixer == "linear" for g in self.layer_groups):
            raise ModelInputError("layer_types", "linear layers need the linear mixer's shape")

    @property
    def num_layers(self) -> int:
        return sum(group.count for group in self.layer_groups)

    @property
    def attention_layers(self) -> int:
        return sum(g.count for g in self.layer_groups if g.has_attention)

    @property
    def kv_elements_per_token(self) -> int:
        """KV-cache elements per token over the attention layers (no sliding-window or chunk cap)."""
        return self.attention_layers * self.attention.kv_elements_per_token

    @property
    def state_elements_per_sequence(self) -> int:
        """Constant state per sequence over the linear layers (before TP); 0 without any."""
        if self.linear is None:
            return 0
        return sum(g.count for g in self.layer_groups if g.mixer == "linear") * self.linear.state_elements_per_sequence

    def context_breaks(self, first: int, last: int) -> list[int]:
        """Contexts c in [first, last) after which some op's keys stop being one polynomial in c: a sliding window
        W (min(c, W)), the sparse top-k K (min(c, K)), each multiple of an attention chunk C (keys fall back to 1
        at c = kC + 1). :mod:`context_sums` cuts the decode contexts there."""
        cuts: set[int] = set()
        for g in self.layer_groups:
            if not g.has_attention:
                continue
            if g.window_tokens is not None:
                cuts.add(g.window_tokens)
            if g.chunk_tokens is not None:
                chunk = g.chunk_tokens
                cuts.update(range(max(chunk, (first + chunk - 1) // chunk * chunk), last, chunk))
        if self.attention.sparse_top_k is not None and self.attention_layers:
            cuts.add(self.attention.sparse_top_k)
        return sorted(c for c in cuts if first <= c < last)

    # ---- parameter counts -------------------------------------------------------------
    def attention_params(self) -> int:
        a, hidden = self.attention, self.hidden_size
        if a.is_mla:
            q_dim = a.num_heads * (a.qk_nope_head_dim + a.qk_rope_head_dim)
            q = hidden * q_dim if a.q_lora_rank is None else hidden * a.q_lora_rank + a.q_lora_rank + (
                a.q_lora_rank * q_dim
            )
            kv = hidden * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank
            kv += a.kv_lora_rank * a.num_heads * (a.qk_nope_head_dim + a.v_head_dim)
            return q + kv + a.num_heads * a.v_head_dim * hidden
        q_out = a.num_heads * a.head_dim
        kv_out = a.num_kv_heads * (a.head_dim + a.v_head_dim)
        params = hidden * (q_out + kv_out) + q_out * hidden
        if a.qkv_bias:
            params += q_out + kv_out
        if a.o_bias:
            params += hidden
        if a.qk_norm:
            params += 2 * a.head_dim
        if a.sinks:
            params += a.num_heads
        if a.output_gate:
            params += hidden * q_out
        return params

    def mixer_params(self, group: LayerGroup) -> int:
        """One layer's token mixer: attention (with a sparse-attention indexer), a linear mixer, or nothing."""
        if group.mixer == "attention":
            return self.attention_params() + self.attention.indexer_params(self.hidden_size)
        if group.mixer == "linear":
            assert self.linear is not None
            return self.linear.params(self.hidden_size)
        return 0

    def _mlp_params(self, width: int) -> int:
        matrices = 3 if self.mlp_gated else 2
        params = matrices * self.hidden_size * width
        if self.mlp_bias:
            params += (2 if self.mlp_gated else 1) * width + self.hidden_size
        return params

    def dense_mlp_params(self) -> int:
        return self._mlp_params(self.intermediate_size)

    def expert_params(self) -> int:
        """One routed expert."""
        assert self.moe is not None
        matrices = 3 if self.mlp_gated else 2
        params = matrices * self.hidden_size * self.moe.expert_intermediate_size
        if self.moe.expert_bias:
            params += (2 if self.mlp_gated else 1) * self.moe.expert_intermediate_size + self.hidden_size
        return params

    def routed_expert_params_total(self) -> int:
        """Every routed expert of every MoE layer (stored at the expert weight format)."""
        if self.moe is None:
            return 0
        return sum(g.count for g in self.layer_groups if g.moe and g.ffn) * self.moe.num_experts * self.expert_params()

    def router_params(self) -> int:
        assert self.moe is not None
        gates = self.moe.num_experts + (1 if self.moe.shared_expert_gate else 0)
        return self.hidden_size * gates + (self.moe.num_experts if self.moe.router_bias else 0)

    def shared_expert_params(self) -> int:
        assert self.moe is not None
        if not self.moe.shared_intermediate_size:
            return 0
        return 3 * self.hidden_size * self.moe.shared_intermediate_size

    def _layer_params(self, group: LayerGroup, experts_counted: int | None) -> int:
        params = self.mixer_params(group) + self.norms_per_layer * self.hidden_size
        if not group.ffn:
            return params
        if group.moe and self.moe is not None:
            experts = self.moe.num_experts if experts_counted is None else experts_counted
            params += self.router_params() + experts * self.expert_params() + self.shared_expert_params()
        else:
            params += self.dense_mlp_params()
        return params

    def attention_params_total(self) -> int:
        """Every layer's token mixer (attention, indexer, linear mixer: stored at the attention weight format)."""
        return sum(g.count * self.mixer_params(g) for g in self.layer_groups)

    def embedding_params(self) -> int:
        return self.vocab_size * self.hidden_size

    def lm_head_params(self) -> int:
        """LM head weights; tied heads reuse the embedding (counted once, read twice)."""
        return 0 if self.tie_word_embeddings else self.vocab_size * self.hidden_size

    def _total(self, experts_counted: int | None) -> int:
        layers = sum(g.count * self._layer_params(g, experts_counted) for g in self.layer_groups)
        return layers + self.embedding_params() + self.lm_head_params() + self.hidden_size

    @property
    def params(self) -> int:
        """All parameters, every expert included (what must sit in memory)."""
        return self._total(None)

    @property
    def active_params(self) -> int:
        """Parameters one token uses: k routed experts (plus shared) instead of all E."""
        return self._total(self.moe.top_k if self.moe else None)
