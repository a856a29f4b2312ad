"""A command's ``--scenario FILE``: the saved scenario a command starts from before its flags (``report``,
``plan``, the explorer, ``serve``). One module, so that ``main`` and ``plan`` read it the same way and neither
imports the other."""

from __future__ import annotations

import argparse
import sys

from roofline.tui.cli.preset_loading import UsageError
from roofline.tui.cli.terminal_text import one_line
from roofline.tui.inputs.registry import FILE_KEY_TYPES


def scenario_file_form(args: argparse.Namespace, base=None):
    """(the form of ``--scenario`` over ``base``, the file keys it set); (``base``, empty) without one. A bad file
    is one :class:`UsageError` naming the file, its line and key."""
    from roofline.presets.loader import PresetFileError
    from roofline.presets.safe_files import user_path
    from roofline.presets.scenario_file import read_scenario
    from roofline.tui.inputs.file_values import check_file_value, form_from_file_values
    from roofline.tui.inputs.form import FormError

    if not getattr(args, "scenario", None):
        return base, frozenset()
    try:  # ~nouser, a name over 255 bytes, a NUL: one line, not a traceback
        path = user_path(args.scenario, what="scenario file")
    except PresetFileError as err:
        raise UsageError(f"--scenario: {err}") from None
    warnings: list = []
    try:
        values = read_scenario(path, warnings, keys=FILE_KEY_TYPES, check=check_file_value)
        form = form_from_file_values(values, base)
    except PresetFileError as err:
        raise UsageError(f"--scenario: {err}") from None
    except FormError as err:
        raise UsageError(f"--scenario: {path}: {err.field}: {err.message}") from None
    for warning in warnings:
        print(one_line(f"roofline: warning: {warning}"), file=sys.stderr)
    return form, frozenset(values)


