"""Writing user hardware presets (calibrated or measured ceilings); reading stays in :mod:`.loader`."""

from __future__ import annotations

import datetime as _dt
import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roofline.models.hardware import Hardware

from .loader import PEAK_DTYPES, builtin_presets_dir, check_preset_id, load_hardware, user_presets_dir
from .safe_files import SaveError, atomic_write_text, clip
from .toml_io import read_toml


def _make_folder(folder: Path) -> None:
    """The user preset folder, created if missing; :class:`~.safe_files.SaveError` (one line) if it cannot be."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise SaveError(folder, clip(err.strerror or str(err))) from None


def save_calibrated_hardware(hardware_id: str, fractions: dict[str, float], note: str, *,
                             user_dir: Path | None = None, force: bool = False) -> Path:
    """Copy the hardware preset into the user folder with measured ``[achievable]`` fractions.

    The copy keeps the id, so it overrides the built-in from then on. An existing user file is
    only replaced with ``force``; the write is atomic (:func:`~.safe_files.atomic_write_text`).
    """
    import tomli_w

    folder = (user_presets_dir() if user_dir is None else user_dir) / "hardware"
    target = folder / f"{check_preset_id(hardware_id)}.toml"
    if os.path.lexists(target) and not force:
        raise FileExistsError(f"{target} exists (use --force to replace it)")
    source = target if os.path.lexists(target) else builtin_presets_dir() / "hardware" / f"{hardware_id}.toml"
    data, _ = read_toml(source, what="preset")
    achievable = dict(data.get("achievable", {}))
    stamp = f"calibrated on {socket.gethostname()} {_dt.date.today().isoformat()}: {note}"
    for key, value in fractions.items():
        achievable[key] = round(value, 4)
        achievable[key.replace("_fraction", "_source")] = stamp
    data["achievable"] = achievable
    _make_folder(folder)
    return atomic_write_text(target, tomli_w.dumps(data))


# ---- measured ceilings (``roofline measure --save``) ----------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class MeasuredCeilings:
    """One device's measured ceilings in SI units, and where and when they were measured."""

    device_name: str
    vendor: str
    kind: str  # "cpu", "cuda" or "rocm"
    host: str
    date: str  # ISO date
    mem_bw_bytes_per_s: float
    flops_per_s_by_dtype: Mapping[str, float]
    memory_bytes: float | None = None
    method: str = ""  # one line, e.g. "copy 1 GiB x 10, GEMM n=8192 best of 10"

    @property
    def stamp(self) -> str:
        return f"measured by roofline measure on {self.host} {self.date}"


def preset_id_part(text: str) -> str:
    """Lowercase ``[a-z0-9-]`` form of a name, for preset ids (file names)."""
    return re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9]+", "-", text.lower())).strip("-") or "device"


def measured_preset_id(host: str, kind: str, device_name: str, base_id: str | None = None) -> str:
    """``<preset>-measured-<host>``, ``<host>-cpu-measured`` or ``<device>-measured-<host>``."""
    host = preset_id_part(host)
    if base_id:
        return f"{base_id}-measured-{host}"
    if kind == "cpu":
        return f"{host}-cpu-measured"
    return f"{preset_id_part(device_name)}-measured-{host}"


def measured_preset_path(preset_id: str, user_dir: Path | None = None) -> Path:
    """Where a user hardware preset of this id lives; an id that is a path is refused (one line)."""
    return (user_presets_dir() if user_dir is None else user_dir) / "hardware" / f"{check_preset_id(preset_id)}.toml"


def spec_fractions(hardware: Hardware, ceilings: MeasuredCeilings) -> dict[str, float]:
    """Measured / spec (per device) for bandwidth (``"mem_bw"``) and each measured dtype with a spec peak."""
    fractions = {"mem_bw": ceilings.mem_bw_bytes_per_s / hardware.mem_bw_bytes_per_s}
    for dtype, flops_per_s in ceilings.flops_per_s_by_dtype.items():
        spec = hardware.dense_peak_flops_per_s.get(dtype)
        if spec:
            fractions[dtype] = flops_per_s / spec
    return fractions


def _si(value: float, unit: str) -> str:
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M")):
        if value >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def _significant(value: float, digits: int = 4) -> float:
    return float(f"{value:.{digits}g}")


def _fraction_entry(fraction: float, stamp: str) -> tuple[float, str]:
    """A loadable fraction in (0, 1] and its source; a measurement above spec is capped and says so."""
    if fraction > 1.0:
        return 1.0, f"{stamp}; above spec ({fraction:.3f} x), capped at 1"
    return max(_significant(fraction), 1e-4), stamp


def _matched_preset_data(ceilings: MeasuredCeilings, base_id: str, preset_id: str, user_dir: Path | None
                         ) -> dict[str, Any]:
    """The base preset, spec figures kept, with measured ``[achievable]`` fractions."""
    try:
        hardware = load_hardware(base_id, user_dir)
    except KeyError:
        raise ValueError(f"unknown hardware preset {base_id!r}") from None
    folder = (user_presets_dir() if user_dir is None else user_dir) / "hardware"
    source = folder / f"{base_id}.toml"
    data, _ = read_toml(source if os.path.lexists(source) else builtin_presets_dir() / "hardware" / f"{base_id}.toml",
                        what="preset")
    fractions = spec_fractions(hardware, ceilings)
    flops = ceilings.flops_per_s_by_dtype
    achievable = dict(data.get("achievable", {}))
    entries = [("mem_bw", "mem_bw", f"{_si(ceilings.mem_bw_bytes_per_s, 'B/s')} copy")]
    matmul_dtype = next((d for d in ("bf16", "fp16") if d in fractions), None)
    if matmul_dtype:
        entries.append(("matmul", matmul_dtype, f"{_si(flops[matmul_dtype], 'FLOP/s')} {matmul_dtype} matmul"))
    if "fp8" in fractions:
        entries.append(("fp8_matmul", "fp8", f"{_si(flops['fp8'], 'FLOP/s')} fp8 matmul"))
    if "fp32" in fractions:
        entries.append(("fp32_matmul", "fp32", f"{_si(flops['fp32'], 'FLOP/s')} fp32 matmul"))
    for key, fraction_key, what in entries:
        value, source_text = _fraction_entry(fractions[fraction_key], f"{ceilings.stamp}: {what}")
        achievable[f"{key}_fraction"] = value
        achievable[f"{key}_source"] = source_text + (f" ({ceilings.method})" if ceilings.method else "")
    measured = ", ".join(f"{d} {_si(f, 'FLOP/s')}" for d, f in flops.items())
    note = f"{ceilings.stamp}: copy {_si(ceilings.mem_bw_bytes_per_s, 'B/s')}; matmul {measured or 'none'}."
    data.update(id=preset_id, name=f"{data['name']} (measured on {ceilings.host})", achievable=achievable,
                notes=f"{data['notes']} {note}" if data.get("notes") else note)
    return data


def _new_preset_data(ceilings: MeasuredCeilings, preset_id: str) -> dict[str, Any]:
    """A preset whose spec figures are the measured ones (a CPU, or a GPU with no preset of its own)."""
    if not ceilings.memory_bytes:
        raise ValueError("the device's memory size is unknown")
    peaks = {d: _significant(ceilings.flops_per_s_by_dtype[d] / 1e12) for d in PEAK_DTYPES
             if ceilings.flops_per_s_by_dtype.get(d)}
    if not peaks:
        raise ValueError("no matmul was measured")
    stamp = ceilings.stamp + (f" ({ceilings.method})" if ceilings.method else "")
    achievable: dict[str, Any] = {"mem_bw_fraction": 1.0, "mem_bw_source": stamp}
    if "bf16" in peaks or "fp16" in peaks:
        achievable.update(matmul_fraction=1.0, matmul_source=stamp)
    if "fp8" in peaks:
        achievable.update(fp8_matmul_fraction=1.0, fp8_matmul_source=stamp)
    if "fp32" in peaks:  # a CPU computes in fp32: its measured GEMM rate is what expected should use
        achievable.update(fp32_matmul_fraction=1.0, fp32_matmul_source=stamp)
    what = "host memory copy bandwidth and BLAS GEMM" if ceilings.kind == "cpu" else "copy bandwidth and GEMM"
    return {
        "id": preset_id, "name": f"{ceilings.device_name} (measured on {ceilings.host})",
        "vendor": ceilings.vendor or "unknown", "year": int(ceilings.date[:4]),
        "category": "cpu" if ceilings.kind == "cpu" else "gpu",
        "memory_capacity_gib": round(ceilings.memory_bytes / 1024**3, 2),
        "mem_bw_gb_per_s": _significant(ceilings.mem_bw_bytes_per_s / 1e9), "source": stamp,
        "notes": f"Spec figures here are this machine's measured {what}, not a datasheet: bound and expected "
                 "use the measured ceilings.",
        "dense_peak_tflops": peaks, "achievable": achievable,
    }


def save_measured_hardware(ceilings: MeasuredCeilings, *, base_id: str | None = None, preset_id: str | None = None,
                           user_dir: Path | None = None, force: bool = False) -> Path:
    """Write a user hardware preset from measured ceilings; returns its path (the id is the file's stem).

    With ``base_id`` (the preset this device is): a copy of it, spec figures kept, ``[achievable]`` fractions =
    measured / spec. Without: a new preset whose spec figures are the measured ones, fractions 1.
    An existing file is only replaced with ``force``; the write is atomic (:func:`~.safe_files.atomic_write_text`).
    """
    import tomli_w

    preset_id = preset_id or measured_preset_id(ceilings.host, ceilings.kind, ceilings.device_name, base_id)
    target = measured_preset_path(preset_id, user_dir)
    if os.path.lexists(target) and not force:
        raise FileExistsError(f"{target} exists (use --force to replace it)")
    data = (_matched_preset_data(ceilings, base_id, preset_id, user_dir) if base_id
            else _new_preset_data(ceilings, preset_id))
    _make_folder(target.parent)
    return atomic_write_text(target, tomli_w.dumps(data))
