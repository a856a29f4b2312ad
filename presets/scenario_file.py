"""Scenario files: the explorer's inputs as a small TOML document (read here, written with tomli-w).

```toml
[scenario]
hardware = "h100-sxm"
model = "llama-3.1-8b"
batch = 1
prompt_tokens = 1024
output_tokens = 256
```
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .loader import PresetError, PresetFileError, read_toml_file
from .toml_io import line_of_key

# key -> (python type, allowed range or choices)
SCENARIO_KEYS: dict[str, type] = {
    "hardware": str, "model": str, "weights": str, "activations": str, "kv": str,
    "batch": int, "prompt_tokens": int, "output_tokens": int, "tp": int, "pp": int,
    "flash_attention": bool, "kv_compression_ratio": float,
    "mem_bw_override_gb_per_s": float, "peak_override_tflops": float, "capacity_override_gib": float,
    "price_per_device_hour": float,
}


def read_scenario(path: Path, warnings: list[PresetError] | None = None) -> dict[str, Any]:
    """The ``[scenario]`` table, type-checked; :class:`PresetFileError` says what and where.

    Unknown keys are ignored and reported in ``warnings`` when a list is given.
    """
    data, text = read_toml_file(path)
    table = data.get("scenario")
    if not isinstance(table, dict):
        raise PresetFileError(PresetError(str(path), None, "scenario", "missing [scenario] table"))
    out: dict[str, Any] = {}
    for key, value in table.items():
        expected = SCENARIO_KEYS.get(key)
        where = line_of_key(text, f"scenario.{key}")
        if expected is None:
            if warnings is not None:
                warnings.append(PresetError(str(path), where, key, "unknown key; ignored"))
            continue
        ok = isinstance(value, expected) and not (expected is int and isinstance(value, bool))
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            value, ok = float(value), True
        if not ok:
            raise PresetFileError(PresetError(str(path), where, key, f"must be {expected.__name__}, got {value!r}"))
        if expected is float and not math.isfinite(value):
            raise PresetFileError(PresetError(str(path), where, key, f"must be finite, got {value!r}"))
        if expected in (int, float) and value <= 0:
            raise PresetFileError(PresetError(str(path), where, key, f"must be > 0, got {value!r}"))
        out[key] = value
    return out


def write_scenario(path: Path, values: dict[str, Any], *, overwrite: bool = False) -> None:
    """Write a scenario file; refuses to replace an existing file unless ``overwrite``."""
    import tomli_w

    clean = {k: v for k, v in values.items() if v is not None and k in SCENARIO_KEYS}
    if path.exists() and not overwrite:
        raise FileExistsError(str(path))
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(tomli_w.dumps({"scenario": clean}), encoding="utf-8")
    tmp.replace(path)
