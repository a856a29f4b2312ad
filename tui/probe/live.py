"""Live activity counters: place the running workload on the roofline as a moving point.

Two sources, tried in order (see :func:`open_live_source`):

- **DCGM**: ``dcgmi dmon -e 1005,1004 -d 1000 -i <gpu>`` streams, once a second, the profiling fields
  ``DCGM_FI_PROF_DRAM_ACTIVE`` (1005, "ratio of cycles the device memory interface is active sending or receiving
  data") and ``DCGM_FI_PROF_PIPE_TENSOR_ACTIVE`` (1004, "ratio of cycles the [any] tensor pipe is active"), both
  ratios 0..1 (NVIDIA/DCGM ``dcgmlib/dcgm_fields.h``). The table layout (``#Entity`` header, ``ID`` units line,
  ``GPU 0  0.523  0.112`` rows, ``N/A`` for blank values, the header reprinted every 14 samples) is that of
  NVIDIA/DCGM ``dcgmi/DeviceMonitor.cpp``; DCGM 2.x printed ``# Entity`` / ``Id`` instead.
- **NVML GPM** (Hopper or newer, nvidia-ml-py): ``NVML_GPM_METRIC_DRAM_BW_UTIL`` (10, "percentage of DRAM bw used
  vs theoretical maximum") and ``NVML_GPM_METRIC_ANY_TENSOR_UTIL`` (5, "percentage of time the GPU's SMs were doing
  ANY tensor operations"), computed by ``nvmlGpmMetricsGet`` from two ``nvmlGpmSampleGet`` snapshots (NVML API
  reference, GPM functions; nvidia-ml-py ``pynvml.py``).

Each source yields :class:`ActivitySample`; :func:`sample_to_point` turns one into a :class:`RooflinePoint` with the
device's spec ceilings, and :class:`Trail` keeps the last few points for drawing.

Reads block, so run them in a Textual thread worker and post the results to the UI::

    @work(thread=True, exclusive=True, group="live")
    def sample_live(self) -> None:
        worker = get_current_worker()
        opened = open_live_source(0)              # blocks up to a few seconds while dcgmi starts
        if isinstance(opened, Unavailable):
            self.call_from_thread(self.show_live_unavailable, opened.reason)
            return
        with opened as source:
            while not worker.is_cancelled:
                sample = source.read(timeout_s=0.5)
                if sample is not None:
                    self.call_from_thread(self.add_live_sample, sample)
                elif source.failure is not None:
                    self.call_from_thread(self.show_live_unavailable, source.failure)
                    return

Modules: :mod:`~roofline.tui.probe.live_protocol` (the sample and the source protocol),
:mod:`~roofline.tui.probe.live_points` (sample -> roofline point, the trail), :mod:`~roofline.tui.probe.live_dcgmi`
and :mod:`~roofline.tui.probe.live_nvml` (the two sources); this module chooses one. Their public names are
importable from here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from roofline.tui.probe.live_dcgmi import (
    DCGM_FIELD_DRAM_ACTIVE,
    DCGM_FIELD_IDS,
    DCGM_FIELD_TENSOR_ACTIVE,
    DCGM_SHORT_NAMES,
    DcgmiSource,
    DmonError,
    DmonRow,
    DmonStreamParser,
    dcgmi_command,
    explain_dcgmi_error,
)
from roofline.tui.probe.live_nvml import NVML_NO_GPM_REASON, NVML_NOT_INSTALLED_REASON, NvmlGpmSource
from roofline.tui.probe.live_points import RooflinePoint, Trail, sample_to_point
from roofline.tui.probe.live_protocol import ActivitySample, LiveSource, SourceUnavailable

__all__ = [
    "DCGM_FIELD_DRAM_ACTIVE", "DCGM_FIELD_IDS", "DCGM_FIELD_TENSOR_ACTIVE", "DCGM_SHORT_NAMES", "NO_DETECT_ENV",
    "NO_DETECT_REASON", "NVML_NOT_INSTALLED_REASON", "NVML_NO_GPM_REASON", "SOURCE_NAMES", "ActivitySample",
    "DcgmiSource", "DmonError", "DmonRow", "DmonStreamParser", "LiveSource", "LiveSourceOrUnavailable",
    "NvmlGpmSource", "RooflinePoint", "SourceUnavailable", "Trail", "Unavailable", "dcgmi_command",
    "explain_dcgmi_error", "open_live_source", "probing_disabled", "sample_to_point",
]

NO_DETECT_ENV = "ROOFLINE_NO_DETECT"
NO_DETECT_REASON = "GPU probing disabled (ROOFLINE_NO_DETECT)"

SOURCE_NAMES = ("dcgm", "nvml")


# --------------------------------------------------------------------------------------------------------------------
# Choosing a source
# --------------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Unavailable:
    """No live counters here. ``reason`` joins why each source failed, in the order tried."""

    reason: str
    attempts: tuple[tuple[str, str], ...] = ()


LiveSourceOrUnavailable = DcgmiSource | NvmlGpmSource | Unavailable


def probing_disabled(env: Mapping[str, str] | None = None) -> bool:
    """True when ROOFLINE_NO_DETECT is set to anything but empty or 0."""
    value = (os.environ if env is None else env).get(NO_DETECT_ENV, "")
    return value.strip() not in ("", "0")


def open_live_source(gpu_index: int = 0, *, prefer: Sequence[str] = SOURCE_NAMES, interval_s: float = 1.0,
                     startup_timeout_s: float = 5.0,
                     env: Mapping[str, str] | None = None) -> LiveSourceOrUnavailable:
    """Start the first source in ``prefer`` that works; otherwise Unavailable with every reason.

    Blocks while dcgmi starts (up to ``startup_timeout_s``), so call it from a worker thread.
    """
    unknown = [name for name in prefer if name not in SOURCE_NAMES]
    if unknown:
        raise ValueError(f"unknown live source(s) {unknown}; choose from {list(SOURCE_NAMES)}")
    if probing_disabled(env):
        return Unavailable(NO_DETECT_REASON)
    attempts: list[tuple[str, str]] = []
    for name in prefer:
        opened = _open_dcgm(gpu_index, interval_s, startup_timeout_s) if name == "dcgm" else \
            _open_nvml(gpu_index, interval_s)
        if isinstance(opened, str):
            attempts.append((name, opened))
            continue
        return opened
    if not attempts:
        return Unavailable("no live source requested")
    return Unavailable("; ".join(reason for _, reason in attempts), tuple(attempts))


def _open_dcgm(gpu_index: int, interval_s: float, startup_timeout_s: float) -> DcgmiSource | str:
    source = DcgmiSource(gpu_index, interval_s=interval_s)
    try:
        source.start()
    except SourceUnavailable as error:
        return str(error)
    problem = source.wait_ready(startup_timeout_s)
    if problem is not None:
        source.close()
        return problem
    return source


def _open_nvml(gpu_index: int, interval_s: float) -> NvmlGpmSource | str:
    source = NvmlGpmSource(gpu_index, interval_s=interval_s)
    try:
        source.start()
    except SourceUnavailable as error:
        return str(error)
    return source
