"""A complete inference scenario: hardware x model x precisions x batching x parallelism."""

from __future__ import annotations

from dataclasses import dataclass, field

from .architecture import ModelArchitecture
from .dtypes import (
    GGUF_INTEGER_FORMATS,
    activation_bytes_per_element,
    kv_bytes_per_element,
    matmul_compute_dtype,
    module_activations,
    weight_bytes_per_param,
)
from .engines import DEFAULT_ENGINE, engine_profile
from .errors import ModelInputError
from .hardware import Hardware
from .topology import TOPOLOGIES

MODULES = ("mlp", "experts", "attention", "embedding", "lm_head")


@dataclass(frozen=True, slots=True, kw_only=True)
class ModulePrecision:
    """One module's weight format, GEMM input format and the dtype its GEMMs compute in."""

    weights: str
    activations: str
    compute_dtype: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Precisions:
    """Storage formats of weights, activations and the KV cache (see :mod:`.dtypes`), per module where set.

    ``weights`` is every weight no other field names (the dense MLP, norms, routers, and every module below left
    None). Per module: ``expert_weights`` (routed MoE experts), ``attention_weights`` (the token mixer's
    projections: q/k/v/o, MLA's, linear-attention and Mamba in/out projections), ``embedding_weights`` and
    ``lm_head_weights`` (a tied head is one matrix: the LM head's format if set, else the embedding's). A module
    kept at 16/32 bits while ``activations`` is fp8 or fp4 runs its GEMMs unquantised, with 16-bit inputs
    (:func:`dtypes.module_activations`): what fp8 checkpoints that list ``self_attn`` or ``lm_head`` in
    ``ignored_layers``/``modules_to_not_convert`` do. ``attention_math`` is the dtype of the attention kernel's
    QK^T and PV products (e.g. bf16 over an fp8 KV cache, dequantised in the kernel); None: the attention
    module's compute dtype, as before per-module precision. With the per-module fields None every number is the
    same as with ``weights``/``activations`` alone.
    """

    weights: str = "bf16"
    activations: str = "bf16"
    kv: str = "bf16"
    expert_weights: str | None = None  # routed MoE experts; None: same as ``weights``
    attention_weights: str | None = None
    embedding_weights: str | None = None
    lm_head_weights: str | None = None
    attention_math: str | None = None

    def __post_init__(self) -> None:
        weight_bytes_per_param(self.weights)
        for name in ("expert_weights", "attention_weights", "embedding_weights", "lm_head_weights"):
            value = getattr(self, name)
            if value is not None:
                try:
                    weight_bytes_per_param(value)
                except ModelInputError as err:
                    raise ModelInputError(name, err.message) from None
        activation_bytes_per_element(self.activations)
        if self.attention_math is not None:
            try:
                activation_bytes_per_element(self.attention_math)
            except ModelInputError as err:
                raise ModelInputError("attention_math", err.message) from None
        kv_bytes_per_element(self.kv)

    @property
    def compute_dtype(self) -> str:
        return matmul_compute_dtype(self.weights, self.activations)

    @property
    def expert_weights_or_weights(self) -> str:
        return self.expert_weights or self.weights

    def module_weights(self, module: str) -> str:
        """The weight format of ``module`` (one of :data:`MODULES`)."""
        if module == "experts":
            return self.expert_weights_or_weights
        if module == "attention":
            return self.attention_weights or self.weights
        if module in ("embedding", "lm_head"):
            return self.lm_head_weights or self.embedding_weights or self.weights
        if module == "mlp":
            return self.weights
        raise ValueError(f"unknown module {module!r}")

    def module(self, module: str, *, tied: bool = False) -> ModulePrecision:
        """Weights, GEMM inputs and compute dtype of ``module``; an untied embedding and LM head each have
        their own field (``tied``: one matrix, see the class docstring)."""
        if module == "embedding" and not tied:
            weights = self.embedding_weights or self.weights
        elif module == "lm_head" and not tied:
            weights = self.lm_head_weights or self.weights
        else:
            weights = self.module_weights(module)
        own = {"attention": self.attention_weights, "embedding": self.embedding_weights,
               "lm_head": self.lm_head_weights}.get(module)
        if module == "lm_head" and tied:
            own = self.lm_head_weights or self.embedding_weights
        # a module with no format of its own follows the model-wide activations (today's numbers)
        activations = self.activations if own is None else module_activations(weights, self.activations)
        return ModulePrecision(weights=weights, activations=activations,
                               compute_dtype=matmul_compute_dtype(weights, activations))

    @property
    def attention_compute_dtype(self) -> str:
        """The dtype the attention kernel (scores, weighted sum) computes in."""
        return self.attention_math or self.module("attention").compute_dtype

    @property
    def weight_formats(self) -> tuple[str, ...]:
        """Every weight format in use, the model-wide one first."""
        return tuple(dict.fromkeys((self.weights, self.expert_weights_or_weights, self.module_weights("attention"),
                                    self.embedding_weights or self.weights, self.lm_head_weights or self.weights)))

    @property
    def gguf_weight_formats(self) -> set[str]:
        """The GGUF integer formats among the weights (every module): their GEMMs may run at the int8 peak."""
        return set(self.weight_formats) & GGUF_INTEGER_FORMATS


def released_precisions(model: ModelArchitecture, *, weights: str | None = None, activations: str | None = None,
                        kv: str = "bf16", expert_weights: str | None = None) -> Precisions:
    """Precisions with the model's released formats filling what the user left open.

    gpt-oss ships MXFP4 experts and bf16 everything else; DeepSeek-V3 ships fp8 weights and
    runs fp8 x fp8 GEMMs. An explicit ``weights`` applies to the experts too unless
    ``expert_weights`` says otherwise. The modules a checkpoint leaves unconverted (its config's
    ``quantization_config``: attention, embedding, LM head) keep their released formats only with the released
    weights: an explicit ``weights`` applies to them too.
    """
    released = weights is None
    if expert_weights is None and released:
        expert_weights = model.default_expert_weights
    return Precisions(
        weights=weights or model.default_weights or "bf16",
        activations=activations or model.default_activations or "bf16",
        kv=kv,
        expert_weights=expert_weights,
        attention_weights=model.default_attention_weights if released else None,
        embedding_weights=model.default_embedding_weights if released else None,
        lm_head_weights=model.default_lm_head_weights if released else None,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Batching:
    """``batch_size`` sequences, each with a ``prompt_tokens`` prompt and ``output_tokens`` generated.

    ``kv_compression_ratio`` divides KV-cache bytes (stored and streamed) beyond what the KV
    dtype already saves, e.g. 2.0 for a scheme that keeps half the entries.
    """

    batch_size: int = 1
    prompt_tokens: int = 1024
    output_tokens: int = 256
    flash_attention: bool = True
    kv_compression_ratio: float = 1.0

    def __post_init__(self) -> None:
        for name in ("batch_size", "prompt_tokens", "output_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ModelInputError(name, f"must be a whole number >= 1, got {value!r}")
        if not self.kv_compression_ratio >= 1.0:
            raise ModelInputError("kv_compression_ratio", f"must be >= 1, got {self.kv_compression_ratio!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Parallelism:
    """Tensor parallel degree ``tp`` x pipeline stages ``pp`` (devices = tp * pp)."""

    tp: int = 1
    pp: int = 1

    def __post_init__(self) -> None:
        for name in ("tp", "pp"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ModelInputError(name, f"must be a whole number >= 1, got {value!r}")

    @property
    def devices(self) -> int:
        return self.tp * self.pp


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    hardware: Hardware
    model: ModelArchitecture
    precisions: Precisions = field(default_factory=Precisions)
    batching: Batching = field(default_factory=Batching)
    parallelism: Parallelism = field(default_factory=Parallelism)
    # the serving stack (engines.ENGINES); the default reproduces the estimate before engine profiles
    engine: str = DEFAULT_ENGINE
    # how the TP group's devices are linked (topology.TOPOLOGIES); None: derived from the hardware preset
    topology: str | None = None

    def __post_init__(self) -> None:
        engine_profile(self.engine)
        if self.topology is not None and self.topology not in TOPOLOGIES:
            raise ModelInputError("topology", f"unknown topology {self.topology!r} (known: {', '.join(TOPOLOGIES)})")
        tp, pp = self.parallelism.tp, self.parallelism.pp
        heads = self.model.attention.num_heads
        if heads % tp:
            raise ModelInputError("tp", f"{tp} does not divide the model's {heads} attention heads")
        if pp > self.model.num_layers:
            raise ModelInputError("pp", f"{pp} stages for {self.model.num_layers} layers")
        if self.parallelism.devices > 1 and self.hardware.interconnect_bw_bytes_per_s <= 0:
            raise ModelInputError("tp", f"{self.hardware.id} has no device interconnect; use one device")
        self.hardware.matmul_peak(self.precisions.compute_dtype)
        for module in MODULES:
            self.hardware.matmul_peak(self.precisions.module(module).compute_dtype)
        self.hardware.matmul_peak(self.precisions.attention_compute_dtype)
