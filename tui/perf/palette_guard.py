"""A command palette whose watchers survive its own widgets being gone (a safety guard, not a speed-up).

Textual's ``CommandPalette`` keeps searching in a worker; when the palette is dismissed while a search runs,
the worker can still set ``_list_visible`` or ``_show_busy`` after the palette's ``CommandList`` and
``LoadingIndicator`` have been removed, and the watchers' ``query_one`` raise
``NoMatches: No nodes match 'CommandList' on CommandPalette`` in the worker, which ends the app. The watchers
below do nothing once the widget they style is gone. They override private names of Textual
(``_watch__list_visible``, ``_watch__show_busy``, checked against textual/command.py of the verified
versions), so they apply only where :func:`roofline.tui.perf.switch.verified` says so, whatever
``ROOFLINE_SPEEDUPS`` says: without them the palette still works, only without this guard.
"""

from __future__ import annotations

import functools

from textual.command import CommandList
from textual.widgets import LoadingIndicator

from roofline.tui.perf import switch


class PaletteWatchersGuard:
    """Mixed in before a CommandPalette subclass: the list and busy watchers skip a palette taken apart."""

    def _watch__list_visible(self) -> None:
        if not self.query(CommandList) or not self.query("#--input"):
            return
        super()._watch__list_visible()

    async def _watch__show_busy(self) -> None:
        if not self.query(LoadingIndicator) or not self.query(CommandList):
            return
        await super()._watch__show_busy()


@functools.cache
def guarded_palette(base: type) -> type:
    """``base`` with the guard mixed in on verified Textual versions, ``base`` itself elsewhere."""
    if not switch.verified("textual"):
        return base
    return type(base.__name__, (PaletteWatchersGuard, base), {"__doc__": base.__doc__})
