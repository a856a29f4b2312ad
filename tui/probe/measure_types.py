"""What a measurement is (device, settings, result) and what a device library must offer to be timed (Backend).

Used by :mod:`roofline.tui.probe.measure` (the timing loops) and its backends
(:mod:`~roofline.tui.probe.measure_host`, :mod:`~roofline.tui.probe.measure_gpu`).
"""

from __future__ import annotations

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


def first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0]}" if text else type(err).__name__
