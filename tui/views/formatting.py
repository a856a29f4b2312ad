"""Human-readable numbers for the edges (SI inside, readable units outside)."""

from __future__ import annotations

import math

_PREFIXES = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def si(value: float | None, unit: str = "", digits: int = 3) -> str:
    """Decimal SI prefix: si(3.35e12, 'B/s') -> '3.35 TB/s'."""
    if value is None:
        return "-"
    if value == 0 or not math.isfinite(value):
        return f"{value:g} {unit}".strip()
    for scale, prefix in _PREFIXES:
        if abs(value) >= scale:
            return f"{value / scale:.{digits}g} {prefix}{unit}".strip()
    return f"{value:.{digits}g} {unit}".strip()


def gib(value_bytes: float) -> str:
    return f"{value_bytes / 1024**3:,.1f} GiB"


def duration(seconds: float) -> str:
    """s, ms, us or ns, whichever keeps three figures: a small op reads 41.2 ns, not 0.0 us."""
    if seconds >= 1:
        return f"{seconds:,.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:,.2f} ms"
    if seconds >= 1e-6 or seconds == 0:
        return f"{seconds * 1e6:,.1f} us"
    return f"{seconds * 1e9:,.1f} ns"


def rate(value: float, unit: str = "tok/s") -> str:
    return f"{value:,.1f} {unit}" if value < 1000 else f"{value:,.0f} {unit}"


def flop_per_byte(value: float) -> str:
    """A ridge point's FLOP/B readable at any size: whole numbers from 100 up (295,
    1,979), three significant figures below (29.5, 1.02, 0.0456). A fixed number of decimals would show an
    accelerator given a tiny peak as "ridge 0"."""
    if not math.isfinite(value) or value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def relative_change(now: float, before: float | None) -> str:
    """``+12%`` for small changes, ``x71`` past +200 % (a percentage in the thousands reads badly)."""
    if before is None or before == 0:
        return ""
    ratio = now / before
    if ratio >= 3:
        return f"x{ratio:,.1f}" if ratio < 10 else f"x{ratio:,.0f}"
    return f"{100 * (ratio - 1):+.0f}%"


def fill_bar(share: float, width: int = 30) -> str:
    """``[####......]`` without the brackets: ``share`` of ``width`` cells filled (more than full stays full)."""
    filled = max(0, min(width, round(width * share)))
    return "#" * filled + "." * (width - filled)
