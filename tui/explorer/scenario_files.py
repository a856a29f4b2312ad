"""Saving and loading scenarios, and switching to the GPUs found on this machine: the explorer screen's file and
detection actions, as functions of the screen (they read its form and catalog and show a form on it).

Every failure (a folder without permission, a name the OS refuses, a file that is not a scenario) is a notification
naming the file; nothing here can take the explorer down.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from roofline.models.errors import ModelInputError
from roofline.presets.loader import PresetFileError
from roofline.tui.inputs.file_values import check_file_value, form_from_file_values, form_to_file_values
from roofline.tui.inputs.form import FormError, ScenarioForm, build_scenario
from roofline.tui.inputs.limits import FIELD_LIMITS
from roofline.tui.inputs.registry import FILE_KEY_TYPES

STARTUP_DETECT_TIMEOUT_S = 3.0  # per source; detection runs in a worker, the screen is up meanwhile


def _user_path(text: str) -> Path | str:
    """The path a person typed, or a one-line reason it is not one (``~nouser``, NUL)."""
    if "\0" in text:
        return "the name contains a NUL character"
    try:
        return Path(text).expanduser()
    except RuntimeError as err:  # ~nouser/...
        return str(err)


def ask_to_save(screen) -> None:
    """Ask for a path, confirm an overwrite, write the form as a scenario file."""
    from roofline.tui.explorer.dialogs import ConfirmScreen, PathScreen

    def chosen(text: str | None) -> None:
        if not text:
            return
        target = _user_path(text)
        if isinstance(target, str):
            screen.notify(f"could not save {text[:80]!r}: {target}", severity="error", markup=False)
            return
        try:
            exists = target.exists() or target.is_symlink()
        except OSError as err:
            screen.notify(f"could not save {str(target)[:200]}: {err.strerror or err}", severity="error",
                        markup=False)
            return
        if exists:
            screen.app.push_screen(ConfirmScreen(f"{target} exists. Overwrite it?"),
                                 lambda ok: _write(screen, target, overwrite=True) if ok else None)
        else:
            _write(screen, target, overwrite=False)

    screen.app.push_screen(PathScreen("Save scenario as (TOML)", "scenario.toml"), chosen)


def _write(screen, target: Path, *, overwrite: bool) -> None:
    from roofline.presets.scenario_file import write_scenario

    try:
        write_scenario(target, form_to_file_values(screen.form), overwrite=overwrite, keys=FILE_KEY_TYPES)
    except (OSError, ValueError, PresetFileError) as err:
        reason = getattr(err, "strerror", None) or str(err)
        screen.notify(f"could not save {str(target)[:200]}: {reason}", severity="error", markup=False)
        return
    screen.notify(f"scenario saved: {target}", markup=False)


def ask_to_load(screen) -> None:
    """Ask for a path and load the scenario file there."""
    from roofline.tui.explorer.dialogs import PathScreen

    def chosen(text: str | None) -> None:
        if not text:
            return
        path = _user_path(text)
        if isinstance(path, str):
            screen.notify(f"could not load {text[:80]!r}: {path}", severity="error", markup=False)
            return
        load_scenario_file(screen, path)

    screen.app.push_screen(PathScreen("Load scenario (TOML)", "scenario.toml"), chosen)


def load_scenario_file(screen, path: Path) -> bool:
    """Read a scenario file and show it, every field included; a bad file is a notification."""
    from roofline.presets.scenario_file import read_scenario

    warnings: list = []
    try:
        form = form_from_file_values(read_scenario(path, warnings, keys=FILE_KEY_TYPES, check=check_file_value))
    except PresetFileError as err:
        screen.notify(str(err), severity="error", markup=False)
        return False
    except FormError as err:
        screen.notify(f"{path}: {err.field}: {err.message}", severity="error", markup=False)
        return False
    except (OSError, ValueError, RecursionError) as err:
        screen.notify(f"could not load {str(path)[:200]}: {getattr(err, 'strerror', None) or err}",
                    severity="error", markup=False)
        return False
    screen.show_form(form)
    screen.notify(f"scenario loaded: {path}", markup=False)
    for warning in warnings:
        screen.notify(str(warning), severity="warning", markup=False)
    return True


def detect_local_hardware(screen) -> None:
    """Find local GPUs in a worker (bounded by a short timeout), then switch to them."""
    screen.run_worker(lambda: _detect(screen), thread=True, group="detect", exit_on_error=False)


def _detect(screen) -> None:
    from roofline.tui.probe.detect import detect_accelerators

    form_before = screen.form
    detection = detect_accelerators(timeout_s=STARTUP_DETECT_TIMEOUT_S, available_ids=list(screen.catalog.hardware))
    screen.app.call_from_thread(_apply_detection, screen, detection, form_before)


def _apply_detection(screen, detection, form_before: ScenarioForm) -> None:
    from roofline.tui.probe.match import format_gib

    if not detection.devices:
        return  # nothing found: the embedded default stays, without noise
    group = next((g for g in detection.groups if g.preset_id == detection.preset_id), detection.groups[0])
    found = f"{group.count} x {group.name} ({format_gib(group.memory_bytes)}) via {detection.source}"
    if detection.preset_id is None:
        screen.notify(f"found {found}: no preset ({detection.preset_reason})", severity="warning", timeout=10,
                    markup=False)
        return
    if screen.form != form_before:  # the user has already changed something: do not move under them
        screen.notify(f"found {found} (preset {detection.preset_id}); not switched, the scenario was edited",
                    markup=False)
        return
    tp = min(detection.preset_count, int(FIELD_LIMITS["tp"][1]))
    candidate = replace(screen.form, hardware_id=detection.preset_id, tp=tp)
    try:
        build_scenario(candidate, screen.catalog)
    except (FormError, ModelInputError) as err:
        candidate = replace(screen.form, hardware_id=detection.preset_id)
        note = f"TP {tp} does not fit this model ({err}), so TP 1"
    else:
        note = f"TP {tp}" if tp > 1 else "one device"
    screen.show_form(candidate)
    screen.notify(f"detected {found}: showing {detection.preset_id}, {note}", timeout=8, markup=False)
