"""Text from user files on its way to a terminal: escape sequences and control characters removed.

Deck titles and lines, preset names and file paths come from files anyone could have written; printed raw, an
``ESC [ ...`` inside one would move the cursor, recolour or retitle the user's terminal. Lines and tabs stay.
The cleaning itself lives in :mod:`roofline.presets.clean_text` (the loaders use it too); this is the sinks' name.
"""

from __future__ import annotations

from roofline.presets.clean_text import without_controls

__all__ = ["MAX_ERROR_CHARS", "has_terminal", "one_line", "without_controls"]

MAX_ERROR_CHARS = 400  # an error line quoting a huge value is cut to this


def one_line(message: object) -> str:
    """An error or warning for the terminal: no control characters, one line, at most :data:`MAX_ERROR_CHARS`."""
    text = " ".join(without_controls(str(message)).split())
    return text if len(text) <= MAX_ERROR_CHARS else f"{text[:MAX_ERROR_CHARS]}... ({len(text):,} characters)"


def has_terminal() -> bool:
    """Something to draw a full screen on (as the explorer checks): a terminal on stdin and stdout, or Textual's
    web driver (``roofline serve`` runs sessions over pipes on purpose)."""
    import os
    import sys

    return bool(os.environ.get("TEXTUAL_DRIVER")) or (sys.stdin.isatty() and sys.stdout.isatty())
