"""Parse what the GPU tools list (nvidia-smi CSV, rocm-smi JSON, amd-smi JSON) into :class:`DetectedDevice`.

Parsing is bounded and distrustful: at most :data:`MAX_DEVICES` devices, ASCII digits only and no more of them
than a real figure has, memory at most :data:`MAX_DEVICE_MEMORY_BYTES` per device, names made printable and cut
to :data:`MAX_NAME_CHARS`, JSON nested too deeply refused. Every refusal is a one-line ``ValueError`` (the caller
prefixes the tool's name); nothing else is raised.

Formats:

- ``nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader,nounits``: ``0, NVIDIA H100 80GB HBM3,
  81559`` (memory in MiB; ``[N/A]`` on unified-memory parts).
- ``rocm-smi --showproductname --showmeminfo vram --json``: ``{"card0": {"Card Series": ..., "VRAM Total Memory
  (B)": ...}, "system": {...}}`` (key case varies between ROCm 5 and 6; warnings may precede the JSON).
- ``amd-smi static --asic --vram --json`` (ROCm/amdsmi ``amdsmi_cli/amdsmi_commands.py``): a list of
  ``{"gpu": N, "asic": {"market_name": ...}, "vram": {"size": {"value": N, "unit": "MB"}}}``, wrapped as
  ``{"gpu_data": [...]}`` from ROCm 7; amd-smi's "MB" is MiB (``vram_size = total / (1024 * 1024)`` in
  ``amdsmi_get_gpu_vram_info``, ROCm/amdsmi ``src/amd_smi/amd_smi.cc``).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from roofline.presets.safe_files import clip, clip_repr
from roofline.tui.probe.tool_run import printable

MIB_BYTES = 1024**2
GIB_BYTES = 1024**3
# No box has more: 8 GPUs x 8 compute partitions (MI300X CPX mode) is 64; 256 leaves room and bounds the matching.
MAX_DEVICES = 256
# No device has as much: the largest in 2026 carry 288 GB. Anything above is a broken or hostile listing.
MAX_DEVICE_MEMORY_BYTES = 16 * 1024**4
MAX_NAME_CHARS = 200
_INDEX = re.compile(r"[0-9]{1,6}")
_MIB = re.compile(r"[0-9]{1,9}(\.[0-9]{1,6})?")
_BYTES = re.compile(r"[0-9]{1,20}")
_AMOUNT = re.compile(r"([0-9]{1,20}(?:\.[0-9]{1,6})?)\s*([A-Za-z]{1,3})")
_UNIT_BYTES = {"B": 1, "KB": 1024, "KIB": 1024, "MB": MIB_BYTES, "MIB": MIB_BYTES, "GB": GIB_BYTES, "GIB": GIB_BYTES}
_NOT_AVAILABLE = {"", "N/A", "NA", "[N/A]", "[NOT SUPPORTED]"}
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


def device_name(raw: str) -> str:
    """A name fit to print: no escape sequences or control characters, at most :data:`MAX_NAME_CHARS`."""
    name = printable(raw[: 4 * MAX_NAME_CHARS])
    return name if len(name) <= MAX_NAME_CHARS else name[: MAX_NAME_CHARS - 1] + "…"


def plausible_memory(memory_bytes: float | int, what: str) -> int | None:
    """``memory_bytes`` as a whole number; None for 0 (unknown); ``ValueError`` beyond one device's reach."""
    if not math.isfinite(memory_bytes) or memory_bytes < 0 or memory_bytes > MAX_DEVICE_MEMORY_BYTES:
        raise ValueError(f"{what} is not a plausible size for one device (0 to 16 TiB)")
    return int(memory_bytes) or None


def _check_count(count: int) -> None:
    if count > MAX_DEVICES:
        raise ValueError(f"listed more than {MAX_DEVICES} devices (no box has that many; the listing is not trusted)")


def _mib_to_bytes(text: str) -> int | None:
    text = text.strip()
    if text.upper() in _NOT_AVAILABLE or text.startswith("["):  # "[N/A]", "[Not Supported]" (unified memory)
        return None
    if not _MIB.fullmatch(text):
        raise ValueError(f"memory.total {clip(text)!r} is not a plausible number of MiB")
    return plausible_memory(float(text) * MIB_BYTES, f"memory.total {clip(text)!r} MiB")


def parse_nvidia_smi_csv(text: str) -> tuple[DetectedDevice, ...]:
    """Rows 'index, name, memory MiB' -> devices; ``ValueError`` names the first row that is not one."""
    devices = []
    for line in text.splitlines():
        if not line.strip():
            continue
        _check_count(len(devices) + 1)
        fields = [field.strip() for field in line.split(",")]
        if len(fields) < 3 or not _INDEX.fullmatch(fields[0]):
            raise ValueError(f"unexpected line {clip(printable(line))!r}")
        name = device_name(", ".join(fields[1:-1]))
        if not name:
            raise ValueError(f"no name in line {clip(printable(line))!r}")
        devices.append(DetectedDevice(int(fields[0]), name, _mib_to_bytes(fields[-1])))
    return tuple(devices)


def _json_value(text: str, opener: str) -> object:
    """The first JSON value in ``text`` starting at one of ``opener`` (tools may print warnings before it)."""
    starts = [found for found in (text.find(char) for char in opener) if found >= 0]
    if not starts:
        raise ValueError(f"no JSON in {clip(printable(text)) or 'empty output'!r}")
    try:
        data, _ = json.JSONDecoder().raw_decode(text[min(starts):])
    except json.JSONDecodeError as err:
        raise ValueError(f"bad JSON ({err.msg} at line {err.lineno})") from None
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    except ValueError as err:  # an integer of thousands of digits
        raise ValueError(f"bad JSON ({clip(str(err))})") from None
    return data


def _field(card: dict, key: str) -> str:
    """A card's text value by key, ignoring case ("Card series" in ROCm 5, "Card Series" in ROCm 6); "" for a
    value that is not text or a number (a nested list is never turned into text)."""
    for name, value in card.items():
        if isinstance(name, str) and name.strip().lower() == key.lower():
            if isinstance(value, str):
                return value[: 4 * MAX_NAME_CHARS].strip()
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return clip_repr(value)
            return ""
    return ""


def _amd_name(card: dict) -> str:
    series, model = _field(card, "Card Series"), _field(card, "Card Model")
    name = series or model
    for value in (series, model):  # a bare PCI id says more once named
        known = AMD_PCI_DEVICE_NAMES.get(value.lower())
        if known and known not in name:
            name = known if name.lower() == value.lower() else f"{name} [{known}]"
    return device_name(name)


def parse_rocm_smi_json(text: str) -> tuple[DetectedDevice, ...]:
    """rocm-smi JSON ({"card0": {"Card Series": ..., "VRAM Total Memory (B)": ...}, "system": {...}}) -> devices.

    ``ValueError`` when the text holds no such object.
    """
    data = _json_value(text, "{")
    if not isinstance(data, dict):
        raise ValueError("JSON is not an object")
    devices = []
    for key, card in data.items():
        found = re.fullmatch(r"card([0-9]{1,6})", str(key).strip().lower())
        if not found or not isinstance(card, dict):
            continue
        _check_count(len(devices) + 1)
        name = _amd_name(card)
        if not name:
            raise ValueError(f"{clip(printable(key))} has no 'Card Series'")
        memory = _field(card, "VRAM Total Memory (B)")
        memory_bytes = None
        if memory.isascii() and memory.isdigit():
            if not _BYTES.fullmatch(memory):
                raise ValueError(f"{key}: VRAM Total Memory (B) {clip(memory)!r} is not a plausible size")
            memory_bytes = plausible_memory(int(memory), f"{key}: VRAM Total Memory (B) {clip(memory)!r}")
        devices.append(DetectedDevice(int(found.group(1)), name, memory_bytes))
    return tuple(sorted(devices, key=lambda device: device.index))


def _amd_smi_size(size: object, where: str) -> int | None:
    """amd-smi's ``vram.size``: ``{"value": N, "unit": "MB"}`` (JSON), ``"N MB"`` (text), a bare N (MB), or N/A."""
    what = f"{where}: vram size {clip_repr(size)}"
    if isinstance(size, dict):
        value, unit = size.get("value"), size.get("unit", "MB")
    elif isinstance(size, str):
        if size.strip().upper() in _NOT_AVAILABLE:
            return None
        found = _AMOUNT.fullmatch(size.strip())
        if not found:
            raise ValueError(f"{what} is not a plausible size")
        value, unit = float(found.group(1)), found.group(2)
    else:
        value, unit = size, "MB"
    if isinstance(value, str) and value.strip().upper() in _NOT_AVAILABLE:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not isinstance(unit, str):
        raise ValueError(f"{what} is not a plausible size")
    scale = _UNIT_BYTES.get(unit.strip().upper())
    if scale is None:
        raise ValueError(f"{what}: unknown unit")
    if isinstance(value, int) and value.bit_length() > 64:
        raise ValueError(f"{what} is not a plausible size for one device (0 to 16 TiB)")
    return plausible_memory(value * scale, what)


def parse_amd_smi_json(text: str) -> tuple[DetectedDevice, ...]:
    """``amd-smi static --asic --vram --json`` (a list of GPUs, or ``{"gpu_data": [...]}``) -> devices."""
    data = _json_value(text, "[{")
    if isinstance(data, dict):
        data = data.get("gpu_data", [data] if "gpu" in data else None)
    if not isinstance(data, list):
        raise ValueError("no list of GPUs (expected [...] or {\"gpu_data\": [...]})")
    gpus = [entry for entry in data[: MAX_DEVICES + 1] if isinstance(entry, dict)]
    _check_count(len(gpus))
    devices = []
    for position, gpu in enumerate(gpus):
        raw_index = gpu.get("gpu", position)
        index = raw_index if isinstance(raw_index, int) and not isinstance(raw_index, bool) else position
        if not 0 <= index < 10**6:
            raise ValueError(f"GPU index {clip_repr(raw_index)} is not plausible")
        asic = gpu.get("asic") if isinstance(gpu.get("asic"), dict) else {}
        name = asic.get("market_name")
        name = name if isinstance(name, str) and name.strip().upper() not in _NOT_AVAILABLE else ""
        if not name:  # a bare PCI id still names the part
            device_id = asic.get("device_id")
            name = AMD_PCI_DEVICE_NAMES.get(device_id.lower(), "") if isinstance(device_id, str) else ""
        name = device_name(name)
        if not name:
            raise ValueError(f"GPU {index} has no asic.market_name")
        vram = gpu.get("vram") if isinstance(gpu.get("vram"), dict) else {}
        devices.append(DetectedDevice(index, name, _amd_smi_size(vram.get("size", "N/A"), f"GPU {index}")))
    return tuple(sorted(devices, key=lambda device: device.index))
