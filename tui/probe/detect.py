"""Find the local accelerators and the hardware preset that describes them.

Sources, in order, until one finds devices: NVML (``pynvml`` from nvidia-ml-py, the optional ``[gpu]`` extra),
``nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader,nounits`` (memory in MiB), then
``rocm-smi --showproductname --showmeminfo vram --json`` on AMD boxes. Nothing here raises to the caller: a missing
tool, a driver error (nvidia-smi exits 9 with "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA
driver", 6 with "No devices were found"), a hang or garbage output each become a reason string. Every command runs
under a short timeout, so the explorer can call :func:`detect_accelerators` at start-up.

``ROOFLINE_NO_DETECT=1`` turns detection off (the test suite and snapshots rely on it).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import threading
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from roofline.tui.probe.match import format_gib, match_part

DEFAULT_TIMEOUT_S = 10.0
NO_DETECT_ENV = "ROOFLINE_NO_DETECT"
DISABLED_REASON = f"detection disabled ({NO_DETECT_ENV})"
MIB_BYTES = 1024**2
NVIDIA_SMI_ARGS = ("--query-gpu=index,name,memory.total", "--format=csv,noheader,nounits")
ROCM_SMI_ARGS = ("--showproductname", "--showmeminfo", "vram", "--json")
# where vendors install the tools when they are not on PATH (ROCm: /opt/rocm/bin); tests empty this
TOOL_FALLBACK_DIRS: dict[str, tuple[str, ...]] = {"rocm-smi": ("/opt/rocm/bin",)}
# how long a killed tool may take to go away before it is abandoned (a driver hang can block even SIGKILL)
KILL_GRACE_S = 1.0
MAX_REASON_CHARS = 240
# rocm-smi "Card Model"/"Card series" may be a bare PCI device id; names from the PCI ID database (pci.ids)
AMD_PCI_DEVICE_NAMES = {
    "0x738c": "Instinct MI100",
    "0x7408": "Instinct MI250X",
    "0x740c": "Instinct MI250X/MI250",
    "0x74a1": "Instinct MI300X",
    "0x74a5": "Instinct MI325X",
    "0x74b5": "Instinct MI300X VF",
}


@dataclass(frozen=True, slots=True)
class DetectedDevice:
    """One accelerator as the runtime sees it (a dual-die board is two)."""

    index: int
    name: str
    memory_bytes: int | None


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
    source: str | None  # "nvml", "nvidia-smi", "rocm-smi"; None when nothing was found
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


def _short(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MAX_REASON_CHARS else line[: MAX_REASON_CHARS - 3] + "..."


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


def _kill(process: subprocess.Popen) -> None:
    try:
        if hasattr(os, "killpg"):
            os.killpg(process.pid, signal.SIGKILL)  # the tool and anything it started
        else:
            process.kill()
    except OSError:
        pass


def run_tool(tool: str, args: Sequence[str], timeout_s: float) -> tuple[str | None, str | None]:
    """(stdout, None) when the tool ran and exited 0, else (None, reason). Never raises, never outlives the timeout
    by more than :data:`KILL_GRACE_S`."""
    path = find_tool(tool)
    if path is None:
        return None, f"{tool} not on PATH"
    try:
        process = subprocess.Popen([path, *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace",
                                   start_new_session=True)
    except OSError as err:
        return None, f"{tool} could not start: {_short(str(err))}"
    try:
        stdout, stderr = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill(process)
        try:
            process.communicate(timeout=KILL_GRACE_S)
        except subprocess.TimeoutExpired:
            for stream in (process.stdout, process.stderr):
                if stream is not None:
                    stream.close()
        return None, f"{tool} did not answer within {timeout_s:g} s"
    if process.returncode != 0:
        said = _short(stdout.strip() or stderr.strip()) or "no output"
        return None, f"{tool} failed (exit {process.returncode}): {said}"
    return stdout, None


def _mib_to_bytes(text: str) -> int | None:
    text = text.strip()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return int(float(text) * MIB_BYTES)
    if text.startswith("[") or text.upper() in {"N/A", ""}:  # "[N/A]", "[Not Supported]" (unified-memory parts)
        return None
    raise ValueError(f"memory.total {text!r} is not a number of MiB")


def parse_nvidia_smi_csv(text: str) -> tuple[DetectedDevice, ...]:
    """Rows 'index, name, memory MiB' -> devices; ``ValueError`` names the first row that is not one."""
    devices = []
    for line in text.splitlines():
        if not line.strip():
            continue
        fields = [field.strip() for field in line.split(",")]
        if len(fields) < 3 or not fields[0].isdigit():
            raise ValueError(f"unexpected line {_short(line)!r}")
        name = ", ".join(fields[1:-1])
        if not name:
            raise ValueError(f"no name in line {_short(line)!r}")
        devices.append(DetectedDevice(int(fields[0]), name, _mib_to_bytes(fields[-1])))
    return tuple(devices)


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


def _field(card: dict, key: str) -> str:
    """A card's value by key, ignoring case ("Card series" in ROCm 5, "Card Series" in ROCm 6)."""
    for name, value in card.items():
        if name.strip().lower() == key.lower():
            return str(value).strip()
    return ""


def _amd_name(card: dict) -> str:
    series, model = _field(card, "Card Series"), _field(card, "Card Model")
    name = series or model
    for value in (series, model):  # a bare PCI id says more once named
        known = AMD_PCI_DEVICE_NAMES.get(value.lower())
        if known and known not in name:
            name = known if name.lower() == value.lower() else f"{name} [{known}]"
    return name


def parse_rocm_smi_json(text: str) -> tuple[DetectedDevice, ...]:
    """rocm-smi JSON ({"card0": {"Card Series": ..., "VRAM Total Memory (B)": ...}, "system": {...}}) -> devices.

    rocm-smi may print warnings before the JSON, so parsing starts at the first '{'. ``ValueError`` when the text
    holds no such object.
    """
    start = text.find("{")
    if start < 0:
        raise ValueError(f"no JSON object in {_short(text) or 'empty output'!r}")
    try:
        data, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as err:
        raise ValueError(f"bad JSON ({err.msg} at line {err.lineno})") from None
    if not isinstance(data, dict):
        raise ValueError("JSON is not an object")
    devices = []
    for key, card in data.items():
        found = re.fullmatch(r"card(\d+)", str(key).strip().lower())
        if not found or not isinstance(card, dict):
            continue
        memory = _field(card, "VRAM Total Memory (B)")
        name = _amd_name(card)
        if not name:
            raise ValueError(f"{key} has no 'Card Series'")
        devices.append(DetectedDevice(int(found.group(1)), name, int(memory) if memory.isdigit() else None))
    return tuple(sorted(devices, key=lambda device: device.index))


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
        devices = []
        for index in range(int(pynvml.nvmlDeviceGetCount())):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            name = _text(pynvml.nvmlDeviceGetName(handle))  # bytes before nvidia-ml-py 11.515
            try:
                memory_bytes = int(pynvml.nvmlDeviceGetMemoryInfo(handle).total)
            except Exception:  # NotSupported on unified-memory parts
                memory_bytes = None
            devices.append(DetectedDevice(index, name, memory_bytes))
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
    return answer[0] if answer else SourceResult(problem=f"NVML did not answer within {timeout_s:g} s")


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


def detect_accelerators(*, use_nvml: bool = True, timeout_s: float = DEFAULT_TIMEOUT_S,
                        available_ids: Collection[str] | None = None) -> Detection:
    """Look for accelerators (NVML, then nvidia-smi, then rocm-smi) and pick a hardware preset for the box.

    ``timeout_s`` bounds each source (the explorer passes a short one at start-up); ``available_ids`` defaults to
    every hardware preset id, built-in and user.
    """
    if detection_disabled():
        return Detection((), None, None, DISABLED_REASON, (DISABLED_REASON,))
    sources: list[tuple[str, Callable[[float], SourceResult]]] = [
        ("nvidia-smi", read_nvidia_smi), ("rocm-smi", read_rocm_smi)]
    if use_nvml:
        sources.insert(0, ("nvml", read_nvml))
    failures: list[SourceResult] = []
    for source, read in sources:
        result = read(timeout_s)
        if result.devices:
            ids = _default_preset_ids() if available_ids is None else available_ids
            groups = group_devices(result.devices, ids)
            preset_id, reason = box_preset(groups)
            problems = tuple(failure.problem for failure in failures if failure.problem and not failure.absent)
            return Detection(result.devices, source, preset_id, reason, problems, groups)
        failures.append(result)
    problems = tuple(failure.problem for failure in failures if failure.problem)
    return Detection((), None, None, "no accelerators found: " + "; ".join(problems), problems)
