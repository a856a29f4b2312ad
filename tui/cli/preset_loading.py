"""A preset named by a command-line flag (``--hardware``, ``--model``, ``--draft``): loaded, or one line naming the
flag and the nearest valid ids. Used by ``main`` and ``plan`` alike, so neither imports the other."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


class UsageError(Exception):
    """A bad command-line value: reported as one line, exit status 2."""


def load_preset(flag: str, kind: str, ref: str, loader: Callable[..., Any]) -> Any:
    """``loader(ref)`` (a preset id or a config.json path) for ``flag``; warnings go to stderr; an unknown id or a
    broken file raises :class:`UsageError` naming the flag (and, for an id, the nearest ``kind`` ids)."""
    from roofline.presets.ids import match_id, short_name_matches, suggest_ids
    from roofline.presets.loader import PresetFileError, preset_ids

    warnings: list = []
    known = preset_ids(kind)
    several = short_name_matches(ref, known) if ref not in known else []
    if len(several) > 1 and match_id(ref, known) is None:  # h100: the SXM, PCIe or NVL part
        raise UsageError(f"{flag}: {ref!r} could mean several presets (did you mean {', '.join(several)}?)")
    ref = match_id(ref, known) or ref  # H100_SXM -> h100-sxm, mi300 -> mi300x; a path stays a path
    try:
        item = loader(ref, warnings=warnings)
        for warning in warnings:
            print(f"roofline: warning: {warning}", file=sys.stderr)
        return item
    except KeyError:
        near = suggest_ids(ref, preset_ids(kind))
        hint = f"did you mean {', '.join(near)}?" if near else f"see: roofline presets {kind}"
        raise UsageError(f"{flag}: unknown id {ref!r} ({hint})") from None
    except PresetFileError as err:
        raise UsageError(f"{flag}: {err}") from None
