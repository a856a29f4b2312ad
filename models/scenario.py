"""A complete inference scenario: hardware x model x precisions x batching x parallelism."""

from __future__ import annotations

from dataclasses import dataclass, field

from .architecture import ModelArchitecture
from .dtypes import (
    GGUF_INTEGER_FORMATS,
    activation_bytes_per_element,
    kv_bytes_per_element,
    matmul_compute_dtype,
    weight_bytes_per_param,
)
from .engines import DEFAULT_ENGINE, engine_profile
from .errors import ModelInputError
from .hardware import Hardware
from .topology import TOPOLOGIES


@dataclass(frozen=True, slots=True, kw_only=True)
class Precisions:
    """Storage formats of weights, activations and the KV cache (see :mod:`.dtypes`)."""

    weights: str = "bf16"
    activations: str = "bf16"
    kv: str = "bf16"
    expert_weights: str | None = None  # routed MoE experts; None: same as ``weights``

    def __post_init__(self) -> None:
        weight_bytes_per_param(self.weights)
        if self.expert_weights is not None:
            weight_bytes_per_param(self.expert_weights)
        activation_bytes_per_element(self.activations)
        kv_bytes_per_element(self.kv)

    @property
    def compute_dtype(self) -> str:
        return matmul_compute_dtype(self.weights, self.activations)

    @property
    def expert_weights_or_weights(self) -> str:
        return self.expert_weights or self.weights

    @property
    def gguf_weight_formats(self) -> set[str]:
        """The GGUF integer formats among the weights (experts included): their GEMMs may run at the int8 peak."""
        return {self.weights, self.expert_weights_or_weights} & GGUF_INTEGER_FORMATS


def released_precisions(model: ModelArchitecture, *, weights: str | None = None, activations: str | None = None,
                        kv: str = "bf16", expert_weights: str | None = None) -> Precisions:
    """Precisions with the model's released formats filling what the user left open.

    gpt-oss ships MXFP4 experts and bf16 everything else; DeepSeek-V3 ships fp8 weights and
    runs fp8 x fp8 GEMMs. An explicit ``weights`` applies to the experts too unless
    ``expert_weights`` says otherwise.
    """
    if expert_weights is None and weights is None:
        expert_weights = model.default_expert_weights
    return Precisions(
        weights=weights or model.default_weights or "bf16",
        activations=activations or model.default_activations or "bf16",
        kv=kv,
        expert_weights=expert_weights,
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
