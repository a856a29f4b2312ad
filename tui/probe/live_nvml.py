"""NVML GPM live counters (Hopper or newer, nvidia-ml-py): DRAM bandwidth and any-tensor utilisation.

``NVML_GPM_METRIC_DRAM_BW_UTIL`` (10, "percentage of DRAM bw used vs theoretical maximum") and
``NVML_GPM_METRIC_ANY_TENSOR_UTIL`` (5, "percentage of time the GPU's SMs were doing ANY tensor operations"), computed
by ``nvmlGpmMetricsGet`` from two ``nvmlGpmSampleGet`` snapshots (NVML API reference, GPM functions; nvidia-ml-py
``pynvml.py``).
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable
from types import ModuleType

from roofline.tui.probe.live_protocol import CLOSED_REASON, ActivitySample, SourceUnavailable

NVML_NOT_INSTALLED_REASON = "NVML (nvidia-ml-py) not installed"
NVML_NO_GPM_REASON = "NVML has no DRAM/tensor activity counters on this GPU (GPM needs Hopper or newer)"


class NvmlGpmSource:
    """NVML GPU Performance Monitoring (Hopper or newer): DRAM bandwidth and any-tensor utilisation.

    Why not ``nvmlDeviceGetUtilizationRates``: its ``memory`` is the "percent of time over the past sample period
    during which global (device) memory was being read or written" (NVML ``nvmlUtilization_t``), a busy-time
    fraction that reads near 100 % for a kernel touching memory at a trickle. It says nothing about bytes per second,
    so presenting it as DRAM activity would put the point far above where the workload is. NVML has no tensor
    counter outside GPM either. Without GPM this source is unavailable rather than wrong.

    Each ``read`` takes a new GPM snapshot once ``interval_s`` has passed since the previous one and asks
    ``nvmlGpmMetricsGet`` for the rates between the two (the NVML reference asks for at least 100 ms between them).
    """

    name = "NVML GPM"

    def __init__(self, gpu_index: int = 0, *, interval_s: float = 1.0, nvml: ModuleType | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.gpu_index = gpu_index
        self.interval_s = interval_s
        self._nvml = nvml
        self._clock = clock
        self._handle: object | None = None
        self._previous: object | None = None
        self._current: object | None = None
        self._previous_at_s = 0.0
        self._initialised = False
        self._failure: str | None = None
        self._closed = threading.Event()
        self._lock = threading.Lock()

    @property
    def failure(self) -> str | None:
        return self._failure

    def start(self) -> None:
        """Initialise NVML, check GPM support, take the first snapshot; SourceUnavailable with the reason."""
        nvml = self._nvml if self._nvml is not None else _import_pynvml()
        self._nvml = nvml
        try:
            nvml.nvmlInit()
        except nvml.NVMLError as error:
            raise SourceUnavailable(f"NVML could not start (NVIDIA driver missing?): {error}") from error
        self._initialised = True
        try:
            self._handle = nvml.nvmlDeviceGetHandleByIndex(self.gpu_index)
            if not hasattr(nvml, "nvmlGpmQueryDeviceSupport"):
                raise SourceUnavailable("this nvidia-ml-py has no GPM functions; upgrade nvidia-ml-py")
            if not nvml.nvmlGpmQueryDeviceSupport(self._handle).isSupportedDevice:
                raise SourceUnavailable(NVML_NO_GPM_REASON)
            self._previous = nvml.nvmlGpmSampleAlloc()
            self._current = nvml.nvmlGpmSampleAlloc()
            nvml.nvmlGpmSampleGet(self._handle, self._previous)
            self._previous_at_s = self._clock()
        except nvml.NVMLError as error:
            self._release()
            code = getattr(error, "value", None)
            if code == getattr(nvml, "NVML_ERROR_NOT_SUPPORTED", object()):
                raise SourceUnavailable(NVML_NO_GPM_REASON) from error
            if code == getattr(nvml, "NVML_ERROR_FUNCTION_NOT_FOUND", object()):
                raise SourceUnavailable("the NVIDIA driver's NVML has no GPM functions (driver too old)") from error
            raise SourceUnavailable(f"NVML GPM failed on GPU {self.gpu_index}: {error}") from error
        except SourceUnavailable:
            self._release()
            raise

    def read(self, timeout_s: float) -> ActivitySample | None:
        """Wait until the interval is up (at most ``timeout_s``), then the activity since the last snapshot."""
        if self._failure is not None:
            return None
        wait_s = self._previous_at_s + self.interval_s - self._clock()
        if wait_s > timeout_s:
            self._closed.wait(max(0.0, timeout_s))
            return None
        if wait_s > 0 and self._closed.wait(wait_s):
            return None
        with self._lock:
            if self._failure is not None:
                return None
            return self._measure()

    def close(self) -> None:
        """Free the GPM samples and shut NVML down; safe to call twice and from another thread."""
        self._closed.set()
        with self._lock:
            if self._failure is None:
                self._failure = CLOSED_REASON
            self._release()

    def __enter__(self) -> NvmlGpmSource:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _measure(self) -> ActivitySample | None:
        nvml = self._nvml
        assert nvml is not None
        try:
            nvml.nvmlGpmSampleGet(self._handle, self._current)
            now_s = self._clock()
            request = nvml.c_nvmlGpmMetricsGet_t()
            request.version = nvml.NVML_GPM_METRICS_GET_VERSION
            request.numMetrics = 2
            request.sample1 = self._previous
            request.sample2 = self._current
            request.metrics[0].metricId = nvml.NVML_GPM_METRIC_DRAM_BW_UTIL
            request.metrics[1].metricId = nvml.NVML_GPM_METRIC_ANY_TENSOR_UTIL
            nvml.nvmlGpmMetricsGet(request)
        except nvml.NVMLError as error:
            self._failure = f"NVML GPM read failed on GPU {self.gpu_index}: {error}"
            return None
        self._previous, self._current = self._current, self._previous
        self._previous_at_s = now_s
        percents = []
        for index, label in ((0, "DRAM bandwidth"), (1, "tensor")):
            metric = request.metrics[index]
            if metric.nvmlReturn != nvml.NVML_SUCCESS or not math.isfinite(metric.value):
                self._failure = f"NVML GPM has no {label} utilisation on GPU {self.gpu_index}"
                return None
            percents.append(metric.value)
        return ActivitySample(dram_active=percents[0] / 100.0, tensor_active=percents[1] / 100.0, timestamp_s=now_s,
                              source="nvml", gpu_index=self.gpu_index)

    def _release(self) -> None:
        nvml = self._nvml
        if nvml is None:
            return
        for sample in (self._previous, self._current):
            if sample is not None:
                with contextlib.suppress(nvml.NVMLError):
                    nvml.nvmlGpmSampleFree(sample)
        self._previous = self._current = None
        if self._initialised:
            self._initialised = False
            with contextlib.suppress(nvml.NVMLError):
                nvml.nvmlShutdown()


def _import_pynvml() -> ModuleType:
    try:
        import pynvml
    except ImportError as error:
        raise SourceUnavailable(NVML_NOT_INSTALLED_REASON) from error
    return pynvml
