"""The base of a view that is more than one chart: a container handed the explorer's state, which it draws itself
from in ``draw``; it says when it is mounted (views the first frame does not show are mounted just after it)."""

from __future__ import annotations

from textual.containers import Vertical
from textual.reactive import var

from roofline.tui.messages import ViewReady
from roofline.tui.views.registry import View
from roofline.tui.views.state import ExplorerState


class ViewBody(Vertical):
    state: var[ExplorerState | None] = var(None, init=False)

    def __init__(self, view: View) -> None:
        super().__init__(id=f"{view.id}-body", classes="view-body")
        self.view = view

    def on_mount(self) -> None:
        self.post_message(ViewReady(self.view.id, self))

    def watch_state(self, state: ExplorerState | None) -> None:
        if state is not None:
            self.draw(state)

    def draw(self, state: ExplorerState) -> None:  # pragma: no cover - overridden
        raise NotImplementedError
