"""The key footer, without Textual 8's leak on every rebuild.

Textual's Footer rebuilds its keys whenever the active bindings change (each modal screen that
opens or closes) and binds every new key to its ``compact`` reactive. Those bindings live in the
Footer's watcher list, which Textual prunes only when ``compact`` itself changes (never, here),
so every rebuild kept the previous keys alive: about 48 detached keys per open-and-close, and a
steady climb in memory over a session. Pruning the closed keys after each rebuild keeps it flat.
"""

from __future__ import annotations

from textual.widgets import Footer

_WATCHERS = "__watchers"  # where Textual keeps a reactable's watchers (textual/reactive.py)


class LeanFooter(Footer):
    async def recompose(self) -> None:
        await super().recompose()
        prune_closed_watchers(self)


def prune_closed_watchers(node) -> int:
    """Drop watchers whose owning widget is closing or detached; returns how many were dropped."""
    dropped = 0
    for watchers in getattr(node, _WATCHERS, {}).values():
        kept = [(owner, callback) for owner, callback in watchers if not owner._closing and owner.is_attached]
        dropped += len(watchers) - len(kept)
        watchers[:] = kept
    return dropped
