"""The band of a serving figure: its spread over the stacks, ceilings and arrival patterns a measurement may have had.

``expected`` is one engine, one pair of measured fractions and one arrival model; a published serving run is one
engine build on one box under one load generator. The band recomputes a figure under:

- every band scenario of :func:`roofline.models.band.band_scenarios` (the engine profiles for the device's vendor,
  each with its own kernel costs and fixed per-request path, crossed with the ends of the measured bandwidth and
  GEMM fractions);
- every arrival pattern the run's description admits. A run at a concurrency (``--max-concurrency``) is a closed
  loop whose requests restart in groups when lengths are near-fixed (``closed``), but drift apart into spread
  arrivals when lengths vary (ShareGPT prompts, outputs that stop at EOS: ``poisson`` at the same mean
  concurrency); its first cycle is one burst of all C prompts into an idle engine (:func:`frontier.burst_ttft_s`),
  which is the whole run when it sends as many prompts as its concurrency (``--num-prompts`` = C, or
  ``--request-rate inf`` bursts). A run at a rate is Poisson by construction (``vllm bench serve --request-rate``
  draws exponential gaps), so only the stacks spread it.

``low`` and ``high`` are the smallest and largest finite value over those cases (points that do not fit are left
out). The case ``expected`` itself uses is among them, so the band always contains it.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..band import band_scenarios
from ..scenario import Scenario
from .frontier import at_rate, burst_ttft_s, frontier
from .inputs import ServingMix, ServingOptions

SERVING_BAND_METRICS = ("ttft_s", "itl_s", "output_tokens_per_s_per_device")


def _figures(scenario: Scenario, mix: ServingMix, concurrency: int, rate_per_s: float | None,
             options: ServingOptions) -> list[dict[str, float]]:
    """The figures of one band scenario under each admissible arrival pattern (those that fit)."""
    if rate_per_s is not None:
        points = [at_rate(scenario, mix, rate_per_s, "expected", replace(options, arrivals="poisson"))]
    else:
        points = [frontier(scenario, mix, [concurrency], "expected", replace(options, arrivals=arrivals)).points[0]
                  for arrivals in ("closed", "poisson")]
    out = [{"ttft_s": p.ttft_s, "itl_s": p.itl_s, "output_tokens_per_s_per_device": p.tokens_per_s_per_device}
           for p in points if p.fits]
    if rate_per_s is None and out:
        out.append({"ttft_s": burst_ttft_s(scenario, mix, float(concurrency), "expected", options)})
    return out


def serving_band(scenario: Scenario, mix: ServingMix, metric: str, concurrency: int, rate_per_s: float | None = None,
                 options: ServingOptions | None = None) -> tuple[float, float] | None:
    """(low, high) of ``metric`` (one of :data:`SERVING_BAND_METRICS`) over the band scenarios and the arrival
    patterns (module docstring); None when no case fits."""
    if metric not in SERVING_BAND_METRICS:
        raise ValueError(f"unknown serving metric {metric!r} (known: {', '.join(SERVING_BAND_METRICS)})")
    options = options or ServingOptions()
    values = [f[metric] for s in band_scenarios(scenario) for f in _figures(s, mix, concurrency, rate_per_s, options)
              if metric in f and math.isfinite(f[metric])]
    return (min(values), max(values)) if values else None
