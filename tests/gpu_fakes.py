"""Stand-ins for a GPU box, so tests of the GPU helpers never need (or see) a real GPU.

- :class:`FakeGpuBox` writes stand-in executables (``nvidia-smi``, ``rocm-smi``, ...) into a temporary bin folder
  and makes that folder the whole PATH; each one prints a recorded output and exits with a chosen status. It also
  hides any real NVML (``pynvml``) and the tools' fallback folders, and clears ``ROOFLINE_NO_DETECT``.
- :class:`FakeNvml` is a ``pynvml`` module object; :meth:`FakeGpuBox.use_nvml` installs one.

Use::

    @pytest.fixture
    def box(monkeypatch, tmp_path):
        return FakeGpuBox(monkeypatch, tmp_path)

    def test_x(box):
        box.tool("nvidia-smi", recorded("nvidia-smi-h100-sxm-x8.csv"), expect_args=NVIDIA_SMI_QUERY_ARGS)
"""

from __future__ import annotations

import shlex
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

RECORDED_DIR = Path(__file__).parent / "data" / "gpu"
NVIDIA_SMI_QUERY_ARGS = ("--query-gpu=index,name,memory.total", "--format=csv,noheader,nounits")
ROCM_SMI_QUERY_ARGS = ("--showproductname", "--showmeminfo", "--json")
# exit status of a stand-in that was called without an argument it expects
WRONG_ARGS_EXIT = 97


def recorded(name: str) -> Path:
    """A recorded tool output in tests/data/gpu/."""
    path = RECORDED_DIR / name
    assert path.is_file(), f"no recorded output {path}"
    return path


def _absolute(program: str) -> str:
    """A system program's absolute path, found before PATH is narrowed to the bin folder."""
    found = shutil.which(program, path="/usr/bin:/bin") or shutil.which(program)
    assert found, f"{program} is needed to run the stand-in executables"
    return found


class FakeGpuBox:
    """A temporary bin folder that is the whole PATH, with no real GPU tools or NVML reachable."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        self.monkeypatch = monkeypatch
        self.bin_dir = tmp_path / "fake-bin"
        self.bin_dir.mkdir()
        self._cat, self._sleep = _absolute("cat"), _absolute("sleep")
        monkeypatch.setenv("PATH", str(self.bin_dir))
        monkeypatch.delenv("ROOFLINE_NO_DETECT", raising=False)
        monkeypatch.setitem(sys.modules, "pynvml", None)  # `import pynvml` raises ImportError
        from roofline.tui.probe import detect

        monkeypatch.setattr(detect, "TOOL_FALLBACK_DIRS", {})

    def tool(self, name: str, output: Path | str | None = None, *, exit_code: int = 0, sleep_s: float = 0.0,
             expect_args: Sequence[str] = ()) -> Path:
        """Write a stand-in ``name``: checks that each of ``expect_args`` is among its arguments (else exits 97),
        sleeps ``sleep_s``, prints ``output`` (a recorded file's path, or literal text) and exits ``exit_code``."""
        lines = ["#!/bin/sh"]
        for wanted in expect_args:
            quoted = shlex.quote(wanted)
            lines.append(f'case " $* " in *" "{quoted}" "*) ;; *) echo "stand-in {name}: missing {quoted}" >&2; '
                         f"exit {WRONG_ARGS_EXIT};; esac")
        if sleep_s:
            lines.append(f"{self._sleep} {sleep_s:g}")
        if isinstance(output, Path):
            lines.append(f"{self._cat} {shlex.quote(str(output))}")
        elif output:
            text_file = self.bin_dir / f"{name}.out"
            text_file.write_text(output)
            lines.append(f"{self._cat} {shlex.quote(str(text_file))}")
        lines.append(f"exit {exit_code}")
        path = self.bin_dir / name
        path.write_text("\n".join(lines) + "\n")
        path.chmod(0o755)
        return path

    def use_nvml(self, nvml: FakeNvml) -> FakeNvml:
        """Make ``import pynvml`` return ``nvml``."""
        self.monkeypatch.setitem(sys.modules, "pynvml", nvml)
        return nvml


class FakeNVMLError(Exception):
    """Stands in for ``pynvml.NVMLError``."""


@dataclass
class _MemoryInfo:
    total: int
    free: int = 0
    used: int = 0


@dataclass
class FakeNvml:
    """A ``pynvml`` module: ``devices`` are (name, memory_bytes); ``init_error`` makes nvmlInit raise it;
    ``names_as_bytes`` mimics nvidia-ml-py before 11.515, whose nvmlDeviceGetName returned bytes."""

    devices: Sequence[tuple[str, int]] = ()
    init_error: Exception | None = None
    names_as_bytes: bool = False
    calls: list[str] = field(default_factory=list)
    NVMLError: type[Exception] = FakeNVMLError

    def nvmlInit(self) -> None:
        self.calls.append("init")
        if self.init_error is not None:
            raise self.init_error

    def nvmlShutdown(self) -> None:
        self.calls.append("shutdown")

    def nvmlDeviceGetCount(self) -> int:
        return len(self.devices)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        if not 0 <= index < len(self.devices):
            raise self.NVMLError("Invalid Argument")
        return index

    def nvmlDeviceGetName(self, handle: int) -> str | bytes:
        name = self.devices[handle][0]
        return name.encode() if self.names_as_bytes else name

    def nvmlDeviceGetMemoryInfo(self, handle: int) -> _MemoryInfo:
        return _MemoryInfo(total=self.devices[handle][1])
