"""Find the local accelerators and the hardware preset that describes them.

Sources, in order, until one finds devices: NVML (``pynvml`` from nvidia-ml-py, the optional ``[gpu]`` extra),
``nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader,nounits`` (memory in MiB), then on AMD boxes
``amd-smi static --asic --vram --json`` (ROCm's current tool) and ``rocm-smi --showproductname --showmeminfo vram
--json`` (the one ROCm is retiring). Nothing here raises to the caller: a missing tool, a driver error (nvidia-smi
exits 9 with "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver", 6 with "No devices were
found"), a hang, garbage, a runaway listing or an absurd figure each become a one-line reason naming the tool.

``timeout_s`` is one budget for the whole detection: each source gets what the ones before it left, and a source
reached with nothing left is skipped with a reason. Each tool's output is capped at 1 MiB
(:data:`~.tool_run.MAX_TOOL_OUTPUT_BYTES`) and parsed with bounds (:mod:`~.gpu_listings`), so parsing and matching
cost at most a few milliseconds whatever a tool prints.

``ROOFLINE_NO_DETECT=1`` turns detection off (the test suite and snapshots rely on it).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from roofline.tui.probe.gpu_listings import (
    AMD_PCI_DEVICE_NAMES,
    MAX_DEVICE_MEMORY_BYTES,
    MAX_DEVICES,
    MIB_BYTES,
    DetectedDevice,
    device_name,
    parse_amd_smi_json,
    parse_nvidia_smi_csv,
    parse_rocm_smi_json,
    plausible_memory,
)
from roofline.tui.probe.match import format_gib, match_part
from roofline.tui.probe.tool_run import KILL_GRACE_S, MAX_REASON_CHARS, MAX_TOOL_OUTPUT_BYTES, run_capped
from roofline.tui.probe.tool_run import short as _short

__all__ = [
    "AMD_PCI_DEVICE_NAMES", "AMD_SMI_ARGS", "DEFAULT_TIMEOUT_S", "DISABLED_REASON", "KILL_GRACE_S",
    "MAX_DEVICES", "MAX_DEVICE_MEMORY_BYTES", "MAX_REASON_CHARS", "MAX_TOOL_OUTPUT_BYTES", "MIB_BYTES",
    "NO_DETECT_ENV", "NVIDIA_SMI_ARGS", "ROCM_SMI_ARGS", "SOURCES", "DetectedDevice", "Detection", "DeviceGroup",
    "SourceResult", "box_preset", "detect_accelerators", "detection_disabled", "find_tool", "group_devices",
    "parse_amd_smi_json", "parse_nvidia_smi_csv", "parse_rocm_smi_json", "read_amd_smi", "read_nvidia_smi",
    "read_nvml", "read_rocm_smi", "run_tool",
]

DEFAULT_TIMEOUT_S = 10.0
NO_DETECT_ENV = "ROOFLINE_NO_DETECT"
DISABLED_REASON = f"detection disabled ({NO_DETECT_ENV})"
NVIDIA_SMI_ARGS = ("--query-gpu=index,name,memory.total", "--format=csv,noheader,nounits")
AMD_SMI_ARGS = ("static", "--asic", "--vram", "--json")
ROCM_SMI_ARGS = ("--showproductname", "--showmeminfo", "vram", "--json")
# where vendors install the tools when they are not on PATH (ROCm: /opt/rocm/bin); tests empty this
TOOL_FALLBACK_DIRS: dict[str, tuple[str, ...]] = {"amd-smi": ("/opt/rocm/bin",), "rocm-smi": ("/opt/rocm/bin",)}
_now = time.monotonic  # the clock of the detection budget (tests replace it)


@dataclass(frozen=True, slots=True)
class DeviceGroup:
    """Devices of one type (same name and memory size) and their preset."""

    name: str
    memory_bytes: int | None
    count: int
    preset_id: str | None
    preset_reason: str


@dataclass(frozen=True, slots=True)
class Detection:
    """What :func:`detect_accelerators` found: devices, where from, the preset for the box and why."""

    devices: tuple[DetectedDevice, ...]
    source: str | None  # "nvml", "nvidia-smi", "amd-smi", "rocm-smi"; None when nothing was found
    preset_id: str | None
    preset_reason: str
    problems: tuple[str, ...]  # why sources found nothing (all of them when no device was found)
    groups: tuple[DeviceGroup, ...] = ()  # one per device type, in device order

    @property
    def count(self) -> int:
        return len(self.devices)

    @property
    def preset_count(self) -> int:
        """How many devices of the preset's type the box has (the --tp to suggest)."""
        return next((g.count for g in self.groups if g.preset_id == self.preset_id and g.preset_id), 0)


@dataclass(frozen=True, slots=True)
class SourceResult:
    """One source's answer: devices, or why none (``absent``: the source is not installed, which is normal)."""

    devices: tuple[DetectedDevice, ...] = ()
    problem: str | None = None
    absent: bool = False


def find_tool(tool: str) -> str | None:
    """The tool's path: PATH first, then the vendor's usual folder."""
    found = shutil.which(tool)
    if found:
        return found
    for folder in TOOL_FALLBACK_DIRS.get(tool, ()):
        candidate = Path(folder) / tool
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def run_tool(tool: str, args: Sequence[str], timeout_s: float) -> tuple[str | None, str | None]:
    """(stdout, None) when the tool ran and exited 0, else (None, reason); see :func:`.tool_run.run_capped`."""
    path = find_tool(tool)
    if path is None:
        return None, f"{tool} not on PATH"
    return run_capped(path, tool, args, timeout_s)


def _read_tool(tool: str, args: Sequence[str], parse, timeout_s: float) -> SourceResult:
    """Run a listing tool and parse its output; every failure becomes the result's problem."""
    stdout, reason = run_tool(tool, args, timeout_s)
    if stdout is None:
        return SourceResult(problem=reason, absent=reason == f"{tool} not on PATH")
    try:
        devices = parse(stdout)
    except ValueError as err:
        return SourceResult(problem=f"{tool} output not understood: {err}")
    return SourceResult(devices) if devices else SourceResult(problem=f"{tool} listed no devices")


def read_nvidia_smi(timeout_s: float = DEFAULT_TIMEOUT_S) -> SourceResult:
    """Devices from nvidia-smi's CSV query."""
    return _read_tool("nvidia-smi", NVIDIA_SMI_ARGS, parse_nvidia_smi_csv, timeout_s)


def read_amd_smi(timeout_s: float = DEFAULT_TIMEOUT_S) -> SourceResult:
    """Devices from amd-smi's static JSON (ASIC name and VRAM size of each GPU)."""
    return _read_tool("amd-smi", AMD_SMI_ARGS, parse_amd_smi_json, timeout_s)


def read_rocm_smi(timeout_s: float = DEFAULT_TIMEOUT_S) -> SourceResult:
    """Devices from rocm-smi's JSON (it can exit 0 on failure, so the parsed cards are the only signal)."""
    return _read_tool("rocm-smi", ROCM_SMI_ARGS, parse_rocm_smi_json, timeout_s)


def _text(value: object) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _nvml_devices(pynvml) -> SourceResult:
    try:
        pynvml.nvmlInit()
    except Exception as err:  # NVMLError_LibraryNotFound, _DriverNotLoaded, ...: any failure is a reason
        return SourceResult(problem=f"NVML could not start: {_short(str(err)) or type(err).__name__}")
    try:
        count = int(pynvml.nvmlDeviceGetCount())
        if count > MAX_DEVICES:
            raise ValueError(f"it counts {count:,} devices (more than {MAX_DEVICES}: not trusted)")
        devices = []
        for index in range(count):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            name = device_name(_text(pynvml.nvmlDeviceGetName(handle)))  # bytes before nvidia-ml-py 11.515
            try:
                total = pynvml.nvmlDeviceGetMemoryInfo(handle).total
            except Exception:  # NotSupported on unified-memory parts
                total = None
            memory_bytes = None if total is None else plausible_memory(int(total), f"device {index}'s memory")
            devices.append(DetectedDevice(index, name or f"GPU {index}", memory_bytes))
    except Exception as err:
        return SourceResult(problem=f"NVML failed: {_short(str(err)) or type(err).__name__}")
    finally:
        with contextlib.suppress(Exception):
            pynvml.nvmlShutdown()
    return SourceResult(tuple(devices)) if devices else SourceResult(problem="NVML found no devices")


def read_nvml(timeout_s: float = DEFAULT_TIMEOUT_S) -> SourceResult:
    """Devices from NVML; its calls run in a helper thread so a hung driver costs at most ``timeout_s``."""
    try:
        import pynvml
    except ImportError:
        return SourceResult(problem="NVML (nvidia-ml-py) not installed", absent=True)
    except Exception as err:
        return SourceResult(problem=f"NVML (nvidia-ml-py) could not be imported: {_short(str(err))}")
    answer: list[SourceResult] = []
    worker = threading.Thread(target=lambda: answer.append(_nvml_devices(pynvml)), name="roofline-nvml", daemon=True)
    worker.start()
    worker.join(timeout_s)
    return answer[0] if answer else SourceResult(problem=f"NVML did not answer within {timeout_s:.3g} s")


def group_devices(devices: Sequence[DetectedDevice], available_ids: Collection[str]) -> tuple[DeviceGroup, ...]:
    """One group per (name, memory size), in order of first appearance, each with its preset match."""
    counts = Counter((device.name, device.memory_bytes) for device in devices)
    groups = []
    for name, memory_bytes in dict.fromkeys((device.name, device.memory_bytes) for device in devices):
        match = match_part(name, memory_bytes, available_ids)
        groups.append(DeviceGroup(name, memory_bytes, counts[name, memory_bytes], match.preset_id, match.reason))
    return tuple(groups)


def box_preset(groups: Sequence[DeviceGroup]) -> tuple[str | None, str]:
    """The preset for the whole box: its only type's, or on a mixed box the most common type's (ties: device 0's)."""
    if not groups:
        return None, "no devices"
    chosen = max(groups, key=lambda group: group.count)  # max keeps the first of equals: device 0's type
    if len(groups) == 1:
        return chosen.preset_id, chosen.preset_reason
    mix = ", ".join(f"{group.count} x {group.name} ({format_gib(group.memory_bytes)})" for group in groups)
    tied = sum(group.count == chosen.count for group in groups) > 1
    which = "device 0's type (no type is the most common)" if tied else "the most common type"
    return chosen.preset_id, f"mixed box: {mix}; using {which}: {chosen.preset_reason}"


def detection_disabled() -> bool:
    """Whether ``ROOFLINE_NO_DETECT`` is set to anything but '' or '0'."""
    return os.environ.get(NO_DETECT_ENV, "").strip() not in {"", "0"}


def _default_preset_ids() -> list[str]:
    from roofline.presets.loader import preset_ids

    return preset_ids("hardware")


SOURCES: tuple[tuple[str, Callable[[float], SourceResult]], ...] = (
    ("nvml", read_nvml), ("nvidia-smi", read_nvidia_smi), ("amd-smi", read_amd_smi), ("rocm-smi", read_rocm_smi))


def _preset_ids_or_builtin() -> list[str]:
    """Every hardware preset id; the built-in ones alone when the user folder cannot be read (detection is not the
    place to fail on it: ``roofline presets`` says why)."""
    try:
        return _default_preset_ids()
    except (OSError, ValueError):
        from roofline.presets.loader import builtin_presets_dir

        return sorted(path.stem for path in (builtin_presets_dir() / "hardware").glob("*.toml"))


def detect_accelerators(*, use_nvml: bool = True, timeout_s: float = DEFAULT_TIMEOUT_S,
                        available_ids: Collection[str] | None = None) -> Detection:
    """Look for accelerators (NVML, nvidia-smi, amd-smi, rocm-smi: the first that finds any) and pick a hardware
    preset for the box.

    ``timeout_s`` is the budget for all sources together (the explorer passes a short one at start-up);
    ``available_ids`` defaults to every hardware preset id, built-in and user.
    """
    if detection_disabled():
        return Detection((), None, None, DISABLED_REASON, (DISABLED_REASON,))
    deadline = _now() + timeout_s
    failures: list[SourceResult] = []
    for source, read in SOURCES:
        if source == "nvml" and not use_nvml:
            continue
        left_s = deadline - _now()
        if left_s <= 0:
            failures.append(SourceResult(problem=f"{source} skipped: the {timeout_s:g} s detection budget was spent"))
            continue
        result = read(left_s)
        if result.devices:
            ids = _preset_ids_or_builtin() if available_ids is None else available_ids
            groups = group_devices(result.devices, ids)
            preset_id, reason = box_preset(groups)
            problems = tuple(failure.problem for failure in failures if failure.problem and not failure.absent)
            return Detection(result.devices, source, preset_id, reason, problems, groups)
        failures.append(result)
    problems = tuple(failure.problem for failure in failures if failure.problem)
    return Detection((), None, None, "no accelerators found: " + "; ".join(problems), problems)
