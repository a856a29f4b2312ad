"""The one reader of numbers typed by people: command-line flags, the explorer's fields, list flags of ``plan``.

``1,000,000`` is a million: a comma is read only as a thousands separator, and only in well-formed groups of three
(``1,000`` ``12,345.5``). Anything else with a comma (``1,5``, ``989,5``, ``1,,2``, ``1,0000``) is refused, because
half the world writes ``1,5`` for one and a half and reading it as 15 is a silently wrong number.
Underscores follow Python's own rule for numbers (``1_000``). A value that is not finite (``nan``, ``inf``, a
400-digit number) is refused. The text quoted in an error is cut, so a 100,000-digit value does not come back whole.
"""

from __future__ import annotations

import math
import re

MAX_NUMBER_CHARS = 64  # longer than any number a person types (1,000,000,000,000.000001 is 24)
MAX_SHOWN_CHARS = 40  # how much of a refused text an error quotes
_GROUPED = re.compile(r"[+-]?[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?")


class NumberTextError(ValueError):
    """A text that is not a number as this tool reads numbers; the message is one line and quotes the text cut."""


def shown_text(text: str, limit: int = MAX_SHOWN_CHARS) -> str:
    """``text`` quoted for an error (``repr``: control characters escaped), cut to ``limit`` characters."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text):,} characters)"


def parse_number_text(text: str) -> float:
    """The finite number ``text`` states; :class:`NumberTextError` (a ``ValueError``) saying why it is not one."""
    stripped = text.strip()
    if len(stripped) > MAX_NUMBER_CHARS:
        raise NumberTextError(f"{shown_text(stripped)} is too long to be a number")
    if "," in stripped:
        if not _GROUPED.fullmatch(stripped):
            raise NumberTextError(f"{shown_text(stripped)} is not a number: a comma only separates thousands, in "
                                  "groups of three (1,000,000); write a decimal with a point (1.5)")
        stripped = stripped.replace(",", "")
    try:
        value = float(stripped)
    except ValueError:
        raise NumberTextError(f"{shown_text(stripped)} is not a number") from None
    if not math.isfinite(value):
        raise NumberTextError(f"{shown_text(stripped)} is not a finite number")
    return value
