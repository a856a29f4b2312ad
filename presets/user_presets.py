"""Writing user hardware presets (calibrated ceilings); reading stays in :mod:`.loader`."""

from __future__ import annotations

import datetime as _dt
import socket
from pathlib import Path

from .loader import builtin_presets_dir, user_presets_dir
from .toml_io import read_toml


def save_calibrated_hardware(hardware_id: str, fractions: dict[str, float], note: str, *,
                             user_dir: Path | None = None, force: bool = False) -> Path:
    """Copy the hardware preset into the user folder with measured ``[achievable]`` fractions.

    The copy keeps the id, so it overrides the built-in from then on. An existing user file is
    only replaced with ``force``; the write is atomic (temporary file, then rename).
    """
    import tomli_w

    folder = (user_presets_dir() if user_dir is None else user_dir) / "hardware"
    target = folder / f"{hardware_id}.toml"
    source = target if target.is_file() else builtin_presets_dir() / "hardware" / f"{hardware_id}.toml"
    if target.exists() and not force:
        raise FileExistsError(f"{target} exists (use --force to replace it)")
    data, _ = read_toml(source)
    achievable = dict(data.get("achievable", {}))
    stamp = f"calibrated on {socket.gethostname()} {_dt.date.today().isoformat()}: {note}"
    for key, value in fractions.items():
        achievable[key] = round(value, 4)
        achievable[key.replace("_fraction", "_source")] = stamp
    data["achievable"] = achievable
    folder.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(tomli_w.dumps(data), encoding="utf-8")
    tmp.replace(target)
    return target
