"""Hugging Face ``config.json`` dictionaries -> :class:`ModelArchitecture` (pure, offline).

Supported ``model_type`` values and the keys each one reads follow the ``transformers``
configuration classes of the same name: llama, mistral, mixtral, qwen2, qwen3, qwen3_moe,
gemma2, phi3, deepseek_v3, gpt_oss; deepseek_v32 (DeepSeek sparse attention: index_topk, index_n_heads,
index_head_dim), kimi_k2 (the DeepseekV3 architecture), glm4_moe, gemma3/gemma3_text, llama4/llama4_text (their
``text_config``), qwen3_next (layer_types linear_attention/full_attention), nemotron_h (hybrid_override_pattern),
jamba (attn_layer_period/offset, expert_layer_period/offset). Missing or ill-typed keys raise
:class:`ModelInputError` naming the key.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from .architecture import Attention, LayerGroup, LinearMixer, ModelArchitecture, MoE
from .errors import ModelInputError

SUPPORTED_MODEL_TYPES = (
    "llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen3_moe", "gemma2", "phi3", "deepseek_v3", "gpt_oss",
    "deepseek_v32", "kimi_k2", "glm4_moe", "gemma3", "gemma3_text", "llama4", "llama4_text", "qwen3_next",
    "nemotron_h", "jamba",
)
# transformers' per-class default for tie_word_embeddings when the key is absent
_TIED_BY_DEFAULT = {"gemma2", "gemma3_text"}
# multimodal configs whose language model sits in ``text_config`` (the vision tower is not modelled)
_TEXT_CONFIG_TYPES = {"gemma3": "gemma3_text", "llama4": "llama4_text"}
# DeepSeek-V3-shaped MLA + MoE models (Kimi K2 ships the DeepseekV3 architecture under its own model_type)
_DEEPSEEK_TYPES = ("deepseek_v3", "deepseek_v32", "kimi_k2")


# Larger than any real model by orders of magnitude; beyond them a value is a typo, and would make
# per-layer lists or byte counts absurd.
_MAX_LAYERS = 10_000
_MAX_DIMENSION = 100_000_000


def _int(config: Mapping[str, Any], key: str, default: int | None = None) -> int:
    value = config.get(key, default)
    if value is None:
        raise ModelInputError(key, "missing from config")
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ModelInputError(key, f"must be a positive integer, got {value!r}")
    limit = _MAX_LAYERS if key == "num_hidden_layers" else _MAX_DIMENSION
    if value > limit:
        raise ModelInputError(key, f"{value} is not plausible (more than {limit:,})")
    return value


def _count(config: Mapping[str, Any], key: str, default: int = 0) -> int:
    """An optional whole number >= 0 (e.g. first_k_dense_replace, n_shared_experts)."""
    value = config.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ModelInputError(key, f"must be a whole number >= 0, got {value!r}")
    return value


def _flag(config: Mapping[str, Any], key: str, default: bool) -> bool:
    value = config.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ModelInputError(key, f"must be true or false, got {value!r}")
    return value


def _optional_window(config: Mapping[str, Any]) -> int | None:
    window = config.get("sliding_window")
    if window is None:
        return None
    if isinstance(window, bool) or not isinstance(window, int) or window <= 0:
        raise ModelInputError("sliding_window", f"must be a positive integer or null, got {window!r}")
    return window


def _layer_windows(config: Mapping[str, Any], model_type: str, num_layers: int) -> list[int | None]:
    window = _optional_window(config)
    layer_types = config.get("layer_types")
    if model_type == "qwen3_next":  # its layer_types name linear/full attention, not windows
        return [None] * num_layers
    if model_type == "gemma3_text" and layer_types is None and window is not None:
        # older Gemma 3 configs: sliding_window_pattern 6, every 6th layer global (transformers Gemma3TextConfig)
        pattern = _int(config, "sliding_window_pattern", 6)
        return [None if (i + 1) % pattern == 0 else window for i in range(num_layers)]
    if layer_types is not None:
        if not isinstance(layer_types, list) or len(layer_types) != num_layers:
            raise ModelInputError("layer_types", f"must list one type per layer ({num_layers})")
        if window is None and "sliding_attention" in layer_types:
            raise ModelInputError("sliding_window", "layer_types has sliding layers but no window")
        return [window if t == "sliding_attention" else None for t in layer_types]
    if window is None:
        return [None] * num_layers
    if model_type == "gemma2":  # transformers Gemma2: even layers slide, odd layers are global
        return [window if i % 2 == 0 else None for i in range(num_layers)]
    if model_type in ("qwen2", "qwen3", "qwen3_moe"):
        if not _flag(config, "use_sliding_window", False):
            return [None] * num_layers
        first_sliding = _count(config, "max_window_layers")
        return [window if i >= first_sliding else None for i in range(num_layers)]
    return [window] * num_layers


def _moe(config: Mapping[str, Any], model_type: str, num_layers: int) -> tuple[MoE | None, list[bool]]:
    if model_type in ("mixtral", "gpt_oss"):
        experts = _int(config, "num_local_experts")
        top_k = _int(config, "num_experts_per_tok", config.get("experts_per_token"))
        moe = MoE(
            num_experts=experts,
            top_k=top_k,
            expert_intermediate_size=_int(config, "intermediate_size"),
            router_bias=model_type == "gpt_oss",
            expert_bias=model_type == "gpt_oss",
        )
        return moe, [True] * num_layers
    if model_type == "qwen3_moe":
        moe = MoE(
            num_experts=_int(config, "num_experts"),
            top_k=_int(config, "num_experts_per_tok"),
            expert_intermediate_size=_int(config, "moe_intermediate_size"),
        )
        step = _int(config, "decoder_sparse_step", 1)
        dense_only = config.get("mlp_only_layers") or []
        if not isinstance(dense_only, list) or not all(isinstance(i, int) and not isinstance(i, bool)
                                                        for i in dense_only):
            raise ModelInputError("mlp_only_layers", f"must be a list of layer indices, got {dense_only!r}")
        dense_only = set(dense_only)
        return moe, [i not in dense_only and (i + 1) % step == 0 for i in range(num_layers)]
    if model_type == "glm4_moe":
        expert_width = _int(config, "moe_intermediate_size")
        moe = MoE(num_experts=_int(config, "n_routed_experts"), top_k=_int(config, "num_experts_per_tok"),
                  expert_intermediate_size=expert_width,
                  shared_intermediate_size=_count(config, "n_shared_experts") * expert_width, router_bias=True)
        first_dense = _count(config, "first_k_dense_replace")
        return moe, [i >= first_dense for i in range(num_layers)]
    if model_type == "llama4_text":
        moe = MoE(num_experts=_int(config, "num_local_experts"), top_k=_int(config, "num_experts_per_tok"),
                  expert_intermediate_size=_int(config, "intermediate_size"),
                  shared_intermediate_size=_int(config, "intermediate_size"))
        listed = config.get("moe_layers")
        if listed is not None:
            if not isinstance(listed, list):
                raise ModelInputError("moe_layers", "must be a list of layer indices")
            return moe, [i in set(listed) for i in range(num_layers)]
        step = _int(config, "interleave_moe_layer_step", 1)
        return moe, [(i + 1) % step == 0 for i in range(num_layers)]
    if model_type == "qwen3_next":
        shared = _count(config, "shared_expert_intermediate_size")
        moe = MoE(num_experts=_int(config, "num_experts"), top_k=_int(config, "num_experts_per_tok"),
                  expert_intermediate_size=_int(config, "moe_intermediate_size"), shared_intermediate_size=shared,
                  shared_expert_gate=bool(shared))
        step = _int(config, "decoder_sparse_step", 1)
        return moe, [(i + 1) % step == 0 for i in range(num_layers)]
    if model_type == "jamba":
        moe = MoE(num_experts=_int(config, "num_experts"), top_k=_int(config, "num_experts_per_tok"),
                  expert_intermediate_size=_int(config, "intermediate_size"))
        period, offset = _int(config, "expert_layer_period", 2), _count(config, "expert_layer_offset", 1)
        return moe, [i % period == offset for i in range(num_layers)]
    if model_type == "nemotron_h":
        return None, [False] * num_layers
    if model_type in _DEEPSEEK_TYPES:
        expert_width = _int(config, "moe_intermediate_size")
        moe = MoE(
            num_experts=_int(config, "n_routed_experts"),
            top_k=_int(config, "num_experts_per_tok"),
            expert_intermediate_size=expert_width,
            shared_intermediate_size=_count(config, "n_shared_experts") * expert_width,
            router_bias=config.get("topk_method", "noaux_tc") == "noaux_tc",
        )
        first_dense = _count(config, "first_k_dense_replace")
        freq = _int(config, "moe_layer_freq", 1)
        return moe, [i >= first_dense and i % freq == 0 for i in range(num_layers)]
    return None, [False] * num_layers


def _attention(config: Mapping[str, Any], model_type: str, hidden: int) -> Attention:
    heads = _int(config, "num_attention_heads")
    if model_type in _DEEPSEEK_TYPES:
        q_lora = config.get("q_lora_rank")
        sparse = model_type == "deepseek_v32"
        return Attention(
            sparse_top_k=_int(config, "index_topk") if sparse else None,
            indexer_heads=_int(config, "index_n_heads") if sparse else 0,
            indexer_head_dim=_int(config, "index_head_dim") if sparse else 0,
            kind="mla",
            num_heads=heads,
            num_kv_heads=heads,
            head_dim=_int(config, "qk_nope_head_dim") + _int(config, "qk_rope_head_dim"),
            v_head_dim=_int(config, "v_head_dim"),
            q_lora_rank=None if q_lora is None else _int(config, "q_lora_rank"),
            kv_lora_rank=_int(config, "kv_lora_rank"),
            qk_nope_head_dim=_int(config, "qk_nope_head_dim"),
            qk_rope_head_dim=_int(config, "qk_rope_head_dim"),
        )
    if hidden % heads and "head_dim" not in config:
        raise ModelInputError("num_attention_heads", f"{heads} does not divide hidden_size {hidden}")
    head_dim = _int(config, "attention_head_dim" if "attention_head_dim" in config else "head_dim", hidden // heads)
    bias = _flag(config, "attention_bias", False)
    return Attention(
        num_heads=heads,
        num_kv_heads=_int(config, "num_key_value_heads", heads),
        head_dim=head_dim,
        v_head_dim=head_dim,
        qkv_bias=bias or model_type == "qwen2",  # Qwen2 always has q/k/v biases
        o_bias=bias and model_type != "glm4_moe",  # GLM-4.5's attention_bias is q/k/v only
        qk_norm=model_type in ("qwen3", "qwen3_moe", "qwen3_next", "gemma3_text")
        or (model_type == "glm4_moe" and _flag(config, "use_qk_norm", False)),
        sinks=model_type == "gpt_oss",
        output_gate=model_type == "qwen3_next",
    )


def _mixers(config: Mapping[str, Any], model_type: str, num_layers: int) -> tuple[list[str], list[bool]]:
    """Per layer: the token mixer (attention, linear, none) and whether it has an MLP."""
    if model_type == "qwen3_next":
        types = config.get("layer_types")
        if types is None:
            interval = _int(config, "full_attention_interval", 4)
            types = ["full_attention" if (i + 1) % interval == 0 else "linear_attention" for i in range(num_layers)]
        if not isinstance(types, list) or len(types) != num_layers:
            raise ModelInputError("layer_types", f"must list one type per layer ({num_layers})")
        return ["linear" if t == "linear_attention" else "attention" for t in types], [True] * num_layers
    if model_type == "nemotron_h":
        pattern = config.get("hybrid_override_pattern")
        if not isinstance(pattern, str) or len(pattern) != num_layers or set(pattern) - set("M*-"):
            raise ModelInputError("hybrid_override_pattern",
                                  f"must be {num_layers} characters of M (Mamba-2), * (attention), - (MLP)")
        mixer = {"M": "linear", "*": "attention", "-": "none"}
        return [mixer[c] for c in pattern], [c == "-" for c in pattern]
    if model_type == "jamba":
        period, offset = _int(config, "attn_layer_period", 8), _count(config, "attn_layer_offset", 4)
        return ["attention" if i % period == offset else "linear" for i in range(num_layers)], [True] * num_layers
    return ["attention"] * num_layers, [True] * num_layers


def _chunks(config: Mapping[str, Any], model_type: str, num_layers: int) -> list[int | None]:
    """Llama 4: RoPE layers attend within chunks of ``attention_chunk_size``; the NoPE layers (``no_rope_layers``
    0, by default every 4th) attend globally."""
    if model_type != "llama4_text" or config.get("attention_chunk_size") is None:
        return [None] * num_layers
    chunk = _int(config, "attention_chunk_size")
    rope = config.get("no_rope_layers")
    if not rope:
        rope = [int((i + 1) % 4 != 0) for i in range(num_layers)]
    if not isinstance(rope, list) or len(rope) != num_layers:
        raise ModelInputError("no_rope_layers", f"must list one flag per layer ({num_layers})")
    return [chunk if flag else None for flag in rope]


def _linear_mixer(config: Mapping[str, Any], model_type: str, hidden: int) -> LinearMixer | None:
    """The linear mixer's shape (transformers Qwen3NextGatedDeltaNet, NemotronHMamba2Mixer, JambaMambaMixer).

    Gated DeltaNet: q, k over n_k heads of d_k, v and the output gate z over n_v heads of d_v, plus b, a per
    value head; conv over q, k, v; A_log, dt_bias per value head, a d_v-wide gated norm; state n_v*d_k*d_v.
    Per token the delta rule reads S k, writes S + beta (v - S k) k^T after the decay, and reads S q: about
    7 FLOPs per state element.
    Mamba-2: in_proj to z, x (d_in = heads*head_dim), B, C (groups*d_state each) and dt (heads); conv over
    x, B, C; A, D, dt bias per head and a d_in norm; state heads*head_dim*d_state. Per token h = a h + dt x B^T
    then y = h C: about 5 FLOPs per state element.
    Mamba (Jamba): in_proj to x and z (2*d_in), conv over x (with bias), x_proj d_in -> dt_rank + 2*d_state,
    dt_proj dt_rank -> d_in (with bias), A d_in*d_state, D d_in, Jamba's dt/B/C norms; state d_in*d_state;
    5 FLOPs per state element as Mamba-2.
    """
    if model_type == "qwen3_next":
        n_k, n_v = _int(config, "linear_num_key_heads"), _int(config, "linear_num_value_heads")
        d_k, d_v = _int(config, "linear_key_head_dim"), _int(config, "linear_value_head_dim")
        key_dim, value_dim = n_k * d_k, n_v * d_v
        return LinearMixer(kind="gated_deltanet", in_proj_size=2 * key_dim + 2 * value_dim + 2 * n_v,
                           out_proj_in=value_dim, conv_channels=2 * key_dim + value_dim,
                           conv_kernel=_int(config, "linear_conv_kernel_dim", 4), vector_params=2 * n_v + d_v,
                           state_elements=n_v * d_k * d_v, state_flops_per_element=7, heads=n_v)
    if model_type == "nemotron_h":
        heads, head_dim = _int(config, "mamba_num_heads"), _int(config, "mamba_head_dim")
        groups, d_state = _int(config, "n_groups"), _int(config, "ssm_state_size")
        d_in = heads * head_dim
        conv = d_in + 2 * groups * d_state
        return LinearMixer(kind="mamba2", in_proj_size=d_in + conv + heads, out_proj_in=d_in, conv_channels=conv,
                           conv_kernel=_int(config, "conv_kernel", 4), conv_bias=_flag(config, "use_conv_bias", True),
                           vector_params=3 * heads + d_in, state_elements=d_in * d_state, state_flops_per_element=5,
                           heads=heads)
    if model_type == "jamba":
        d_in = _int(config, "mamba_expand", 2) * hidden
        d_state, dt_rank = _int(config, "mamba_d_state", 16), _int(config, "mamba_dt_rank", -(-hidden // 16))
        return LinearMixer(kind="mamba", in_proj_size=2 * d_in, out_proj_in=d_in, conv_channels=d_in,
                           conv_kernel=_int(config, "mamba_d_conv", 4),
                           conv_bias=_flag(config, "mamba_conv_bias", True),
                           inner_proj_params=d_in * (dt_rank + 2 * d_state) + dt_rank * d_in + d_in,
                           vector_params=d_in * d_state + d_in + dt_rank + 2 * d_state,
                           state_elements=d_in * d_state, state_flops_per_element=5, heads=d_in)
    return None


_QUANT_MODULE_WORDS = {
    "attention": ("self_attn", "attention", "attn", "q_proj", "k_proj", "v_proj", "o_proj", "mixer"),
    "embedding": ("embed_tokens", "embed", "wte"),
    "lm_head": ("lm_head", "output_layer"),
}


def _unconverted_modules(entries: Any, key: str) -> set[str]:
    """Which of attention, embedding, lm_head a quantised checkpoint lists as left unconverted (any entry naming
    one: ``model.layers.*.self_attn``, ``re:.*self_attn.*``, ``lm_head``, ``model.embed_tokens``)."""
    if entries is None:
        return set()
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        raise ModelInputError(f"quantization_config.{key}", "must be a list of module names")
    found = set()
    for entry in entries:
        name = entry.lower()
        for module, words in _QUANT_MODULE_WORDS.items():
            if any(word in name for word in words) and not (module == "attention" and "embed" in name):
                found.add(module)
    return found


def _bits_format(spec: Any, key: str) -> str | None:
    """compressed-tensors weights/input_activations: num_bits 8 float -> fp8, 4 float with groups of 16 -> nvfp4,
    of 32 -> fp4 (MXFP4); 8 int -> int8 (weights), 4 int -> int4. None where absent."""
    if spec is None:
        return None
    if not isinstance(spec, Mapping):
        raise ModelInputError(key, "must be a table")
    bits, kind, group = spec.get("num_bits"), spec.get("type", "int"), spec.get("group_size")
    if bits == 8:
        return "fp8" if kind == "float" else "int8"
    if bits == 4:
        if kind == "float":
            return "fp4" if group == 32 else "nvfp4"
        return "int4"
    raise ModelInputError(key, f"num_bits {bits!r} of type {kind!r} is not a format the model knows")


def released_formats(config: Mapping[str, Any]) -> dict[str, str]:
    """The released precisions a ``quantization_config`` states, as ModelArchitecture ``default_*`` fields.

    - ``fp8`` (DeepSeek-V3, Qwen3 FP8; vLLM ``Fp8Config``) and ``fbgemm_fp8``: fp8 weights, fp8 activations
      (dynamic or static scales); ``ignored_layers``/``modules_to_not_convert`` stay at ``torch_dtype``.
    - ``mxfp4`` (gpt-oss): only the MoE experts are MXFP4 (transformers' Mxfp4Config converts the experts).
    - ``compressed-tensors``: the first config group's ``weights`` and ``input_activations`` formats
      (:func:`_bits_format`), ``ignore`` unconverted.
    - ``modelopt`` (NVIDIA TensorRT Model Optimizer): ``quant_algo`` FP8 or NVFP4 (W4A4), ``exclude_modules``.
    A module left unconverted is recorded only where the model-wide format differs from it.
    """
    quant = config.get("quantization_config")
    if quant is None:
        return {}
    if not isinstance(quant, Mapping):
        raise ModelInputError("quantization_config", "must be a JSON object")
    method = quant.get("quant_method")
    unquantised = "fp16" if config.get("torch_dtype") == "float16" else "bf16"
    out: dict[str, str] = {}
    skipped: set[str] = set()
    if method in ("fp8", "fbgemm_fp8"):
        out = {"default_weights": "fp8", "default_activations": "fp8"}
        for key in ("ignored_layers", "modules_to_not_convert"):
            skipped |= _unconverted_modules(quant.get(key), key)
    elif method == "mxfp4":
        return {"default_expert_weights": "fp4"}
    elif method == "compressed-tensors":
        groups = quant.get("config_groups") or {}
        if not isinstance(groups, Mapping):
            raise ModelInputError("quantization_config.config_groups", "must be a JSON object")
        for group in groups.values():
            if not isinstance(group, Mapping):
                raise ModelInputError("quantization_config.config_groups", "each group must be a JSON object")
            weights = _bits_format(group.get("weights"), "quantization_config.weights")
            activations = _bits_format(group.get("input_activations"), "quantization_config.input_activations")
            if weights is not None:
                out["default_weights"] = weights
            if activations in ("fp8", "fp4", "nvfp4"):
                out["default_activations"] = activations
            break
        skipped = _unconverted_modules(quant.get("ignore"), "ignore")
    elif method == "modelopt":
        algo = str(quant.get("quant_algo", "")).upper()
        if algo == "FP8":
            out = {"default_weights": "fp8", "default_activations": "fp8"}
        elif algo == "NVFP4":
            out = {"default_weights": "nvfp4", "default_activations": "nvfp4"}
        skipped = _unconverted_modules(quant.get("exclude_modules"), "exclude_modules")
    if out.get("default_weights", unquantised) != unquantised:
        for module in sorted(skipped):
            out[f"default_{module}_weights"] = unquantised
    return out


def architecture_from_hf_config(
    config: Mapping[str, Any], *, model_id: str, name: str | None = None, **extra: Any
) -> ModelArchitecture:
    """Build an architecture from a parsed config.json; ``extra`` fills metadata fields."""
    if not isinstance(config, Mapping):
        raise ModelInputError("config", "must be a JSON object")
    if config.get("text_config") is not None:
        if config.get("model_type") not in _TEXT_CONFIG_TYPES:
            raise ModelInputError("text_config", "multimodal configs (with a text_config) are not supported "
                                  f"except {', '.join(_TEXT_CONFIG_TYPES)}")
        text = config["text_config"]
        if not isinstance(text, Mapping):
            raise ModelInputError("text_config", "must be a JSON object")
        # the language model; the checkpoint's quantization and tying stay where the top level states them
        outer = {k: config[k] for k in ("quantization_config", "tie_word_embeddings", "torch_dtype") if k in config}
        config = {**text, **outer, "model_type": _TEXT_CONFIG_TYPES[config["model_type"]]}
    model_type = config.get("model_type")
    if model_type is None:
        raise ModelInputError("model_type", "missing from config")
    if model_type not in SUPPORTED_MODEL_TYPES:
        raise ModelInputError(
            "model_type", f"{model_type!r} is not supported (supported: {', '.join(SUPPORTED_MODEL_TYPES)})"
        )
    hidden = _int(config, "hidden_size")
    num_layers = _int(config, "num_hidden_layers")
    model_type = _TEXT_CONFIG_TYPES.get(model_type, model_type)
    windows = _layer_windows(config, model_type, num_layers)
    moe, moe_layers = _moe(config, model_type, num_layers)
    mixers, ffn = _mixers(config, model_type, num_layers)
    chunks = _chunks(config, model_type, num_layers)
    groups = Counter(zip(windows, moe_layers, mixers, chunks, ffn, strict=True))
    layer_groups = tuple(
        LayerGroup(count=count, window_tokens=window, moe=is_moe, mixer=mixer, chunk_tokens=chunk, ffn=has_ffn)
        for (window, is_moe, mixer, chunk, has_ffn), count in sorted(
            groups.items(), key=lambda kv: (kv[0][1], kv[0][0] or 0, kv[0][2], kv[0][3] or 0, kv[0][4]))
    )
    if model_type in _DEEPSEEK_TYPES or model_type in ("glm4_moe", "jamba"):
        dense_width = _int(config, "intermediate_size")
    elif model_type == "llama4_text":
        dense_width = _int(config, "intermediate_size_mlp", config.get("intermediate_size"))
    elif model_type == "qwen3_next":
        dense_width = _int(config, "intermediate_size")
    elif moe is not None and all(moe_layers):
        dense_width = moe.expert_intermediate_size
    else:
        dense_width = _int(config, "intermediate_size")
    tied = _flag(config, "tie_word_embeddings", model_type in _TIED_BY_DEFAULT)
    max_positions = _count(config, "max_position_embeddings") or None
    for key, value in released_formats(config).items():  # a preset's explicit default_* wins
        if extra.get(key) is None:
            extra[key] = value
    return ModelArchitecture(
        id=model_id,
        name=name or model_id,
        family=model_type,
        hidden_size=hidden,
        vocab_size=_int(config, "vocab_size"),
        attention=_attention(config, model_type, hidden),
        intermediate_size=dense_width,
        mlp_gated=model_type != "nemotron_h",  # Nemotron-H: squared-ReLU up/down MLP
        mlp_bias=_flag(config, "mlp_bias", False),
        moe=moe,
        linear=_linear_mixer(config, model_type, hidden),
        layer_groups=layer_groups,
        norms_per_layer=4 if model_type in ("gemma2", "gemma3_text") else 1 if model_type == "nemotron_h" else 2,
        tie_word_embeddings=tied,
        max_position_embeddings=max_positions,
        **extra,
    )
