"""DCGM live counters: ``dcgmi dmon -e 1005,1004 -d 1000 -i <gpu>`` as a long-lived child, parsed row by row.

The fields are ``DCGM_FI_PROF_DRAM_ACTIVE`` (1005, "ratio of cycles the device memory interface is active sending or
receiving data") and ``DCGM_FI_PROF_PIPE_TENSOR_ACTIVE`` (1004, "ratio of cycles the [any] tensor pipe is active"),
both ratios 0..1 (NVIDIA/DCGM ``dcgmlib/dcgm_fields.h``). The table layout (``#Entity`` header, ``ID`` units line,
``GPU 0  0.523  0.112`` rows, ``N/A`` for blank values, the header reprinted every 14 samples) is that of
NVIDIA/DCGM ``dcgmi/DeviceMonitor.cpp``; DCGM 2.x printed ``# Entity`` / ``Id`` instead.
"""

from __future__ import annotations

import contextlib
import math
import queue
import shutil
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from roofline.tui.probe.live_protocol import CLOSED_REASON, ActivitySample, SourceUnavailable

DCGM_FIELD_TENSOR_ACTIVE = 1004
"""DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, dcgmi short name TENSO (NVIDIA/DCGM dcgmlib/dcgm_fields.h)."""
DCGM_FIELD_DRAM_ACTIVE = 1005
"""DCGM_FI_PROF_DRAM_ACTIVE, dcgmi short name DRAMA (NVIDIA/DCGM dcgmlib/dcgm_fields.h)."""
DCGM_SHORT_NAMES = {"DRAMA": DCGM_FIELD_DRAM_ACTIVE, "TENSO": DCGM_FIELD_TENSOR_ACTIVE}
DCGM_FIELD_IDS = (DCGM_FIELD_DRAM_ACTIVE, DCGM_FIELD_TENSOR_ACTIVE)


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


_STOPPED = object()


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
                self._failure = CLOSED_REASON
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


def _end_process(process: subprocess.Popen[str]) -> None:
    """SIGTERM, then SIGKILL after 2 s; always waits, so no zombie is left."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            process.kill()
    process.wait()
