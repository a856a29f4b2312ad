"""What the audience screen and the presenter's screen share: the keys that move through the deck, the ticking
clock (an interval, not key presses), the link to the other screen, and the smallest usable size."""

from __future__ import annotations

import time
from collections.abc import Callable

from textual import events
from textual.screen import Screen

from roofline.presets.deck_file import Deck
from roofline.tui.actions import bindings
from roofline.tui.talk.styles import TALK_CSS
from roofline.tui.talk.sync import TalkLink, TalkState

MIN_COLUMNS, MIN_ROWS = 80, 24  # below this the stage says "enlarge the terminal" instead of drawing
COMPACT_COLUMNS, COMPACT_ROWS = 100, 30  # below this: plain titles, numbers on one row
TICK_S = 0.25  # the clock and the link are looked at four times a second

NAVIGATION = bindings("deck")  # next, back, first, last, a slide number and Enter (tui/actions.py)


def clock_text(seconds: float) -> str:
    """mm:ss, or h:mm:ss from an hour."""
    whole = max(0, int(seconds))
    hours, rest = divmod(whole, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60:02d}:{rest % 60:02d}"


def too_small_text(width: int, height: int) -> str:
    return f"enlarge the terminal: talk mode needs at least {MIN_COLUMNS}x{MIN_ROWS} (now {width}x{height})"


class TalkScreen(Screen):
    """A screen over a deck that moves with the keys and with the other screen (through ``link``)."""

    CSS = TALK_CSS

    def __init__(self, deck: Deck, count: int, link: TalkLink | None = None,
                 clock: Callable[[], float] | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.deck, self.count, self.link = deck, count, link
        self.clock = clock or (link.clock if link is not None else time.time)
        self.position = 0
        self.typed = ""
        now = self.clock()
        self.started_at_s = self.slide_at_s = now
        self.tick_s = TICK_S

    # ---- what subclasses draw --------------------------------------------------------------------------------
    def show_slide(self, position: int) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def update_clock(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    # ---- life ------------------------------------------------------------------------------------------------
    def on_mount(self) -> None:
        if self.link is not None and self.link.state is None:
            self._adopt(self.link.open(), draw=False)
        self.set_interval(self.tick_s, self.tick)
        self.apply_size(self.app.size.width, self.app.size.height)
        self.show_slide(self.position)  # a re-push (after the explorer) keeps the place

    def on_resize(self, event: events.Resize) -> None:
        self.apply_size(event.size.width, event.size.height)

    def apply_size(self, width: int, height: int) -> None:
        self.set_class(width < MIN_COLUMNS or height < MIN_ROWS, "-too-small")
        self.set_class(width < COMPACT_COLUMNS or height < COMPACT_ROWS, "-compact")
        self.query_one("#too-small").update(too_small_text(width, height))  # type: ignore[attr-defined]

    def tick(self) -> None:
        """Every TICK_S: follow the other screen if it moved, and redraw the clock."""
        if self.link is not None:
            newer = self.link.poll()
            if newer is not None:
                self._adopt(newer, draw=True)
        self.update_clock()

    def _adopt(self, state: TalkState, draw: bool) -> None:
        self.started_at_s, self.slide_at_s = state.started_at_s, state.slide_at_s
        position = min(state.position, self.count - 1)
        if draw:
            self.typed = ""
            self.show_slide(position)
        else:
            self.position = position

    def go(self, position: int) -> None:
        """Move here (clamped), tell the other screen, draw."""
        position = max(0, min(position, self.count - 1))
        if position != self.position:
            self.slide_at_s = self.clock()
            if self.link is not None:
                self.slide_at_s = self.link.publish(position).slide_at_s
        self.show_slide(position)

    @property
    def elapsed_s(self) -> float:
        return self.clock() - self.started_at_s

    @property
    def on_slide_s(self) -> float:
        return self.clock() - self.slide_at_s

    # ---- keys ------------------------------------------------------------------------------------------------
    def action_move(self, step: int) -> None:
        self.typed = ""
        self.go(self.position + step)

    def action_go_to(self, number: int) -> None:
        self.typed = ""
        self.go(self.count - 1 if number < 0 else number - 1)

    def action_digit(self, digit: str) -> None:
        self.typed = (self.typed + digit)[-3:]
        self.update_clock()

    def action_jump(self) -> None:
        if not self.typed:
            return
        number = int(self.typed)
        self.typed = ""
        if 1 <= number <= self.count:
            self.go(number - 1)
        else:
            self.notify(f"no slide {number} (1 to {self.count})", severity="warning")
            self.update_clock()
