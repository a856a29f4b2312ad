"""The presenter's screen (``roofline present --presenter``, a second terminal): the current slide's notes, the
next slide's title, the elapsed and per-slide time ticking, and the keys that move both screens.

It follows the audience screen through the talk's state file (tui/talk/sync.py) and moves it the same way; it
works alone too (rehearsing). No explorer here: a small App of its own.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Digits, Label, Static

from roofline.presets.deck_file import Deck
from roofline.tui.actions import bindings
from roofline.tui.talk.base import NAVIGATION, TalkScreen, clock_text
from roofline.tui.talk.sync import TalkLink


class PresenterScreen(TalkScreen):
    BINDINGS = [*NAVIGATION, *bindings("presenter")]

    def __init__(self, deck: Deck, link: TalkLink | None = None, clock=None) -> None:
        super().__init__(deck, len(deck.slides), link=link, clock=clock, id="presenter-screen")

    def compose(self) -> ComposeResult:
        yield Static(id="too-small", markup=False)
        with Vertical(id="presenter"):
            with Horizontal(id="presenter-clock"):
                yield Vertical(Label("talk"), Digits("00:00", id="clock-elapsed"), classes="clock-box")
                yield Vertical(Label("this slide"), Digits("00:00", id="clock-slide"), classes="clock-box")
                yield Vertical(Label(f"slide (of {self.count})"), Digits("1", id="clock-position"), classes="clock-box")
            yield Static(id="presenter-now", markup=False)
            yield Static(id="presenter-notes", markup=False)
            yield Static(id="presenter-next", markup=False)
            yield Static(id="presenter-footer", markup=False)

    def show_slide(self, position: int) -> None:
        self.position = max(0, min(position, self.count - 1))
        slide = self.deck.slides[self.position]
        self.query_one("#presenter-now", Static).update(Text(f"{self.position + 1}. {slide.title}"))
        notes = "\n".join([*(f"- {line}" for line in slide.lines), "", slide.notes or "(no notes)"])
        self.query_one("#presenter-notes", Static).update(Text(notes))
        following = self.deck.slides[self.position + 1].title if self.position + 1 < self.count else "(the end)"
        self.query_one("#presenter-next", Static).update(Text(f"next: {following}"))
        self.query_one("#clock-position", Digits).update(str(self.position + 1))
        self.update_clock()

    @property
    def next_title(self) -> str:
        return str(self.query_one("#presenter-next", Static).render()).removeprefix("next: ")

    def update_clock(self) -> None:
        self.query_one("#clock-elapsed", Digits).update(clock_text(self.elapsed_s))
        self.query_one("#clock-slide", Digits).update(clock_text(self.on_slide_s))
        linked = ("linked to the audience screen" if self.link is not None and self.link.error is None
                  else "alone (no link)")
        footer = f"{self.deck.title}   {linked}   space/left/Home/End/3 Enter move both screens   q quit"
        if self.typed:
            footer += f"   go to {self.typed}_"
        widget = self.query_one("#presenter-footer", Static)
        if str(widget.render()) != footer:
            widget.update(Text(footer))


class PresenterApp(App):
    """The presenter's terminal: one screen, no explorer."""

    TITLE = "roofline presenter"

    def __init__(self, deck: Deck, link: TalkLink | None = None, clock=None) -> None:
        super().__init__()
        self.presenter = PresenterScreen(deck, link=link, clock=clock)

    def on_mount(self) -> None:
        self.push_screen(self.presenter)
