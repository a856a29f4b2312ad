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
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .loader import MAX_KEY_WARNINGS, PresetError, PresetFileError, read_toml_file
from .safe_files import atomic_write_text, clip, clip_repr
from .toml_io import KeyLines

ScenarioKeys = Mapping[str, type]  # file key -> its TOML type: the caller's input registry (tui/inputs/registry.py)
_SCALARS = (str, int, float, bool)


def expected_type(keys: ScenarioKeys | None, key: str, value: Any) -> type | None:
    """The type a key must have: from ``keys`` (None when unknown), or with no ``keys`` any TOML scalar (its own
    type): presets/ reads the file's shape; which keys exist is the input registry's, one layer up."""
    if keys is not None:
        return keys.get(key)
    return type(value) if isinstance(value, _SCALARS) else str


def read_scenario(path: Path, warnings: list[PresetError] | None = None, *, keys: ScenarioKeys | None = None,
                  check: Callable[[str, Any], Any] | None = None) -> dict[str, Any]:
    """The ``[scenario]`` table, type-checked; :class:`PresetFileError` says what and where.

    Unknown keys are ignored and reported in ``warnings`` when a list is given: the first
    :data:`~.loader.MAX_KEY_WARNINGS` one by one, the rest counted in one more warning. Values quoted in an
    error are cut to 80 characters.
    """
    data, text = read_toml_file(path, what="scenario file")
    table = data.get("scenario")
    if not isinstance(table, dict):
        raise PresetFileError(PresetError(str(path), None, "scenario", "missing [scenario] table"))
    out: dict[str, Any] = {}
    lines = KeyLines(text)  # one pass over the text, whatever the number of keys
    unknown: list[str] = []
    for key, value in table.items():
        expected = expected_type(keys, key, value)
        if expected is None:
            unknown.append(key)
            continue
        where = lines.line(f"scenario.{key}")
        ok = isinstance(value, expected) and not (expected is int and isinstance(value, bool))
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            value, ok = float(value), True
        if not ok:
            raise PresetFileError(PresetError(str(path), where, key,
                                              f"must be {expected.__name__}, got {clip_repr(value)}"))
        if expected is float and not math.isfinite(value):
            raise PresetFileError(PresetError(str(path), where, key, f"must be finite, got {value!r}"))
        if check is not None:  # the caller's ranges (the input registry's), placed at the key's line
            try:
                value = check(key, value)
            except ValueError as err:
                raise PresetFileError(PresetError(str(path), where, key, clip(str(err), 200))) from None
        out[key] = value
    if warnings is not None:
        for key in unknown[:MAX_KEY_WARNINGS]:
            warnings.append(PresetError(str(path), lines.line(f"scenario.{key}"), clip(key), "unknown key; ignored"))
        rest = unknown[MAX_KEY_WARNINGS:]
        if rest:
            names = ", ".join(clip(key, 40) for key in rest[:3])
            warnings.append(PresetError(str(path), None, None,
                                        f"{len(rest):,} more unknown keys ignored ({names}, ...)"))
    return out


def write_scenario(path: Path, values: dict[str, Any], *, overwrite: bool = False, keys: ScenarioKeys | None = None
                   ) -> None:
    """Write a scenario file atomically (:func:`~.safe_files.atomic_write_text`); refuses to replace an
    existing file unless ``overwrite``. Every failure is an ``OSError`` with a one-line message naming the file
    (``FileExistsError``, or :class:`~.safe_files.SaveError` for a folder, ``/``, a NUL, a read-only folder)."""
    import tomli_w

    clean = {k: v for k, v in values.items() if v is not None and (keys is None or k in keys)}
    if not overwrite and "\0" not in str(path) and os.path.lexists(path):
        raise FileExistsError(f"{path} exists")
    atomic_write_text(path, tomli_w.dumps({"scenario": clean}))
