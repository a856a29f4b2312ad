"""Text from user files on its way to a terminal: escape sequences and control characters removed.

Deck titles and lines, preset names and file paths come from files anyone could have written; printed raw, an
``ESC [ ...`` inside one would move the cursor, recolour or retitle the user's terminal. Lines and tabs stay.
"""

from __future__ import annotations

import unicodedata

from roofline.tui.probe.tool_run import _ESCAPE_SEQUENCE

_KEPT = frozenset("\n\t")
_CONTROL = frozenset({"Cc", "Cf", "Cs"})  # C0 and C1 controls (ESC, CSI, BEL, ...), format characters, surrogates


def without_controls(text: str) -> str:
    """``text`` without escape sequences and control characters; newlines and tabs kept."""
    text = _ESCAPE_SEQUENCE.sub("", text)
    return "".join(char for char in text if char in _KEPT or unicodedata.category(char) not in _CONTROL)
