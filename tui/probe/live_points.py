"""A live sample on the roofline: achieved rates from activity ratios and spec ceilings, and a short trail."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from roofline.tui.probe.live_protocol import ActivitySample


@dataclass(frozen=True)
class RooflinePoint:
    """Where the running workload sits on the roofline: achieved rates and their ratio."""

    achieved_bytes_per_s: float
    achieved_flops_per_s: float
    arithmetic_intensity_flop_per_byte: float | None
    timestamp_s: float


def sample_to_point(sample: ActivitySample, *, spec_mem_bw_bytes_per_s: float,
                    spec_peak_flops_per_s: float) -> RooflinePoint:
    """Achieved bytes/s = DRAM activity x spec bandwidth; achieved FLOP/s = tensor activity x spec peak.

    Read the result as an estimate, not a measurement:

    - Both are whole-device averages over the sample interval (about 1 s: dcgmi dmon watches with an update
      period equal to its ``-d`` delay, and DCGM aggregates faster profiling samples to that period, per the
      ``dcgmProfWatchFields_v1.updateFreq`` reference; GPM rates span the two snapshots). A second that mixes
      memory-bound decode kernels with compute-bound prefill kernels shows as one averaged point that lies under
      either kernel's own position; the ratio is the interval's intensity, not any one kernel's.
    - Tensor activity x peak is an upper estimate of tensor-core FLOP/s: the pipe counts as active in a cycle even
      when it issues below its peak rate (a slower dtype than the peak you pass, partial occupancy). FLOPs done
      outside the tensor cores (softmax, norms, elementwise work on the CUDA cores) are not counted at all.
    - DRAM activity counts every HBM transfer, reads and writes, whatever kernel or copy caused it.

    Pass the dense peak for the dtype the workload computes in (for example H100 SXM bf16, 989.4e12 FLOP/s).
    The intensity is None when no bytes moved (idle GPU, or an all-compute interval).
    """
    achieved_bytes_per_s = sample.dram_active * spec_mem_bw_bytes_per_s
    achieved_flops_per_s = sample.tensor_active * spec_peak_flops_per_s
    intensity = achieved_flops_per_s / achieved_bytes_per_s if achieved_bytes_per_s > 0 else None
    return RooflinePoint(achieved_bytes_per_s=achieved_bytes_per_s, achieved_flops_per_s=achieved_flops_per_s,
                         arithmetic_intensity_flop_per_byte=intensity, timestamp_s=sample.timestamp_s)


class Trail:
    """The last ``max_points`` roofline points, oldest first: the moving point and its short tail."""

    def __init__(self, max_points: int = 10) -> None:
        if max_points < 1:
            raise ValueError(f"a trail needs at least one point, got max_points={max_points}")
        self._points: deque[RooflinePoint] = deque(maxlen=max_points)

    @property
    def max_points(self) -> int:
        return self._points.maxlen or 0

    def add(self, point: RooflinePoint) -> None:
        self._points.append(point)

    def clear(self) -> None:
        self._points.clear()

    @property
    def points(self) -> tuple[RooflinePoint, ...]:
        return tuple(self._points)

    @property
    def latest(self) -> RooflinePoint | None:
        return self._points[-1] if self._points else None

    def __len__(self) -> int:
        return len(self._points)

    def __iter__(self) -> Iterator[RooflinePoint]:
        return iter(tuple(self._points))
