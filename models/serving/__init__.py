"""Serving: continuous-batching engines in steady state (the frontier, targets, rates), one module a job.

- :mod:`.inputs`: the request mix, engine options and speculative decoding;
- :mod:`.step`: the ops of one mixed step (decodes plus prefill chunks);
- :mod:`.memory`: paged KV blocks under the engine's memory fraction;
- :mod:`.frontier`: the latency-throughput frontier (closed-loop and Poisson arrivals), targets, arrival rates and
  device counts;
- :mod:`.band`: the spread of a serving figure over stacks, ceilings and arrival patterns.

The names below are the package's public API; import them from ``roofline.models.serving``.
"""

from .frontier import (
    MAX_FRONTIER_POINTS,
    RATE_GRID_POINTS,
    SECONDS_PER_HOUR,
    DevicePlan,
    Frontier,
    FrontierPoint,
    TargetResult,
    at_rate,
    burst_ttft_s,
    decode_slots,
    default_concurrencies,
    devices_for_rate,
    frontier,
    max_concurrency_for_targets,
    request_overhead_s,
    step_time_s,
)
from .inputs import ARRIVAL_MODELS, ServingMix, ServingOptions, Speculation, draft_scenario, mtp_architecture
from .memory import KvCachePlan, kv_cache_plan
from .step import mixed_step_ops

__all__ = [
    "ARRIVAL_MODELS", "MAX_FRONTIER_POINTS", "RATE_GRID_POINTS", "SECONDS_PER_HOUR", "DevicePlan", "Frontier",
    "FrontierPoint", "KvCachePlan", "ServingMix", "ServingOptions", "Speculation", "TargetResult", "at_rate",
    "burst_ttft_s", "decode_slots", "default_concurrencies", "devices_for_rate", "draft_scenario", "frontier",
    "kv_cache_plan", "max_concurrency_for_targets", "mixed_step_ops", "mtp_architecture", "request_overhead_s",
    "step_time_s",
]
