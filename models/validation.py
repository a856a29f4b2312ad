"""Predictions for published measurements, and how far off they are (pure: rows in, numbers out).

Metric -> prediction (``measured-dev.md``, "Metric vocabulary"):
- ``decode_tokens_per_s_per_seq``: G / (prefill + sum of decode steps), one sequence's view of
  a whole generation (gpt-fast's tok/s includes its tiny prefill);
- ``prefill_tokens_per_s``: B*P / prefill time;
- ``ttft_ms``: prefill time (its LM head yields the first token);
- ``itl_ms``: the mean decode step over the generation;
- ``output_tokens_per_s``: B*G / (prefill + sum of decode steps), static batch, all devices;
- ``output_tokens_per_s_per_gpu``: the same / (tp * pp);
- ``e2e_s``: prefill + sum of decode steps.
The bound holds when it is at least as fast as the measurement (rates >=, times <=).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .inference import Estimate, estimate
from .scenario import Scenario

RATE_METRICS = ("decode_tokens_per_s_per_seq", "prefill_tokens_per_s", "output_tokens_per_s",
                "output_tokens_per_s_per_gpu")
TIME_METRICS = ("ttft_ms", "itl_ms", "e2e_s")
METRICS = RATE_METRICS + TIME_METRICS


def predict(scenario: Scenario, e: Estimate, metric: str) -> float:
    b = scenario.batching
    if metric == "decode_tokens_per_s_per_seq":
        return b.output_tokens / e.generation_time_s
    if metric == "prefill_tokens_per_s":
        return b.batch_size * b.prompt_tokens / e.prefill.time_s
    if metric == "ttft_ms":
        return e.ttft_s * 1e3
    if metric == "itl_ms":
        return e.decode.step_time_s * 1e3
    if metric == "output_tokens_per_s":
        return e.output_tokens_per_s
    if metric == "output_tokens_per_s_per_gpu":
        return e.output_tokens_per_s / scenario.parallelism.devices
    if metric == "e2e_s":
        return e.generation_time_s
    raise ValueError(f"unknown metric {metric!r} (known: {', '.join(METRICS)})")


@dataclass(frozen=True, slots=True, kw_only=True)
class RowResult:
    id: str
    metric: str
    measured: float
    expected: float
    bound: float

    @property
    def expected_error(self) -> float:
        """Signed relative error of ``expected``: (predicted - measured) / measured."""
        return (self.expected - self.measured) / self.measured

    @property
    def bound_held(self) -> bool:
        if self.metric in RATE_METRICS:
            return self.bound >= self.measured
        return self.bound <= self.measured


def evaluate(row_id: str, scenario: Scenario, metric: str, measured: float) -> RowResult:
    return RowResult(id=row_id, metric=metric, measured=measured,
                     expected=predict(scenario, estimate(scenario, "expected"), metric),
                     bound=predict(scenario, estimate(scenario, "bound"), metric))


@dataclass(frozen=True, slots=True, kw_only=True)
class Summary:
    rows: int
    median_abs_error: float
    p80_abs_error: float
    bound_held_share: float

    def as_dict(self) -> dict:
        return {"rows": self.rows, "median_abs_error": self.median_abs_error, "p80_abs_error": self.p80_abs_error,
                "bound_held_share": self.bound_held_share}


def summarize(results: list[RowResult]) -> Summary:
    errors = np.abs([r.expected_error for r in results])
    return Summary(rows=len(results), median_abs_error=float(np.median(errors)),
                   p80_abs_error=float(np.percentile(errors, 80)),
                   bound_held_share=float(np.mean([r.bound_held for r in results])))
