"""Accepted ranges of every number a person can enter (CLI flags, explorer fields, scenario files).

Beyond these a value is a typo or a unit slip, and some would make the model's arrays huge or its
SI conversions overflow; they are refused with the range in the message.
"""

from __future__ import annotations

import math

# field -> (lowest, highest, whole number?)
FIELD_LIMITS: dict[str, tuple[float, float, bool]] = {
    "batch": (1, 1 << 20, True),
    "prompt_tokens": (1, 10_000_000, True),
    "output_tokens": (1, 1_000_000, True),
    "tp": (1, 1024, True),
    "pp": (1, 1024, True),
    "shown_context": (1, 100_000_000, True),
    "kv_compression_ratio": (1.0, 1000.0, False),
    "mem_bw_override_gb_per_s": (0.01, 1_000_000.0, False),
    "peak_override_tflops": (0.001, 10_000_000.0, False),
    "capacity_override_gib": (0.001, 100_000.0, False),
    "price_per_device_hour": (0.0001, 1_000_000.0, False),
}
MAX_INPUT_CHARS = 16


def _number_text(value: float) -> str:
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
        raise ValueError(f"must be between {_number_text(low)} and {_number_text(high)}, got {_number_text(value)}")
    return int(value) if whole else float(value)


def parse_number(field: str, text: str) -> float | int:
    cleaned = text.strip().replace(",", "").replace("_", "")
    if len(cleaned) > MAX_INPUT_CHARS:
        raise ValueError(f"too long ({len(cleaned)} characters)")
    try:
        value = float(cleaned)
    except ValueError:
        raise ValueError(f"{text.strip()!r} is not a number") from None
    return check_number(field, value)
