"""Compute versus memory bandwidth across accelerator generations (pure; presets in, numbers out).

- Metrics: ``fp64`` (vector), ``fp64-matrix`` (tensor/matrix units where they exist, else
  vector), ``fp32`` (vector), ``bf16`` (dense 16-bit tensor peak; for parts without 16-bit
  matrix units, their FP32 peak: the precision ML ran in before Volta), ``fp8``.
- Growth between two devices: compute x = peak_to / peak_from, bandwidth x = bw_to / bw_from.
- Trend: least-squares fit of log(value) against year; growth per 2 years = exp(2 * slope).
- Ridge point: the 16-bit metric / bandwidth (FLOP per byte a kernel needs to be compute-bound).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from .hardware import Hardware

METRICS: dict[str, tuple[str, ...]] = {
    "fp64": ("fp64",),
    "fp64-matrix": ("fp64_tensor", "fp64"),
    "fp32": ("fp32",),
    "bf16": ("bf16", "fp16", "fp32"),
    "fp8": ("fp8",),
}
METRIC_LABELS = {"fp64": "FP64 vector", "fp64-matrix": "FP64 incl. matrix units", "fp32": "FP32 vector",
                 "bf16": "dense 16-bit tensor (FP32 before tensor cores)", "fp8": "dense FP8"}
# The talk's claim checked in ../shared/data/memory-wall-claims.md
CLAIM = {"text": "compute about 80x, bandwidth about 17x (2012 to 2022)", "compute_x": 80.0, "bandwidth_x": 17.0}


def metric_value(hw: Hardware, metric: str) -> tuple[float, str] | None:
    """(peak FLOP/s of the product as sold, the preset key) or None when it has no such peak.

    History compares products as their vendors list them, so dual-die boards count both dies.
    """
    for key in METRICS[metric]:
        value = hw.dense_peak_flops_per_s.get(key)
        if value:
            return value * hw.devices_per_package, key
    return None


def package_bandwidth_bytes_per_s(hw: Hardware) -> float:
    return hw.mem_bw_bytes_per_s * hw.devices_per_package


@dataclass(frozen=True, slots=True, kw_only=True)
class Growth:
    from_id: str
    to_id: str
    metric: str
    compute_x: float
    bandwidth_x: float

    @property
    def ratio(self) -> float:
        """How much faster compute grew than bandwidth."""
        return self.compute_x / self.bandwidth_x


def growth(a: Hardware, b: Hardware, metric: str) -> Growth | None:
    va, vb = metric_value(a, metric), metric_value(b, metric)
    if va is None or vb is None:
        return None
    return Growth(from_id=a.id, to_id=b.id, metric=metric, compute_x=vb[0] / va[0],
                  bandwidth_x=package_bandwidth_bytes_per_s(b) / package_bandwidth_bytes_per_s(a))


@dataclass(frozen=True, slots=True, kw_only=True)
class Trend:
    metric: str
    compute_per_2y: float
    bandwidth_per_2y: float
    first_year: int
    last_year: int
    devices: int

    @property
    def compute_doubling_years(self) -> float:
        return 2 * math.log(2) / math.log(self.compute_per_2y)

    @property
    def bandwidth_doubling_years(self) -> float:
        return 2 * math.log(2) / math.log(self.bandwidth_per_2y)


def _per_2y(years: np.ndarray, values: np.ndarray) -> float:
    slope = np.polyfit(years, np.log(values), 1)[0]
    return float(np.exp(2 * slope))


def trend(devices: Iterable[Hardware], metric: str) -> Trend | None:
    """Log-linear fit over the devices that have the metric (needs two distinct years)."""
    rows = [(hw.year, v[0], package_bandwidth_bytes_per_s(hw)) for hw in devices if (v := metric_value(hw, metric))]
    years = np.array([r[0] for r in rows], dtype=float)
    if len(rows) < 2 or np.unique(years).size < 2:
        return None
    return Trend(
        metric=metric,
        compute_per_2y=_per_2y(years, np.array([r[1] for r in rows])),
        bandwidth_per_2y=_per_2y(years, np.array([r[2] for r in rows])),
        first_year=int(years.min()), last_year=int(years.max()), devices=len(rows),
    )


def ridge_flops_per_byte(hw: Hardware) -> float | None:
    v = metric_value(hw, "bf16")
    return None if v is None else v[0] / package_bandwidth_bytes_per_s(hw)


def closest_pairs_to_claim(devices: Iterable[Hardware], metric: str, *, from_years=(2011, 2013),
                           to_years=(2020, 2022), top: int = 3) -> list[Growth]:
    """Device pairs whose growth comes closest to the claim (log distance on both factors)."""
    devs = list(devices)
    pairs = []
    for a in devs:
        if not from_years[0] <= a.year <= from_years[1]:
            continue
        for b in devs:
            if not to_years[0] <= b.year <= to_years[1]:
                continue
            g = growth(a, b, metric)
            if g is not None:
                distance = abs(math.log(g.compute_x / CLAIM["compute_x"])) + abs(
                    math.log(g.bandwidth_x / CLAIM["bandwidth_x"]))
                pairs.append((distance, g))
    return [g for _, g in sorted(pairs, key=lambda p: p[0])[:top]]


def default_endpoints(devices: Iterable[Hardware]) -> tuple[str | None, str | None]:
    """The first 2012 NVIDIA datacenter part (K20X, else earliest) and the 2022 flagship (H100 SXM)."""
    devs = {hw.id: hw for hw in devices}
    first = "k20x" if "k20x" in devs else None
    last = "h100-sxm" if "h100-sxm" in devs else None
    if first is None:
        nvidia_2012 = sorted((hw for hw in devs.values() if hw.vendor == "NVIDIA" and hw.year == 2012),
                             key=lambda hw: hw.id)
        first = nvidia_2012[0].id if nvidia_2012 else None
    return first, last
