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
"""

from __future__ import annotations

import contextlib
import math
import os
import queue
import shutil
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Protocol

NO_DETECT_ENV = "ROOFLINE_NO_DETECT"
NO_DETECT_REASON = "GPU probing disabled (ROOFLINE_NO_DETECT)"

DCGM_FIELD_TENSOR_ACTIVE = 1004
"""DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, dcgmi short name TENSO (NVIDIA/DCGM dcgmlib/dcgm_fields.h)."""
DCGM_FIELD_DRAM_ACTIVE = 1005
"""DCGM_FI_PROF_DRAM_ACTIVE, dcgmi short name DRAMA (NVIDIA/DCGM dcgmlib/dcgm_fields.h)."""
DCGM_SHORT_NAMES = {"DRAMA": DCGM_FIELD_DRAM_ACTIVE, "TENSO": DCGM_FIELD_TENSOR_ACTIVE}
DCGM_FIELD_IDS = (DCGM_FIELD_DRAM_ACTIVE, DCGM_FIELD_TENSOR_ACTIVE)

NVML_NOT_INSTALLED_REASON = "NVML (nvidia-ml-py) not installed"
NVML_NO_GPM_REASON = "NVML has no DRAM/tensor activity counters on this GPU (GPM needs Hopper or newer)"

SOURCE_NAMES = ("dcgm", "nvml")


# --------------------------------------------------------------------------------------------------------------------
# Samples, points, trail
# --------------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ActivitySample:
    """Whole-device activity over one sample interval.

    ``dram_active`` and ``tensor_active`` are fractions 0..1 as the counters report them (not clamped: a reading a
    hair above 1 is counter rounding). ``timestamp_s`` is on the monotonic clock, taken when the sample arrived.
    """

    dram_active: float
    tensor_active: float
    timestamp_s: float
    source: str
    gpu_index: int = 0


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


# --------------------------------------------------------------------------------------------------------------------
# dcgmi dmon output parsing
# --------------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DmonRow:
    """One data row of ``dcgmi dmon``: an entity and its values by field id (None where dcgmi printed N/A)."""

    entity_kind: str
    entity_id: int
    values: Mapping[int, float | None]

    def value(self, field_id: int) -> float | None:
        return self.values.get(field_id)


@dataclass(frozen=True)
class DmonError:
    """A line in which dcgmi reports an error (``Error: ...``, ``Error setting watches. ...``)."""

    message: str


class DmonStreamParser:
    """Turns ``dcgmi dmon`` output, line by line, into :class:`DmonRow` and :class:`DmonError`.

    Columns are named by the latest ``#Entity`` header (DRAMA, TENSO); before any header, or when its names are
    unknown, they follow the order of the requested field ids. Units lines, blank lines, repeated headers and
    anything else unparseable (a truncated or interleaved line) give None.
    """

    def __init__(self, field_ids: Sequence[int] = DCGM_FIELD_IDS) -> None:
        self.field_ids = tuple(field_ids)
        self._columns: tuple[int, ...] = self.field_ids

    @property
    def columns(self) -> tuple[int, ...]:
        """The field id of each value column, as currently understood."""
        return self._columns

    def feed(self, line: str) -> DmonRow | DmonError | None:
        text = line.strip()
        if not text:
            return None
        if text.lower().startswith("error"):
            return DmonError(text)
        if text.startswith("#"):
            self._read_header(text.lstrip("#").split())
            return None
        return self._read_row(text.split())

    def _read_header(self, names: list[str]) -> None:
        if not names or names[0].lower() != "entity":
            return
        ids = tuple(DCGM_SHORT_NAMES.get(name.upper(), -1) for name in names[1:])
        known = len(ids) == len(self.field_ids) and -1 not in ids
        self._columns = ids if known else self.field_ids

    def _read_row(self, tokens: list[str]) -> DmonRow | None:
        width = len(self._columns)
        if len(tokens) != width + 2 or not tokens[0].replace("-", "").isalpha():
            return None  # entity kinds are GPU, GPU-I, GPU-CI, vGPU, Switch (dcgmi/DeviceMonitor.cpp)
        kind, entity, raw_values = tokens[0], tokens[1], tokens[2:]
        if not entity.isdigit():
            return None
        values: dict[int, float | None] = {}
        for field_id, raw in zip(self._columns, raw_values, strict=True):
            value = _parse_dmon_value(raw)
            if value is _GARBAGE:
                return None
            values[field_id] = value
        return DmonRow(entity_kind=kind, entity_id=int(entity), values=values)


_GARBAGE = object()


def _parse_dmon_value(raw: str) -> float | None | object:
    if raw.upper() == "N/A":
        return None
    try:
        value = float(raw)
    except ValueError:
        return _GARBAGE
    return value if math.isfinite(value) and value >= 0 else _GARBAGE


def _is_unexplained(line: str) -> bool:
    """A non-blank line that is neither a header nor the units line: kept as context if dcgmi exits."""
    tokens = line.split()
    return bool(tokens) and not tokens[0].startswith("#") and tokens[0].lower() != "id"


def explain_dcgmi_error(message: str) -> str:
    """A reason a person can act on, from dcgmi's own error text (kept, after the explanation)."""
    lower = message.lower()
    if "as root" in lower:
        return f"DCGM profiling fields need nv-hostengine running as root: {message}"
    if "connect to host engine" in lower or "establish a connection" in lower or "connection invalid" in lower:
        return ("DCGM host engine (nv-hostengine) not running or not reachable "
                f"(start it: `sudo systemctl start nvidia-dcgm`): {message}")
    if "profiling" in lower or "setting watches" in lower:
        return ("DCGM cannot watch the DRAM/tensor profiling fields (not supported on this GPU, or another profiler "
                f"such as dcgm-exporter or Nsight holds the counters): {message}")
    return f"dcgmi dmon failed: {message}"


def dcgmi_command(executable: str, gpu_index: int, interval_ms: int) -> list[str]:
    """``dcgmi dmon -e 1005,1004 -d <ms> -i <gpu>``: DRAMA then TENSO, one row per interval, one GPU."""
    fields = ",".join(str(field_id) for field_id in DCGM_FIELD_IDS)
    return [executable, "dmon", "-e", fields, "-d", str(interval_ms), "-i", str(gpu_index)]


# --------------------------------------------------------------------------------------------------------------------
# Sources
# --------------------------------------------------------------------------------------------------------------------

class SourceUnavailable(Exception):
    """A live source cannot start here; the message says why."""


class LiveSource(Protocol):
    """A started counter source. ``read`` blocks up to ``timeout_s``; ``failure`` is set once it has stopped."""

    name: str
    gpu_index: int
    interval_s: float

    @property
    def failure(self) -> str | None: ...

    def read(self, timeout_s: float) -> ActivitySample | None: ...

    def close(self) -> None: ...

    def __enter__(self) -> LiveSource: ...

    def __exit__(self, *exc_info: object) -> None: ...


_STOPPED = object()
_CLOSED_REASON = "live source closed"


class DcgmiSource:
    """``dcgmi dmon`` run as a long-lived child; a reader thread parses its rows into samples.

    Rows with N/A for either field are skipped (the first rows after a watch starts often are); ``na_limit``
    of them in a row means the counters are not coming, and the source fails with that reason.
    """

    name = "DCGM (dcgmi dmon)"

    def __init__(self, gpu_index: int = 0, *, interval_s: float = 1.0, executable: str = "dcgmi",
                 na_limit: int = 10, clock: Callable[[], float] = time.monotonic, max_queued: int = 64) -> None:
        self.gpu_index = gpu_index
        self.interval_s = interval_s
        self.na_limit = na_limit
        self._executable = executable
        self._clock = clock
        self._samples: queue.Queue[object] = queue.Queue(maxsize=max_queued)
        self._first_row = threading.Event()
        self._lock = threading.Lock()
        self._failure: str | None = None
        self._closing = False
        self._process: subprocess.Popen[str] | None = None
        self._reader: threading.Thread | None = None

    @property
    def failure(self) -> str | None:
        return self._failure

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def start(self) -> None:
        """Start ``dcgmi dmon``; SourceUnavailable when dcgmi is not on PATH or cannot be run."""
        path = shutil.which(self._executable)
        if path is None:
            raise SourceUnavailable("dcgmi not on PATH")
        command = dcgmi_command(path, self.gpu_index, max(1, round(self.interval_s * 1000)))
        try:
            # stderr joins stdout: dcgmi's error lines are the reasons to show. A new session keeps the terminal's
            # Ctrl-C away from the child; close() ends it.
            self._process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                             stderr=subprocess.STDOUT, encoding="utf-8", errors="replace",
                                             bufsize=1, start_new_session=True)
        except OSError as error:
            raise SourceUnavailable(f"dcgmi could not be started: {error}") from error
        self._reader = threading.Thread(target=self._read_stream, name="dcgmi-dmon-reader", daemon=True)
        self._reader.start()

    def wait_ready(self, timeout_s: float) -> str | None:
        """Wait for the first data row (N/A counts) or a failure; None when rows are flowing, else the reason."""
        if not self._first_row.wait(timeout_s):
            return f"dcgmi dmon printed no data for GPU {self.gpu_index} within {timeout_s:g} s"
        return self._failure

    def read(self, timeout_s: float) -> ActivitySample | None:
        """The next sample, or None when none came within ``timeout_s`` or the source has stopped."""
        if self._failure is not None and self._samples.empty():
            return None
        try:
            item = self._samples.get(timeout=max(0.0, timeout_s))
        except queue.Empty:
            return None
        return None if item is _STOPPED else item  # type: ignore[return-value]

    def close(self) -> None:
        """Stop the child (SIGTERM, then SIGKILL after 2 s) and reap it; safe to call twice."""
        with self._lock:
            self._closing = True
            if self._failure is None:
                self._failure = _CLOSED_REASON
            process = self._process
        if process is not None:
            _end_process(process)
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join(timeout=2.0)
        if process is not None and process.stdout is not None:
            process.stdout.close()
        self._first_row.set()

    def __enter__(self) -> DcgmiSource:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # reader thread ---------------------------------------------------------------------------------------------

    def _read_stream(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        parser = DmonStreamParser()
        errors: list[str] = []
        other_lines: deque[str] = deque(maxlen=3)
        na_streak = 0
        try:
            for line in self._process.stdout:
                parsed = parser.feed(line)
                if isinstance(parsed, DmonError):
                    errors.append(parsed.message)
                    continue
                if parsed is None:
                    if _is_unexplained(line):
                        other_lines.append(line.strip())
                    continue
                if parsed.entity_kind != "GPU" or parsed.entity_id != self.gpu_index:
                    continue
                self._first_row.set()
                dram = parsed.value(DCGM_FIELD_DRAM_ACTIVE)
                tensor = parsed.value(DCGM_FIELD_TENSOR_ACTIVE)
                if dram is None or tensor is None:
                    na_streak += 1
                    if na_streak >= self.na_limit:
                        self._stop(f"DCGM reports N/A for DRAM/tensor activity on GPU {self.gpu_index} "
                                   f"({na_streak} samples in a row): profiling counters not supported on this GPU "
                                   "or held by another profiler")
                        _end_process(self._process)
                        return
                    continue
                na_streak = 0
                self._put(ActivitySample(dram_active=dram, tensor_active=tensor, timestamp_s=self._clock(),
                                         source="dcgm", gpu_index=self.gpu_index))
        except (OSError, ValueError):
            pass  # the pipe was closed under us by close()
        status = self._process.wait()
        if errors:
            self._stop(explain_dcgmi_error(" ".join(errors)))
        else:
            context = f": {' | '.join(other_lines)}" if other_lines else ""
            self._stop(f"dcgmi dmon exited (status {status}){context}")

    def _put(self, item: object) -> None:
        while True:
            try:
                self._samples.put_nowait(item)
                return
            except queue.Full:
                with contextlib.suppress(queue.Empty):
                    self._samples.get_nowait()  # the UI fell behind: drop the oldest sample

    def _stop(self, reason: str) -> None:
        with self._lock:
            if not self._closing and self._failure is None:
                self._failure = reason
        self._put(_STOPPED)
        self._first_row.set()


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
                self._failure = _CLOSED_REASON
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


def _end_process(process: subprocess.Popen[str]) -> None:
    """SIGTERM, then SIGKILL after 2 s; always waits, so no zombie is left."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            process.kill()
    process.wait()


def _import_pynvml() -> ModuleType:
    try:
        import pynvml
    except ImportError as error:
        raise SourceUnavailable(NVML_NOT_INSTALLED_REASON) from error
    return pynvml


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
