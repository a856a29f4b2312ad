"""The results side of the explorer: the scenario line, the headline numbers, the verdict, the memory bar, the
status line and the registry's views in tabs. Handed each state, it passes it to the widgets over the views and to
the view on show (a hidden view draws when it is shown); it says which view is shown (``ViewShown``)."""

from __future__ import annotations

from textual import events, on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.reactive import var
from textual.widget import Widget
from textual.widgets import Input, Static, TabbedContent, TabPane, Tabs

from roofline.presets.loader import PresetCatalog
from roofline.tui.explorer.summary_widgets import MemoryBar, ResultsHeadline, ResultsVerdict, ScenarioLine
from roofline.tui.explorer.view_widgets import view_widgets
from roofline.tui.messages import ViewReady, ViewShown
from roofline.tui.views.registry import VIEWS
from roofline.tui.views.state import ExplorerState

TABLE_KEYS = ("up", "down", "pageup", "pagedown", "home", "end", "left", "right")  # left/right scroll a wide table


class ResultsPane(Vertical):
    state: var[ExplorerState | None] = var(None, init=False)

    def __init__(self, catalog: PresetCatalog) -> None:
        super().__init__(id="results")
        self.catalog = catalog
        self.views: dict[str, Widget] = {}  # view id -> its widget, once mounted
        self._over: tuple[Widget, ...] = ()

    def compose(self) -> ComposeResult:
        yield ScenarioLine(id="scenario-line", markup=False)  # what is on screen, one line
        yield ResultsHeadline(id="headline")
        yield ResultsVerdict(id="verdict")
        yield MemoryBar(id="memory-bar")
        yield Static(id="status", markup=False)
        with TabbedContent(id="views", initial=VIEWS[0].id):
            for view in VIEWS:
                yield TabPane(view.tab_title, *view_widgets(view, self.catalog), id=view.id)

    def on_mount(self) -> None:
        self._over = tuple(self.query_one(t) for t in (ScenarioLine, ResultsHeadline, ResultsVerdict, MemoryBar))

    @property
    def tabs(self) -> TabbedContent:
        return self.query_one(TabbedContent)

    @property
    def active(self) -> str:
        return self.tabs.active

    def shown(self, view: str) -> Widget | None:
        """The view's widget when it is the one shown (and mounted)."""
        return self.views.get(view) if self.active == view else None

    def watch_state(self, state: ExplorerState | None) -> None:
        shown = self.views.get(self.active)
        for widget in (*self._over, *((shown,) if shown is not None else ())):
            widget.state = state

    @on(ViewReady)
    def _view_ready(self, message: ViewReady) -> None:
        """A view's widget is in the DOM: it draws the state if it is showing."""
        message.stop()
        self.views[message.view] = message.widget
        if self.active == message.view and self.state is not None:
            message.widget.state = self.state

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        event.stop()
        shown = self.views.get(self.active)
        if shown is not None and self.state is not None:
            shown.state = self.state
        self.post_message(ViewShown(self.active))

    def take_table_key(self, event: events.Key) -> None:
        """Arrows on a view with a table (Ops, Compare) move its cursor at once (no click or tab first), unless a
        field is being typed in."""
        table = getattr(self.views.get(self.active), "table", None)
        focused = self.screen.focused
        if (event.key not in TABLE_KEYS or table is None or isinstance(focused, Input | Tabs) or focused is table
                or (event.key in ("left", "right") and table.virtual_size.width <= table.size.width)):
            return
        table.focus()
        cursor_action = getattr(table, f"action_cursor_{event.key}", None) if event.key in ("left", "right") else None
        if cursor_action is not None:  # the first press scrolls too (a simulated key reached the table late)
            cursor_action()
        else:  # Ops scrolls by its own bindings, Compare's up and down too
            self.app.simulate_key(event.key)  # after the focus change: the table's own binding moves its cursor
        event.stop()
