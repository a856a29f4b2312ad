"""Text from outside (decks, presets, scenario and config files, tool output) without control characters.

A title, a name or a line read from a file anyone could have written, printed raw, is a command to the terminal:
``ESC ] 52 ; c ; ... BEL`` (OSC 52) writes the viewer's clipboard, OSC 0 retitles the window, OSC 8 plants a link,
``ESC [ ...`` (CSI) moves the cursor or recolours, and the 8-bit forms (``0x9b`` CSI, ``0x9d`` OSC) do the same on
terminals that read them. The loaders clean every string where it enters (:func:`clean_strings`, called by
:mod:`.toml_io` and the Markdown deck reader) and every sink cleans again (:func:`without_controls`), so one missed
path is not enough to reach a terminal.

Removed: whole escape sequences (CSI, OSC up to its BEL or ST, two-byte ESC sequences, 8-bit CSI), then every
character of Unicode category Cc (C0 and C1 controls: ESC, BEL, NUL, CR, DEL, 0x80-0x9f), Cf (format characters:
the bidi overrides U+202A-U+202E and isolates U+2066-U+2069 that reorder what a reader sees, zero-width
characters) and Cs (lone surrogates). Newlines and tabs stay.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

# CSI (ESC [ or 0x9b, parameters, intermediates, final byte), OSC (ESC ] or 0x9d up to BEL or ST), other ESC pairs
ESCAPE_SEQUENCE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]"
                             r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[@-Z\\-_]")
_KEPT = frozenset("\n\t")
_CONTROL = frozenset({"Cc", "Cf", "Cs"})


def without_controls(text: str) -> str:
    """``text`` without escape sequences and control or format characters; newlines and tabs kept."""
    if text.isprintable() and "\x1b" not in text:  # the common case: nothing to remove (isprintable: no Cc/Cf/Cs)
        return text
    text = ESCAPE_SEQUENCE.sub("", text)
    return "".join(char for char in text if char in _KEPT or unicodedata.category(char) not in _CONTROL)


def clean_strings(value: Any) -> Any:
    """``value`` (a parsed TOML or JSON document) with every string, keys included, passed through
    :func:`without_controls`; numbers, booleans and dates unchanged."""
    if isinstance(value, str):
        return without_controls(value)
    if isinstance(value, dict):
        return {clean_strings(key): clean_strings(item) for key, item in value.items()}
    if isinstance(value, list):
        return [clean_strings(item) for item in value]
    return value
