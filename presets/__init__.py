"""Preset data (TOML, one file per item) and the only code that reads it.

Hardware presets live in ``hardware/``, model presets in ``models/``, engine profiles in ``engines/`` (built-in
only; handed to the models on import, read on the first lookup: :mod:`.engine_profiles`); a user folder
(``$ROOFLINE_PRESETS`` or the platform's config folder + ``presets/``) with the same two
subfolders adds to them and overrides built-ins of the same id. Loading never raises for a
broken file: it is reported (file, line, key, what is wrong) and skipped.
"""

from . import engine_profiles
from .loader import (
    PresetCatalog,
    PresetError,
    builtin_presets_dir,
    load_catalog,
    load_hardware,
    load_model,
    resolve_model,
    user_presets_dir,
)

engine_profiles.install()

__all__ = [
    "PresetCatalog",
    "PresetError",
    "builtin_presets_dir",
    "load_catalog",
    "load_hardware",
    "load_model",
    "resolve_model",
    "user_presets_dir",
]
