"""The host as a measured device: CPU name and vendor, installed and free memory, usable CPUs, and the numpy backend
(a threaded ``np.copyto`` and numpy's BLAS GEMM)."""

from __future__ import annotations

import os
import platform
import socket
from collections.abc import Callable
from typing import Any

from roofline.tui.probe.measure_types import GIB, DeviceInfo, Operation, UnsupportedDtype


def host_name() -> str:
    """Short host name (first label of the FQDN)."""
    return socket.gethostname().split(".")[0] or "localhost"


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
