"""Back-solve the efficiency that reproduces a measured decode speed on the user's box (pure).

Given a measured inter-token latency (the mean decode step), find the achievable-bandwidth
fraction f in (0, 1] for which the ``expected`` mean decode step equals it. The step time falls
monotonically as f rises, so bisection finds it. When decode is compute-bound the matmul
fraction is solved instead. Kernel and collective overheads stay at their documented values.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .engines import engine_profile
from .inference import estimate
from .scenario import Scenario

LOWEST_FRACTION = 0.02


@dataclass(frozen=True, slots=True, kw_only=True)
class Calibration:
    parameter: str  # "mem_bw_fraction" or "matmul_fraction"
    value: float | None  # None when no fraction in (0, 1] reproduces the measurement
    measured_step_s: float
    expected_step_s_before: float
    reason: str = ""


def _step_s(scenario: Scenario, parameter: str, fraction: float) -> float:
    hw = scenario.hardware
    if parameter == "mem_bw_fraction":
        hw = replace(hw, achievable_mem_bw_fraction=fraction)
    else:
        dtype = hw.matmul_peak(scenario.precisions.compute_dtype)[0]
        hw = replace(hw, achievable_matmul_fraction={**hw.achievable_matmul_fraction, dtype: fraction})
    return estimate(replace(scenario, hardware=hw), "expected").decode.step_time_s


def calibrate(scenario: Scenario, measured_step_s: float) -> Calibration:
    if not measured_step_s > 0:
        raise ValueError(f"the measured step must be > 0 s, got {measured_step_s!r}")
    before = estimate(scenario, "expected")
    parameter = "matmul_fraction" if before.decode.phase.limited_by == "compute" else "mem_bw_fraction"
    fastest = _step_s(scenario, parameter, 1.0)
    slowest = _step_s(scenario, parameter, LOWEST_FRACTION)
    common = {"parameter": parameter, "measured_step_s": measured_step_s,
              "expected_step_s_before": before.decode.step_time_s}
    bound_step = estimate(scenario, "bound").decode.step_time_s
    profile = engine_profile(scenario.engine)
    if parameter == "matmul_fraction" and profile.matmul_fraction(scenario.hardware) is not None:
        return Calibration(value=None, reason=(
            f"decode is compute-bound here and engine {profile.id} sets its own GEMM share of the peak "
            f"({profile.matmul_fraction(scenario.hardware):.3g}), which a device fraction does not change: "
            "calibrate with --engine generic"), **common)
    if measured_step_s < bound_step:
        return Calibration(value=None, reason=(
            f"the measurement ({measured_step_s * 1e3:.3f} ms) beats the spec-sheet bound ({bound_step * 1e3:.3f} ms):"
            " check that model, precisions, batch and lengths match what was measured"), **common)
    if measured_step_s < fastest:
        return Calibration(value=None, reason=(
            f"the measurement ({measured_step_s * 1e3:.3f} ms) is faster than expected allows even at 100% "
            f"({fastest * 1e3:.3f} ms): the fixed overheads assumed for this box are too high"), **common)
    if measured_step_s > slowest:
        return Calibration(value=None, reason=(
            f"the measurement ({measured_step_s * 1e3:.3f} ms) is slower than expected at {LOWEST_FRACTION:.0%} "
            f"({slowest * 1e3:.3f} ms): something other than {parameter} limits this box"), **common)
    low, high = LOWEST_FRACTION, 1.0
    for _ in range(60):
        mid = (low + high) / 2
        if _step_s(scenario, parameter, mid) > measured_step_s:
            low = mid
        else:
            high = mid
    return Calibration(value=(low + high) / 2, **common)
