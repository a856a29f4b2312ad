"""Measure this machine's real ceilings: streaming copy bandwidth and dense matmul FLOP/s per dtype.

Method (what the figures mean):

- copy bandwidth = 2 x array bytes / best time of one ``dst <- src`` copy (read + write counted, as STREAM's
  Copy does; write-allocate traffic is not counted), best of repeats after warm-up;
- matmul FLOP/s = 2 n^3 / best time of one square n x n GEMM (one multiply-add = 2 FLOP), best of repeats after
  warm-up. Inputs are random normal (data-dependent power draw, as in S. Bekman's MAMF finder).

The timing loops live here; each backend (numpy on the host, PyTorch or CuPy on a GPU, ROCm included through
``torch.cuda``) only prepares an operation and times one call of it, so tests inject a fake backend.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

MIB = 1024**2
GIB = 1024**3
# bytes per element of the GEMM inputs (fp8 writes bf16; tf32 is stored as fp32)
BYTES_PER_ELEMENT = {"fp64": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 2}
MATMUL_DTYPES = tuple(BYTES_PER_ELEMENT)
# share of free memory the buffers of one measurement may take
MEMORY_SHARE = 0.5

Operation = Callable[[], object]
Progress = Callable[[str], None]


class MeasureError(Exception):
    """This machine cannot be measured as asked (no GPU library, no GPU, bad device index)."""


class UnsupportedDtype(Exception):
    """The backend or the device has no matmul for this dtype; the message says why."""


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    name: str
    kind: str  # "cpu" | "cuda" | "rocm"
    vendor: str
    memory_bytes: int | None
    library: str  # e.g. "numpy 2.1.0 (openblas)", "torch 2.5.1 (CUDA 12.4)"
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Measurement:
    """Measured ceilings of one device, SI units."""

    device: str
    kind: str
    vendor: str
    mem_bw_bytes_per_s: float
    flops_per_s_by_dtype: dict[str, float]
    memory_bytes: int | None
    method: dict[str, Any]
    skipped: dict[str, str]
    host: str
    date: str

    @property
    def peak_dtype(self) -> str | None:
        if not self.flops_per_s_by_dtype:
            return None
        return max(self.flops_per_s_by_dtype, key=self.flops_per_s_by_dtype.__getitem__)

    @property
    def peak_flops_per_s(self) -> float | None:
        dtype = self.peak_dtype
        return None if dtype is None else self.flops_per_s_by_dtype[dtype]

    def to_json(self) -> dict[str, Any]:
        return {
            "device": self.device, "kind": self.kind, "vendor": self.vendor, "host": self.host, "date": self.date,
            "mem_bw_bytes_per_s": self.mem_bw_bytes_per_s, "peak_flops_per_s": self.peak_flops_per_s,
            "peak_dtype": self.peak_dtype, "flops_per_s_by_dtype": dict(self.flops_per_s_by_dtype),
            "memory_bytes": self.memory_bytes, "skipped": dict(self.skipped), "method": self.method,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class MeasureSettings:
    """Sizes and repeat counts. ``matmul_max_n`` > ``matmul_n`` doubles n until one GEMM takes at least
    ``matmul_min_call_s`` (so a many-core host is not timed on a GEMM too small to fill it)."""

    copy_bytes: int
    copy_warmup: int
    copy_repeats: int
    matmul_n: int
    matmul_warmup: int
    matmul_repeats: int
    matmul_max_n: int = 0
    matmul_min_call_s: float = 0.0
    dtypes: tuple[str, ...] | None = None  # None: every dtype the backend offers


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


class Backend(Protocol):
    """What the timing loops need from a device library."""

    info: DeviceInfo
    default_dtypes: tuple[str, ...]

    def free_memory_bytes(self) -> int: ...

    def copy_op(self, size_bytes: int) -> Operation: ...

    def matmul_op(self, dtype: str, n: int) -> Operation:
        """Raise :class:`UnsupportedDtype` (with the reason) when the device cannot do it."""
        ...

    def seconds(self, op: Operation) -> float:
        """Wall time of one call of ``op``, device work included (synchronised)."""
        ...

    def release(self) -> None:
        """Give back cached buffers after an operation has been dropped."""
        ...

    def close(self) -> None: ...


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


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0]}" if text else type(err).__name__


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


def host_name() -> str:
    """Short host name (first label of the FQDN)."""
    return socket.gethostname().split(".")[0] or "localhost"


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


# ---- host (numpy) ------------------------------------------------------------------------------------------------
def _cpuinfo() -> dict[str, str]:
    """First value of each key in /proc/cpuinfo (empty elsewhere)."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                key, sep, value = line.partition(":")
                if sep and key.strip() not in fields:
                    fields[key.strip()] = value.strip()
    except OSError:
        pass
    return fields


_CPU_VENDORS = {"GenuineIntel": "Intel", "AuthenticAMD": "AMD", "CentaurHauls": "Centaur", "HygonGenuine": "Hygon"}
_ARM_IMPLEMENTERS = {"0x41": "Arm", "0x4e": "NVIDIA", "0x48": "HiSilicon", "0x61": "Apple", "0xc0": "Ampere",
                     "0x51": "Qualcomm", "0x46": "Fujitsu"}


def cpu_name_and_vendor() -> tuple[str, str]:
    """CPU model and vendor from /proc/cpuinfo ("model name", "vendor_id"), else :mod:`platform`."""
    info = _cpuinfo()
    name = info.get("model name") or info.get("Model") or platform.processor() or platform.machine() or "CPU"
    vendor = _CPU_VENDORS.get(info.get("vendor_id", ""), "") or _ARM_IMPLEMENTERS.get(info.get("CPU implementer", ""),
                                                                                       "")
    if not vendor:
        first = name.split()[0] if name.split() else ""
        vendor = first if first.isalpha() and first not in ("CPU", "x86_64", "aarch64", "arm64") else "unknown"
    return name, vendor


def host_memory_bytes() -> int | None:
    """Installed RAM: SC_PHYS_PAGES x SC_PAGE_SIZE."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def host_available_bytes() -> int:
    """MemAvailable from /proc/meminfo, else free pages, else a conservative 2 GiB."""
    try:
        with open("/proc/meminfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 2 * GIB


def usable_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class NumpyBackend:
    """The host: a threaded ``np.copyto`` (numpy drops the GIL while copying) and numpy's BLAS GEMM."""

    default_dtypes = ("fp32", "fp64")
    _NUMPY_DTYPES = {"fp32": "float32", "fp64": "float64"}

    def __init__(self, threads: int | None = None) -> None:
        from concurrent.futures import ThreadPoolExecutor

        import numpy as np

        self._np = np
        self.threads = threads or usable_cpus()
        self._pool = ThreadPoolExecutor(self.threads) if self.threads > 1 else None
        name, vendor = cpu_name_and_vendor()
        self.info = DeviceInfo(name=name, kind="cpu", vendor=vendor, memory_bytes=host_memory_bytes(),
                               library=f"numpy {np.__version__}{_blas_text(np)}",
                               details={"copy_threads": self.threads, "cpus": usable_cpus()})

    def free_memory_bytes(self) -> int:
        return host_available_bytes()

    def _each_slice(self, size: int, work: Callable[[slice], object]) -> None:
        if self._pool is None:
            work(slice(0, size))
            return
        step = -(-size // self.threads // 4096) * 4096  # page-aligned slices
        list(self._pool.map(work, [slice(start, start + step) for start in range(0, size, step)]))

    def copy_op(self, size_bytes: int) -> Operation:
        np = self._np
        src = np.empty(size_bytes, dtype=np.uint8)
        dst = np.empty_like(src)

        def first_touch(part: slice) -> None:  # pages land on the NUMA node of the thread that copies them
            src[part] = 1
            dst[part] = 0

        self._each_slice(size_bytes, first_touch)
        return lambda: self._each_slice(size_bytes, lambda part: np.copyto(dst[part], src[part]))

    def matmul_op(self, dtype: str, n: int) -> Operation:
        np = self._np
        if dtype not in self._NUMPY_DTYPES:
            raise UnsupportedDtype(f"numpy has no BLAS GEMM for {dtype} (host measures fp32 and fp64)")
        rng = np.random.default_rng(0)
        a = rng.standard_normal((n, n), dtype=self._NUMPY_DTYPES[dtype])
        b = rng.standard_normal((n, n), dtype=self._NUMPY_DTYPES[dtype])
        c = np.empty_like(a)
        return lambda: np.matmul(a, b, out=c)

    def seconds(self, op: Operation) -> float:
        from time import perf_counter

        start = perf_counter()
        op()
        return perf_counter() - start

    def release(self) -> None:
        pass

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()


def _blas_text(np: Any) -> str:
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f" ({blas.get('name', '?')} {blas.get('version', '')})".replace(" )", ")")
    except Exception:  # older numpy: no mode="dicts"
        return ""


# ---- GPU (PyTorch, ROCm through torch.cuda) ----------------------------------------------------------------------
class _TorchBackend:
    """One GPU through PyTorch: ``copy_`` (a device-to-device memcpy), ``torch.mm``, ``torch._scaled_mm`` for fp8;
    CUDA events time each call."""

    def __init__(self, torch: Any, index: int) -> None:
        self.torch = torch
        self.device = torch.device("cuda", index)
        torch.cuda.set_device(self.device)
        props = torch.cuda.get_device_properties(index)
        self.is_rocm = bool(getattr(torch.version, "hip", None))
        self.capability = (props.major, props.minor)
        self.arch = str(getattr(props, "gcnArchName", "") or "")
        self._allow_tf32 = torch.backends.cuda.matmul.allow_tf32
        runtime = f"HIP {torch.version.hip}" if self.is_rocm else f"CUDA {torch.version.cuda}"
        major, minor = self.capability
        details: dict[str, Any] = {"device_index": index}
        details.update({"gcn_arch": self.arch} if self.is_rocm else {"compute_capability": f"{major}.{minor}"})
        self.info = DeviceInfo(name=torch.cuda.get_device_name(index), kind="rocm" if self.is_rocm else "cuda",
                               vendor="AMD" if self.is_rocm else "NVIDIA", memory_bytes=int(props.total_memory),
                               library=f"torch {torch.__version__} ({runtime})", details=details)
        self.default_dtypes = ("fp32", "tf32", "bf16", "fp16", "fp8")

    def free_memory_bytes(self) -> int:
        return int(self.torch.cuda.mem_get_info(self.device)[0])

    def copy_op(self, size_bytes: int) -> Operation:
        torch = self.torch
        src = torch.ones(size_bytes, dtype=torch.uint8, device=self.device)
        dst = torch.empty_like(src)
        return lambda: dst.copy_(src)

    def _check_dtype(self, dtype: str) -> None:
        if dtype == "tf32" and self.is_rocm:
            raise UnsupportedDtype("not measured on ROCm (torch's allow_tf32 switch is not honoured reliably there)")
        if dtype in ("tf32", "bf16") and not self.is_rocm and self.capability < (8, 0):
            raise UnsupportedDtype(f"{dtype} tensor cores need compute capability >= 8.0 (this GPU is "
                                   f"{self.capability[0]}.{self.capability[1]})")
        if dtype == "bf16" and self.is_rocm and not self.torch.cuda.is_bf16_supported():
            raise UnsupportedDtype("this GPU has no bf16 support")

    def matmul_op(self, dtype: str, n: int) -> Operation:
        torch = self.torch
        if dtype == "fp8":
            return self._fp8_op(n)
        names = {"fp64": "float64", "fp32": "float32", "tf32": "float32", "bf16": "bfloat16", "fp16": "float16"}
        if dtype not in names:
            raise UnsupportedDtype(f"no {dtype} GEMM in this backend")
        self._check_dtype(dtype)
        a = torch.randn(n, n, device=self.device, dtype=getattr(torch, names[dtype]))
        b = torch.randn(n, n, device=self.device, dtype=getattr(torch, names[dtype]))
        c = torch.empty_like(a)
        if dtype in ("fp32", "tf32"):  # one dtype is timed at a time; close() restores the user's setting
            torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
        return lambda: torch.mm(a, b, out=c)

    def _fp8_type(self) -> Any:
        torch = self.torch
        if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
            raise UnsupportedDtype(f"torch {torch.__version__} has no torch._scaled_mm / float8 types")
        if self.is_rocm:
            if "gfx94" in self.arch and hasattr(torch, "float8_e4m3fnuz"):
                return torch.float8_e4m3fnuz  # MI300 series uses the FNUZ encoding
            if "gfx95" in self.arch or "gfx12" in self.arch:
                return torch.float8_e4m3fn
            raise UnsupportedDtype(f"fp8 matmul needs an MI300-class GPU or newer (this is {self.arch or '?'})")
        if self.capability < (8, 9):
            raise UnsupportedDtype(f"fp8 matmul needs compute capability >= 8.9 (this GPU is "
                                   f"{self.capability[0]}.{self.capability[1]})")
        return torch.float8_e4m3fn

    def _fp8_op(self, n: int) -> Operation:
        torch = self.torch
        fp8 = self._fp8_type()
        a = torch.randn(n, n, device=self.device).to(fp8)
        b = torch.randn(n, n, device=self.device).to(fp8).t()  # _scaled_mm wants the second operand column-major
        one = torch.ones((), device=self.device, dtype=torch.float32)

        def op() -> object:
            return torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=True)

        try:
            op()
            torch.cuda.synchronize(self.device)
        except Exception as err:
            raise UnsupportedDtype(f"torch._scaled_mm failed: {_first_line(err)}") from None
        return op

    def seconds(self, op: Operation) -> float:
        cuda = self.torch.cuda
        start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
        start.record()
        op()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3

    def release(self) -> None:
        self.torch.cuda.synchronize(self.device)
        self.torch.cuda.empty_cache()

    def close(self) -> None:
        self.torch.backends.cuda.matmul.allow_tf32 = self._allow_tf32


# ---- GPU (CuPy) --------------------------------------------------------------------------------------------------
class _CupyBackend:
    """One GPU through CuPy: a device-to-device memcpy and ``cupy.matmul`` (fp32, fp16, fp64)."""

    default_dtypes = ("fp32", "fp16")

    def __init__(self, cupy: Any, index: int) -> None:
        self.cp = cupy
        self.device = cupy.cuda.Device(index)
        self.device.use()
        runtime = cupy.cuda.runtime
        props = runtime.getDeviceProperties(index)
        name = props.get("name", b"GPU")
        name = name.decode(errors="replace") if isinstance(name, bytes) else str(name)
        is_rocm = bool(getattr(runtime, "is_hip", False))
        self.info = DeviceInfo(name=name, kind="rocm" if is_rocm else "cuda", vendor="AMD" if is_rocm else "NVIDIA",
                               memory_bytes=int(props.get("totalGlobalMem", 0)) or None,
                               library=f"cupy {cupy.__version__}",
                               details={"device_index": index,
                                        "compute_capability": f"{props.get('major', '?')}.{props.get('minor', '?')}"})

    def free_memory_bytes(self) -> int:
        return int(self.cp.cuda.runtime.memGetInfo()[0])

    def copy_op(self, size_bytes: int) -> Operation:
        cp = self.cp
        src = cp.ones(size_bytes, dtype=cp.uint8)
        dst = cp.empty_like(src)
        return lambda: dst.data.copy_from_device_async(src.data, size_bytes)

    def matmul_op(self, dtype: str, n: int) -> Operation:
        cp = self.cp
        types = {"fp64": cp.float64, "fp32": cp.float32, "fp16": cp.float16}
        if dtype not in types:
            reasons = {"tf32": "CuPy reads CUPY_TF32 only at import; not measured",
                       "bf16": "CuPy has no bfloat16 arrays", "fp8": "CuPy has no fp8 GEMM (use PyTorch)"}
            raise UnsupportedDtype(reasons.get(dtype, f"no {dtype} GEMM in CuPy"))
        rng = cp.random.default_rng(0)
        a = rng.standard_normal((n, n), dtype=cp.float32).astype(types[dtype])
        b = rng.standard_normal((n, n), dtype=cp.float32).astype(types[dtype])
        c = cp.empty_like(a)
        return lambda: cp.matmul(a, b, out=c)

    def seconds(self, op: Operation) -> float:
        cuda = self.cp.cuda
        start, end = cuda.Event(), cuda.Event()
        start.record()
        op()
        end.record()
        end.synchronize()
        return cuda.get_elapsed_time(start, end) / 1e3

    def release(self) -> None:
        self.device.synchronize()
        self.cp.get_default_memory_pool().free_all_blocks()

    def close(self) -> None:
        pass


def _import(name: str) -> tuple[Any | None, str]:
    """(module, "") or (None, why it did not import)."""
    import importlib

    try:
        return importlib.import_module(name), ""
    except ImportError as err:
        return None, _first_line(err)
    except Exception as err:  # a broken install (missing shared library, ABI clash)
        return None, f"import failed: {_first_line(err)}"


def _torch_gpu_problem(torch: Any, index: int) -> str:
    """Why PyTorch cannot use GPU ``index`` ("" when it can)."""
    if not (getattr(torch.version, "cuda", None) or getattr(torch.version, "hip", None)):
        return f"torch {torch.__version__} is a CPU-only build (no CUDA or ROCm)"
    if not torch.cuda.is_available():
        return "torch sees no GPU (torch.cuda.is_available() is False: no device, driver or permission)"
    count = torch.cuda.device_count()
    if index >= count:
        return f"no GPU {index}: torch sees {count}"
    return ""


def _cupy_gpu_problem(cupy: Any, index: int) -> str:
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as err:
        return f"cupy sees no GPU ({_first_line(err)})"
    if index >= count:
        return f"no GPU {index}: cupy sees {count}" if count else "cupy sees no GPU"
    return ""


def open_gpu_backend(index: int = 0, library: str = "auto") -> Backend:
    """PyTorch first (bf16, tf32, fp8), then CuPy; :class:`MeasureError` with a one-line reason otherwise."""
    names = ("torch", "cupy") if library == "auto" else (library,)
    modules = {name: _import(name) for name in names}
    if all(module is None for module, _ in modules.values()):
        wanted = "PyTorch or CuPy (neither is importable)" if library == "auto" else \
            f"{'PyTorch' if library == 'torch' else 'CuPy'} ({modules[library][1]})"
        raise MeasureError(f"--device cuda needs {wanted}")
    problems = []
    for name, (module, _) in modules.items():
        if module is None:
            continue
        problem = _torch_gpu_problem(module, index) if name == "torch" else _cupy_gpu_problem(module, index)
        if not problem:
            return _TorchBackend(module, index) if name == "torch" else _CupyBackend(module, index)
        problems.append(problem)
    raise MeasureError("; ".join(problems))
