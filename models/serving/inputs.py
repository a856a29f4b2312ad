"""Inputs of the serving model (see :mod:`.serving`): the request mix, speculation and engine options."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..architecture import LayerGroup, ModelArchitecture
from ..errors import ModelInputError
from ..scenario import Scenario

# vLLM's scheduler defaults (vllm/engine/arg_utils.py, EngineArgs.get_batch_defaults): on devices with >= 70 GiB
# other than A100 (H100, H200, MI300X) the OpenAI server ships max_num_batched_tokens = 8192 and max_num_seqs = 1024;
# elsewhere 2048 and 256. Chunked prefill is on by default in vLLM V1.
DEFAULT_MAX_NUM_BATCHED_TOKENS = 8192
# vLLM CacheConfig.block_size default (16 tokens per KV block on CUDA).
DEFAULT_BLOCK_SIZE_TOKENS = 16
# vLLM CacheConfig.gpu_memory_utilization default: the share of device memory the engine may use.
DEFAULT_GPU_MEMORY_UTILIZATION = 0.9
# The sampler rows vLLM's memory profiling run allocates logits for (its max_num_seqs default outside large GPUs).
PROFILE_LOGIT_ROWS = 256
# How requests arrive (see :mod:`.frontier`): ``closed``, a fixed number in flight that restart in groups
# (``vllm bench serve --max-concurrency``, SGLang's bench_serving, genai-perf sweeps); ``poisson``, an open loop at a
# rate (``--request-rate``), M/D/1 queueing for prefill.
ARRIVAL_MODELS = ("closed", "poisson")


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingMix:
    """The requests: mean prompt and mean output tokens (the model uses mean values only), and an optional shared
    prefix of ``prefix_tokens`` cached with hit rate ``prefix_hit_rate`` (prefix caching)."""

    prompt_tokens: float
    output_tokens: float
    prefix_tokens: float = 0.0
    prefix_hit_rate: float = 0.0

    def __post_init__(self) -> None:
        if not (self.prompt_tokens >= 1 and math.isfinite(self.prompt_tokens)):
            raise ModelInputError("prompt_tokens", f"must be >= 1, got {self.prompt_tokens!r}")
        if not (self.output_tokens >= 1 and math.isfinite(self.output_tokens)):
            raise ModelInputError("output_tokens", f"must be >= 1, got {self.output_tokens!r}")
        if not 0 <= self.prefix_tokens <= self.prompt_tokens:
            raise ModelInputError("prefix_tokens", f"must be within 0..prompt tokens, got {self.prefix_tokens!r}")
        if not 0.0 <= self.prefix_hit_rate <= 1.0:
            raise ModelInputError("prefix_hit_rate", f"must be within 0..1, got {self.prefix_hit_rate!r}")

    @property
    def cached_prompt_tokens(self) -> float:
        """h*S: prompt tokens per request served from the prefix cache, in expectation."""
        return self.prefix_hit_rate * self.prefix_tokens

    @property
    def computed_prompt_tokens(self) -> float:
        """P - h*S, at least 1 (the last prompt position is always computed: it yields the first token)."""
        return max(self.prompt_tokens - self.cached_prompt_tokens, 1.0)

    @property
    def mean_context_tokens(self) -> float:
        """P + G/2: in steady state the running requests' contexts spread uniformly over P..P+G."""
        return self.prompt_tokens + self.output_tokens / 2.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Speculation:
    """Speculative decoding: ``tokens`` k drafted per step, each accepted with probability ``acceptance`` a.

    ``draft`` is the draft model's architecture (any model preset); None means MTP: one extra decoder layer of the
    target (its embedding and LM head shared), as DeepSeek-V3's multi-token prediction module.
    """

    tokens: int
    acceptance: float
    draft: ModelArchitecture | None = None

    def __post_init__(self) -> None:
        if isinstance(self.tokens, bool) or not isinstance(self.tokens, int) or self.tokens < 1:
            raise ModelInputError("spec_tokens", f"must be a whole number >= 1, got {self.tokens!r}")
        if not 0.0 <= self.acceptance <= 1.0:
            raise ModelInputError("accept", f"must be within 0..1, got {self.acceptance!r}")

    @property
    def tokens_per_step(self) -> float:
        """Expected tokens a verification step yields: (1 - a^(k+1)) / (1 - a) (Leviathan et al. 2023, eq. 1,
        arXiv:2211.17192); k + 1 at a = 1."""
        a, k = self.acceptance, self.tokens
        return float(k + 1) if a >= 1.0 else (1.0 - a ** (k + 1)) / (1.0 - a)


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingOptions:
    """Engine settings and per-device overrides; the defaults are vLLM's (sources beside the constants)."""

    max_num_batched_tokens: int = DEFAULT_MAX_NUM_BATCHED_TOKENS
    block_size_tokens: int = DEFAULT_BLOCK_SIZE_TOKENS
    gpu_memory_utilization: float = DEFAULT_GPU_MEMORY_UTILIZATION
    max_num_seqs: int | None = None  # a cap on running requests; None: the memory limit alone
    speculation: Speculation | None = None
    power_w: float | None = None  # measured board power per device; None: the preset's tdp_w (a ceiling)
    price_usd_per_hour: float | None = None  # per device; None: the preset's price, where it has one
    arrivals: str = "closed"  # how a frontier point's requests arrive (ARRIVAL_MODELS); a rate is always poisson
    # the fixed path of one request (HTTP, tokenising, scheduling, detokenising); None: the engine profile's
    # (engines.Engine.request_overhead_s) under expected, 0 under bound
    request_overhead_s: float | None = None

    def __post_init__(self) -> None:
        for name in ("max_num_batched_tokens", "block_size_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ModelInputError(name, f"must be a whole number >= 1, got {value!r}")
        if not 0.0 < self.gpu_memory_utilization <= 1.0:
            raise ModelInputError("gpu_memory_utilization", f"must be in (0, 1], got {self.gpu_memory_utilization!r}")
        if self.arrivals not in ARRIVAL_MODELS:
            raise ModelInputError("arrivals", f"must be one of {', '.join(ARRIVAL_MODELS)}, got {self.arrivals!r}")
        for name in ("power_w", "price_usd_per_hour", "request_overhead_s"):
            value = getattr(self, name)
            if value is not None and not (value >= 0 and math.isfinite(value)):
                raise ModelInputError(name, f"must be a finite number >= 0, got {value!r}")


def mtp_architecture(model: ModelArchitecture) -> ModelArchitecture:
    """The MTP draft: one decoder layer shaped like the target's last layer (MoE where that one is)."""
    last = model.layer_groups[-1]
    return replace(model, id=f"{model.id}-mtp", name=f"{model.name} MTP layer",
                   layer_groups=(LayerGroup(count=1, window_tokens=None, moe=last.moe),))


def draft_scenario(scenario: Scenario, speculation: Speculation) -> Scenario:
    """The draft runs on the same devices with the same TP (pp 1) and precisions."""
    draft = speculation.draft or mtp_architecture(scenario.model)
    return replace(scenario, model=draft, parallelism=replace(scenario.parallelism, pp=1))
