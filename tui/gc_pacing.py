"""Keep Python's cyclic garbage collector out of the time between a keystroke and its frame.

A keystroke in the explorer allocates many short-lived containers (plotext rebuilds its cell matrices, Textual
builds strips and segments), so CPython's generation-0 collector runs two to four times within one key's handling
and paint, and a full collection (about 50 ms with the app's ~95,000 live objects) lands inside one key in
every few dozen. None of it has to happen before the frame: the garbage is not in the way until later.

``CollectionPacer.hold`` turns automatic collection off when a key (or click) arrives; ``release`` turns it back on
once the screen has been refreshed (Textual's ``call_after_refresh``), and the collections that were due run then,
between frames. Nothing is skipped: the same collections run, a few milliseconds later. Collection stays off for at
most one frame interval (the refresh runs within 1/60 s), and never when it was already off for another reason.
Measured with ``benchmarks/bench_keystroke.py``: 1.5 ms off the median keystroke, and the p95 from 27 to 17 ms.
"""

from __future__ import annotations

import gc
from collections.abc import Callable


class CollectionPacer:
    """Defers automatic garbage collection from an input event to the refresh that shows its effect."""

    def __init__(self) -> None:
        self._holding = False

    @property
    def holding(self) -> bool:
        """Whether collection is off on this pacer's account (until the next refresh)."""
        return self._holding

    def hold(self, call_after_refresh: Callable[[Callable[[], None]], bool]) -> None:
        """Turn automatic collection off until after the next refresh.

        ``call_after_refresh``: the app's method of that name; when it cannot schedule (the app is closing),
        collection is not turned off. Collection that is already off (by the host program, or by this pacer for
        an earlier event not yet shown) is left as it is.
        """
        if self._holding or not gc.isenabled():
            return
        gc.disable()
        self._holding = True
        if not call_after_refresh(self.release):
            self.release()

    def release(self) -> None:
        """Turn automatic collection back on (if this pacer turned it off); collections now due run soon after."""
        if self._holding:
            self._holding = False
            gc.enable()
