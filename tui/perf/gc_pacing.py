"""Keep Python's cyclic garbage collector out of the time between a keystroke and its frame.

A keystroke in the explorer allocates many short-lived containers (plotext rebuilds its cell matrices, Textual
builds strips and segments), so CPython's generation-0 collector runs two to four times within one key's handling
and paint, and a full collection (about 50 ms with the app's ~95,000 live objects) lands inside one key in
every few dozen. None of it has to happen before the frame: the garbage is not in the way until later.

``CollectionPacer.hold`` turns automatic collection off when a key or click arrives (and when the explorer starts
recomputing). It comes back on, and the collections that were due run, just after the explorer's next frame has
been composed and written (``frame_painted``, called by the explorer screen's compositor), or after
``MAX_HOLD_S`` when no explorer frame comes (a key that changes nothing, a dialog on top). Nothing is skipped:
the same collections run a few milliseconds later. Collection that was already off for another reason is left
alone, and nothing is held outside a running event loop.
Measured with ``benchmarks/bench_keystroke.py``: 1.5 ms off the median keystroke, and the p95 from 27 to 17 ms.
"""

from __future__ import annotations

import asyncio
import gc

MAX_HOLD_S = 0.25  # the longest collection stays off waiting for a frame


class CollectionPacer:
    """Defers automatic garbage collection from an input event to the frame that shows its effect."""

    def __init__(self) -> None:
        self._expiry: asyncio.TimerHandle | None = None  # while holding: the release if no frame comes

    @property
    def holding(self) -> bool:
        """Whether collection is off on this pacer's account."""
        return self._expiry is not None

    def hold(self) -> None:
        """Turn automatic collection off until the next frame, or ``MAX_HOLD_S`` at most.

        Nothing happens when this pacer already holds, when collection is already off (by the host program), or
        outside a running event loop (an app that is not running draws no frame).
        """
        if self._expiry is not None or not gc.isenabled():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        gc.disable()
        self._expiry = loop.call_later(MAX_HOLD_S, self.release)

    def frame_painted(self) -> None:
        """A frame has been composed: collection comes back on the event loop's next turn, once it is written."""
        if self._expiry is not None:
            asyncio.get_running_loop().call_soon(self.release)

    def release(self) -> None:
        """Turn automatic collection back on (if this pacer turned it off); collections now due run soon after."""
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None
            gc.enable()
