"""Checking every number a person can enter (CLI flags, explorer fields, scenario files) against its range.

Beyond these a value is a typo or a unit slip, and some would make the model's arrays huge or its
SI conversions overflow; they are refused with the range in the message.
"""

from __future__ import annotations

import math

from roofline.tui.inputs.registry import NUMBER_INPUTS

# field -> (lowest, highest, whole number?), from the input registry
FIELD_LIMITS: dict[str, tuple[float, float, bool]] = {i.name: (i.low, i.high, i.whole) for i in NUMBER_INPUTS}
MAX_INPUT_CHARS = 16


def number_text(value: float) -> str:
    """1,048,576 rather than 1.04858e+06: whole numbers in full with thousands separators, others to 6 figures."""
    if value == int(value) and abs(value) < 1e18:
        return f"{int(value):,}"
    return f"{value:,.6g}"


def check_number(field: str, value: float) -> float | int:
    """The value if it is in range (as int for whole-number fields); ValueError saying why otherwise."""
    low, high, whole = FIELD_LIMITS[field]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"must be a finite number, got {value!r}")
    if whole and value != int(value):
        raise ValueError(f"must be a whole number, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"must be between {number_text(low)} and {number_text(high)}, got {number_text(value)}")
    return int(value) if whole else float(value)


def parse_number(field: str, text: str) -> float | int:
    """A field's text as its number: read as the CLI reads flags (presets/number_text.py: ``1,000`` is a thousand,
    ``1,5`` is refused), then checked against the field's range."""
    from roofline.presets.number_text import parse_number_text

    cleaned = text.strip()
    if len(cleaned) > MAX_INPUT_CHARS:
        raise ValueError(f"too long ({len(cleaned)} characters)")
    return check_number(field, parse_number_text(cleaned))
