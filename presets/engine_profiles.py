"""The engine profiles (presets/engines/*.toml, schema in :mod:`.engine_file`): listed, loaded and handed to the models.

The models look profiles up by id (:func:`roofline.models.engines.engine_profile`) in a registry this module fills
through :func:`install` (called when ``roofline.presets`` is imported; the files are read on the first lookup). The
built-in folder only: a user folder does not add engines yet.
"""

from __future__ import annotations

from pathlib import Path

from roofline.models import engines as model_engines
from roofline.models.engines import Engine

from .errors import PresetError, PresetFileError
from .loader import builtin_presets_dir, load_preset_file
from .safe_files import FileRefusedError, list_folder


def builtin_engines_dir() -> Path:
    return builtin_presets_dir() / "engines"


def load_engine_profiles(folder: Path | None = None) -> tuple[dict[str, Engine], list[PresetError]]:
    """Every engine file of ``folder`` (default the built-in one) by id, and one error per broken file (skipped)."""
    folder = builtin_engines_dir() if folder is None else folder
    found: dict[str, Engine] = {}
    errors: list[PresetError] = []
    try:
        paths = list_folder(folder, ".toml", what="engine folder")
    except FileRefusedError as err:
        return found, [err.error]
    for path in paths:
        try:
            engine = load_preset_file(path, "engines")
        except PresetFileError as err:
            errors.append(err.error)
            continue
        found[engine.id] = engine
    return found, errors


_errors: list[PresetError] = []


def _builtin_profiles() -> dict[str, Engine]:
    found, errors = load_engine_profiles()
    _errors[:] = errors
    return found


def install() -> None:
    """Hand the built-in profiles to the models (read on the first lookup, not now)."""
    model_engines.use_profiles(_builtin_profiles)


def engine_errors() -> list[PresetError]:
    """The built-in engine files that were refused (empty when every file loads)."""
    model_engines.profiles()
    return list(_errors)


def engine_ids() -> tuple[str, ...]:
    """Every engine id with a profile (the choices of ``--engine`` and of a scenario file's ``engine``)."""
    return model_engines.engine_ids()


def engine_profile(engine_id: str) -> Engine:
    """The profile of ``engine_id``; a one-line ModelInputError naming ``engine``, with close ids, if it has none."""
    return model_engines.engine_profile(engine_id)


def check_engine(name: object, where: str = "") -> str:
    """``name`` if it is an engine id with a profile (``unknown`` among them); else ValueError with one line: the
    name, the closest ids, and ``where`` (a file and row, when given) in front."""
    if isinstance(name, str) and name in model_engines.profiles():
        return name
    prefix = f"{where}: " if where else ""
    raise ValueError(prefix + model_engines.unknown_engine_message(name))
