"""The key footer, without Textual 8's leak on every rebuild.

Textual's Footer rebuilds its keys whenever the active bindings change (each modal screen that
opens or closes) and binds every new key to its ``compact`` reactive. Those bindings live in the
Footer's watcher list, which Textual prunes only when ``compact`` itself changes (never, here),
so every rebuild kept the previous keys alive: about 48 detached keys per open-and-close, and a
steady climb in memory over a session. Pruning the closed keys after each rebuild keeps it flat.
It also skips rebuilds that would show the same keys (start-up announces several).
"""

from __future__ import annotations

from textual.widgets import Footer

_WATCHERS = "__watchers"  # where Textual keeps a reactable's watchers (textual/reactive.py)


class LeanFooter(Footer):
    """Rebuilds its keys only when the keys it would show change, and drops the old keys' bindings."""

    _shown: tuple | None = None

    def _signature(self) -> tuple:
        """What the footer would show: each displayed binding's key, description and whether it is enabled."""
        if not self._bindings_ready:
            return ()
        return tuple((binding.key, binding.description, enabled, tooltip)
                     for (_, binding, enabled, tooltip) in self.screen.active_bindings.values() if binding.show)

    async def recompose(self) -> None:
        # Focus moves and widget mounts announce "bindings changed" many times at start-up; each
        # rebuild re-lays-out and repaints the whole screen, so skip the ones that change nothing.
        signature = self._signature()
        if signature and signature == self._shown and self.children:
            return
        await super().recompose()
        self._shown = signature
        prune_closed_watchers(self)


def prune_closed_watchers(node) -> int:
    """Drop watchers whose owning widget is closing or detached; returns how many were dropped."""
    dropped = 0
    for watchers in getattr(node, _WATCHERS, {}).values():
        kept = [(owner, callback) for owner, callback in watchers if not owner._closing and owner.is_attached]
        dropped += len(watchers) - len(kept)
        watchers[:] = kept
    return dropped
