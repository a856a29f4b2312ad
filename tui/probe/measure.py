"""Measure this machine's real ceilings: streaming copy bandwidth and dense matmul FLOP/s per dtype.

Method (what the figures mean):

- copy bandwidth = 2 x array bytes / best time of one ``dst <- src`` copy (read + write counted, as STREAM's
  Copy does; write-allocate traffic is not counted), best of repeats after warm-up;
- matmul FLOP/s = 2 n^3 / best time of one square n x n GEMM (one multiply-add = 2 FLOP), best of repeats after
  warm-up. Inputs are random normal (data-dependent power draw, as in S. Bekman's MAMF finder).

The timing loops live here; each backend (numpy on the host, PyTorch or CuPy on a GPU, ROCm included through
``torch.cuda``) only prepares an operation and times one call of it, so tests inject a fake backend.

Modules: :mod:`~roofline.tui.probe.measure_types` (settings, results, the Backend protocol),
:mod:`~roofline.tui.probe.measure_host` (the host and its numpy backend), :mod:`~roofline.tui.probe.measure_gpu`
(PyTorch and CuPy); this module holds the settings and the timing loops. Their public names are importable from here.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from roofline.tui.probe.measure_gpu import _CupyBackend, _TorchBackend, open_gpu_backend
from roofline.tui.probe.measure_host import (
    NumpyBackend,
    cpu_name_and_vendor,
    host_available_bytes,
    host_memory_bytes,
    host_name,
    usable_cpus,
)
from roofline.tui.probe.measure_types import (
    BYTES_PER_ELEMENT,
    GIB,
    MATMUL_DTYPES,
    MEMORY_SHARE,
    MIB,
    Backend,
    DeviceInfo,
    MeasureError,
    Measurement,
    MeasureSettings,
    Operation,
    Progress,
    UnsupportedDtype,
)
from roofline.tui.probe.measure_types import first_line as _first_line

__all__ = [
    "BYTES_PER_ELEMENT", "GIB", "MATMUL_DTYPES", "MEMORY_SHARE", "MIB", "Backend", "DeviceInfo", "MeasureError",
    "MeasureSettings", "Measurement", "NumpyBackend", "Operation", "Progress", "UnsupportedDtype", "_CupyBackend",
    "_TorchBackend", "best_seconds", "cpu_name_and_vendor", "default_settings", "fit_copy_bytes", "fit_matmul_n",
    "host_available_bytes", "host_memory_bytes", "host_name", "measure", "measure_copy", "measure_matmuls",
    "open_gpu_backend", "usable_cpus",
]


def default_settings(kind: str, *, quick: bool = False, dtypes: tuple[str, ...] | None = None) -> MeasureSettings:
    """Defaults: host about 3-5 s on a 2-core box; GPU 1 GiB copies and n = 8192 GEMMs."""
    if kind == "cpu":
        if quick:
            return MeasureSettings(copy_bytes=32 * MIB, copy_warmup=1, copy_repeats=3, matmul_n=512,
                                   matmul_warmup=1, matmul_repeats=3, dtypes=dtypes)
        # 32 MiB per CPU keeps the arrays well above the summed last-level caches of big servers
        copy_bytes = max(256 * MIB, 32 * MIB * usable_cpus())
        return MeasureSettings(copy_bytes=copy_bytes, copy_warmup=2, copy_repeats=5, matmul_n=2048, matmul_warmup=1,
                               matmul_repeats=3, matmul_max_n=8192, matmul_min_call_s=0.05, dtypes=dtypes)
    if quick:
        return MeasureSettings(copy_bytes=256 * MIB, copy_warmup=2, copy_repeats=5, matmul_n=4096, matmul_warmup=2,
                               matmul_repeats=5, dtypes=dtypes)
    return MeasureSettings(copy_bytes=GIB, copy_warmup=3, copy_repeats=10, matmul_n=8192, matmul_warmup=5,
                           matmul_repeats=10, dtypes=dtypes)


# ---- the timing loops --------------------------------------------------------------------------------------------
def best_seconds(backend: Backend, op: Operation, warmup: int, repeats: int) -> float:
    """Best (shortest) time of ``repeats`` calls, after ``warmup`` calls whose times are discarded."""
    for _ in range(warmup):
        backend.seconds(op)
    return min(backend.seconds(op) for _ in range(max(1, repeats)))


def fit_copy_bytes(wanted_bytes: int, free_bytes: int) -> int:
    """Array size (whole MiB) so that source and destination fit in ``MEMORY_SHARE`` of free memory."""
    size = min(wanted_bytes, int(free_bytes * MEMORY_SHARE / 2) // MIB * MIB)
    if size < MIB:
        raise MeasureError(f"not enough free memory for a copy test ({free_bytes / MIB:.0f} MiB free)")
    return size


def fit_matmul_n(wanted_n: int, dtype: str, free_bytes: int) -> int:
    """Largest n <= wanted (halving, multiple of 16) whose three n x n matrices fit in free memory."""
    n = wanted_n
    while n > 16 and 3 * n * n * BYTES_PER_ELEMENT[dtype] > free_bytes * MEMORY_SHARE:
        n //= 2
    return max(16, n - n % 16)


def _size_text(size_bytes: int) -> str:
    return f"{size_bytes / GIB:g} GiB" if size_bytes >= GIB else f"{size_bytes / MIB:g} MiB"


def measure_copy(backend: Backend, settings: MeasureSettings, progress: Progress) -> tuple[float, dict[str, Any]]:
    """(bytes/s, method): 2 x size / best copy time."""
    size = fit_copy_bytes(settings.copy_bytes, backend.free_memory_bytes())
    progress(f"measuring copy bandwidth ({_size_text(size)} x {settings.copy_repeats})...")
    op = backend.copy_op(size)
    try:
        best_s = best_seconds(backend, op, settings.copy_warmup, settings.copy_repeats)
    finally:
        del op
        backend.release()
    method = {"bytes_per_array": size, "bytes_counted_per_copy": 2 * size, "warmup": settings.copy_warmup,
              "repeats": settings.copy_repeats, "best_s": best_s,
              "formula": "2 x array bytes (read + write) / best time"}
    return 2 * size / best_s, method


def _sized_matmul(backend: Backend, dtype: str, n: int, settings: MeasureSettings) -> tuple[Operation, int, int]:
    """(op, n, probe calls of that op): the n x n GEMM to time, grown (doubling n) while one call is shorter
    than ``matmul_min_call_s``. A probe call of the final op counts as a warm-up."""
    op = backend.matmul_op(dtype, n)
    probes = 0
    while settings.matmul_max_n >= 2 * n:
        probes = 1
        if backend.seconds(op) >= settings.matmul_min_call_s:
            break
        bigger = fit_matmul_n(2 * n, dtype, backend.free_memory_bytes())
        if bigger <= n:
            break
        op = None
        backend.release()
        n, probes = bigger, 0
        op = backend.matmul_op(dtype, n)
    return op, n, probes


def measure_matmuls(backend: Backend, settings: MeasureSettings, progress: Progress
                    ) -> tuple[dict[str, float], dict[str, str], dict[str, Any]]:
    """(FLOP/s by dtype, skipped dtype -> reason, method): 2 n^3 / best GEMM time, per dtype."""
    flops: dict[str, float] = {}
    skipped: dict[str, str] = {}
    sizes: dict[str, int] = {}
    best: dict[str, float] = {}
    for dtype in settings.dtypes or backend.default_dtypes:
        n = fit_matmul_n(settings.matmul_n, dtype, backend.free_memory_bytes())
        grows = " or larger" if settings.matmul_max_n >= 2 * n else ""
        progress(f"measuring {dtype} matmul ({n}x{n}{grows}, best of {settings.matmul_repeats})...")
        op = None
        try:
            op, n, probes = _sized_matmul(backend, dtype, n, settings)
            best_s = best_seconds(backend, op, max(0, settings.matmul_warmup - probes), settings.matmul_repeats)
        except UnsupportedDtype as err:
            skipped[dtype] = str(err)
        except Exception as err:  # a library error for one dtype (old driver, kernel missing): skip, say why
            skipped[dtype] = f"failed: {_first_line(err)}"
        else:
            flops[dtype], sizes[dtype], best[dtype] = 2.0 * n**3 / best_s, n, best_s
        finally:
            op = None
            backend.release()
        if dtype in skipped:
            progress(f"  skipped {dtype}: {skipped[dtype]}")
    method = {"n_by_dtype": sizes, "best_s_by_dtype": best, "warmup": settings.matmul_warmup,
              "repeats": settings.matmul_repeats, "formula": "2 n^3 / best time (square n x n GEMM)"}
    return flops, skipped, method


def measure(backend: Backend, settings: MeasureSettings, progress: Progress = lambda _: None, *,
            host: str | None = None, date: str | None = None) -> Measurement:
    """Copy bandwidth, then a GEMM per dtype, on ``backend``'s device."""
    mem_bw, copy_method = measure_copy(backend, settings, progress)
    flops, skipped, matmul_method = measure_matmuls(backend, settings, progress)
    info = backend.info
    return Measurement(
        device=info.name, kind=info.kind, vendor=info.vendor, mem_bw_bytes_per_s=mem_bw,
        flops_per_s_by_dtype=flops, memory_bytes=info.memory_bytes,
        method={"library": info.library, **info.details, "copy": copy_method, "matmul": matmul_method},
        skipped=skipped, host=host or host_name(), date=date or _dt.date.today().isoformat(),
    )
