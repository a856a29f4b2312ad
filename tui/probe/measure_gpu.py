"""A GPU as a measured device: PyTorch (CUDA, and ROCm through ``torch.cuda``) or CuPy, chosen by
:func:`open_gpu_backend`."""

from __future__ import annotations

from typing import Any

from roofline.tui.probe.measure_types import Backend, DeviceInfo, MeasureError, Operation, UnsupportedDtype
from roofline.tui.probe.measure_types import first_line as _first_line


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
