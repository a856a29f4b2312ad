"""The user's preferences file: theme, default hardware and model, key overrides (no Textual here).

``preferences.toml`` in the platform's config folder (``platformdirs.user_config_dir("roofline")``, e.g.
``~/.config/roofline/preferences.toml``)::

    theme = "textual-light"
    hardware = "h200"
    model = "llama-3.1-70b"

    [keys]              # binding id -> keys (ids: the `?` help and README key table)
    "batch.double" = "plus,k"

The explorer remembers the theme chosen with the palette by writing this file (atomically). A broken file is
reported in one line and ignored; the explorer then starts with the defaults.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

PREFERENCES_ENV = "ROOFLINE_PREFERENCES"  # a path that replaces the default location (tests, several setups)
_ID_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789._-")
_KEY_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789_+,")


@dataclass(frozen=True, slots=True)
class Preferences:
    theme: str | None = None
    hardware: str | None = None
    model: str | None = None
    keys: dict[str, str] = field(default_factory=dict)


def preferences_path() -> Path:
    override = os.environ.get(PREFERENCES_ENV)
    if override:
        return Path(override)
    from platformdirs import user_config_dir

    return Path(user_config_dir("roofline")) / "preferences.toml"


def _text(value, key: str, path: Path, allowed: set[str] | None = None) -> str:
    if not isinstance(value, str) or not value or len(value) > 100:
        raise ValueError(f"{path}: {key}: must be a short string")
    if allowed is not None and not set(value.lower()) <= allowed:
        raise ValueError(f"{path}: {key}: {value[:40]!r} has characters an id or key name cannot have")
    return value


def load_preferences(path: Path | None = None) -> tuple[Preferences, str | None]:
    """(preferences, a one-line problem or None). A missing file is no problem; a broken one is ignored."""
    from roofline.presets.loader import PresetFileError
    from roofline.presets.toml_io import read_toml

    path = path or preferences_path()
    try:
        if not path.exists():
            return Preferences(), None
        data, _ = read_toml(path, what="preferences file")
        prefs = Preferences(
            theme=_text(data["theme"], "theme", path) if "theme" in data else None,
            hardware=_text(data["hardware"], "hardware", path, _ID_CHARS).lower() if "hardware" in data else None,
            model=_text(data["model"], "model", path, _ID_CHARS).lower() if "model" in data else None,
            keys={_text(k, "keys", path, _ID_CHARS): _text(v, f"keys.{k}", path, _KEY_CHARS)
                  for k, v in (data.get("keys") or {}).items()} if isinstance(data.get("keys", {}), dict) else {},
        )
    except (OSError, ValueError, PresetFileError, RecursionError) as err:
        return Preferences(), f"preferences ignored: {str(err)[:200]}"
    return prefs, None


def save_theme(theme: str, path: Path | None = None) -> str | None:
    """Remember the theme (other preferences kept); a one-line problem or None."""
    import tomli_w

    from roofline.presets.safe_files import atomic_write_text

    path = path or preferences_path()
    prefs, problem = load_preferences(path)
    if problem is not None and path.exists():
        return f"theme not remembered: {problem}"  # never overwrite a file we could not read
    prefs = replace(prefs, theme=theme)
    doc: dict = {k: v for k, v in (("theme", prefs.theme), ("hardware", prefs.hardware), ("model", prefs.model))
                 if v is not None}
    if prefs.keys:
        doc["keys"] = dict(prefs.keys)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, tomli_w.dumps(doc))
    except OSError as err:
        return f"theme not remembered: {path}: {err.strerror or err}"
    return None
