"""What every live counter source gives: :class:`ActivitySample` readings, through the :class:`LiveSource` protocol.

The sources are :mod:`roofline.tui.probe.live_dcgmi` and :mod:`roofline.tui.probe.live_nvml`;
:func:`roofline.tui.probe.live.open_live_source` picks one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

CLOSED_REASON = "live source closed"


@dataclass(frozen=True)
class ActivitySample:
    """Whole-device activity over one sample interval.

    ``dram_active`` and ``tensor_active`` are fractions 0..1 as the counters report them (not clamped: a reading a
    hair above 1 is counter rounding). ``timestamp_s`` is on the monotonic clock, taken when the sample arrived.
    """

    dram_active: float
    tensor_active: float
    timestamp_s: float
    source: str
    gpu_index: int = 0


class SourceUnavailable(Exception):
    """A live source cannot start here; the message says why."""


class LiveSource(Protocol):
    """A started counter source. ``read`` blocks up to ``timeout_s``; ``failure`` is set once it has stopped."""

    name: str
    gpu_index: int
    interval_s: float

    @property
    def failure(self) -> str | None: ...

    def read(self, timeout_s: float) -> ActivitySample | None: ...

    def close(self) -> None: ...

    def __enter__(self) -> LiveSource: ...

    def __exit__(self, *exc_info: object) -> None: ...
