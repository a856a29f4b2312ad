"""Talk mode: a deck of live slides over the explorer (every number computed when the slide is shown).

The presenter is a screen pushed over the explorer: `e` reveals the explorer on the slide's scenario
for what-if questions, `Esc` there returns to the slide.
"""

from __future__ import annotations

import re
import time

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Digits, Label, Static

from roofline.presets.deck_file import Deck
from roofline.presets.loader import PresetCatalog
from roofline.tui.explorer.charts import (
    BatchSweepChart,
    ContextSweepChart,
    HistoryGrowthChart,
    MemoryChart,
    RooflineChart,
)
from roofline.tui.talk.deck import BuiltSlide, slide_view_text
from roofline.tui.views.chart_data import CHART_VIEWS, chart_args, history_for
from roofline.tui.views.slide_numbers import slide_number

CHART_TYPES = {"roofline": RooflineChart, "batch": BatchSweepChart, "context": ContextSweepChart,
               "memory": MemoryChart, "history": HistoryGrowthChart}

_DIGITS_ONLY = re.compile(r"[0-9][0-9.,]*")
PRESENT_HELP = ("space / right / PageDown next   left / PageUp back   Home / End first / last   "
                "number + Enter jump   e explorer (Esc back)   n notes   t time   q quit")


class PresentScreen(Screen):
    """One slide at a time: big title, up to five lines, the view, big numbers."""

    BINDINGS = [
        Binding("space,right,pagedown", "move(1)", "next", show=False),
        Binding("left,pageup", "move(-1)", "back", show=False),
        Binding("home", "go_to(1)", "first", show=False),
        Binding("end", "go_to(-1)", "last", show=False),
        Binding("enter", "jump", "jump", show=False),
        Binding("e", "explore", "explorer"),
        Binding("n", "toggle_notes", "notes"),
        Binding("t", "toggle_time", "time"),
        Binding("question_mark", "help", "keys"),
        Binding("q", "app.quit", "quit"),
        *[Binding(str(d), f"digit('{d}')", show=False) for d in range(10)],
    ]

    def __init__(self, deck: Deck, slides: list[BuiltSlide], catalog: PresetCatalog) -> None:
        super().__init__(id="present")
        self.deck, self.slides, self.catalog = deck, slides, catalog
        self.position = 0
        self.typed = ""
        self.started = time.monotonic()

    def compose(self) -> ComposeResult:
        with Vertical(id="slide"):
            yield Static(id="slide-title")
            yield Static(id="slide-lines")
            yield Horizontal(id="slide-numbers")
            with Vertical(id="slide-view"):
                for view, chart in CHART_TYPES.items():
                    yield chart(id=f"slide-chart-{view}")
                yield Static(id="slide-view-text")
            yield Static(id="slide-notes")
            yield Static(id="slide-footer")

    def on_mount(self) -> None:
        self.query_one("#slide-notes").display = False
        self.show_slide(self.position)  # a re-push after the explorer keeps the place

    @property
    def current(self) -> BuiltSlide:
        return self.slides[self.position]

    def show_slide(self, position: int) -> None:
        self.position = max(0, min(position, len(self.slides) - 1))
        built = self.current
        slide, r = built.slide, built.results
        self.query_one("#slide-title", Static).update(f"{slide.title}")
        self.query_one("#slide-lines", Static).update("\n".join(slide.lines))
        numbers = self.query_one("#slide-numbers", Horizontal)
        numbers.remove_children()
        for name in slide.numbers:
            label, value = slide_number(name, r, self.catalog)
            big = Digits(value, classes="number-value") if _DIGITS_ONLY.fullmatch(value) else (
                Label(value, classes="number-value"))
            numbers.mount(Vertical(Label(label, classes="number-label"), big, classes="slide-number"))
        for view in CHART_TYPES:
            chart = self.query_one(f"#slide-chart-{view}")
            chart.display = view == slide.view
            if view != slide.view:
                continue
            if view in CHART_VIEWS:
                chart.show(*chart_args(view, r))
            else:
                data = history_for(self.catalog, r)
                if data is not None:
                    chart.show(data)
        self.query_one("#slide-view-text", Static).update("\n".join(slide_view_text(built, self.catalog)))
        self.query_one("#slide-notes", Static).update(f"notes: {slide.notes}" if slide.notes else "notes: -")
        self._update_footer()

    def _update_footer(self) -> None:
        footer = f"{self.deck.title}   {self.position + 1} / {len(self.slides)}"
        if self.has_class("-show-time"):
            elapsed = int(time.monotonic() - self.started)
            footer += f"   {elapsed // 60:02d}:{elapsed % 60:02d}"
        if self.typed:
            footer += f"   go to {self.typed}_"
        self.query_one("#slide-footer", Static).update(footer)

    def action_move(self, step: int) -> None:
        self.typed = ""
        self.show_slide(self.position + step)

    def action_go_to(self, number: int) -> None:
        self.typed = ""
        self.show_slide(len(self.slides) - 1 if number < 0 else number - 1)

    def action_digit(self, digit: str) -> None:
        self.typed = (self.typed + digit)[-3:]
        self._update_footer()

    def action_jump(self) -> None:
        if self.typed:
            number = int(self.typed)
            self.typed = ""
            if 1 <= number <= len(self.slides):
                self.show_slide(number - 1)
            else:
                self.notify(f"no slide {number} (1 to {len(self.slides)})", severity="warning")
                self._update_footer()

    def action_toggle_notes(self) -> None:
        notes = self.query_one("#slide-notes")
        notes.display = not notes.display

    def action_toggle_time(self) -> None:
        self.toggle_class("-show-time")
        self._update_footer()

    def action_help(self) -> None:
        self.notify(PRESENT_HELP, title="talk mode", timeout=8)

    def action_explore(self) -> None:
        """Reveal the explorer on this slide's scenario; Esc there comes back here."""
        self.app.open_explorer_from_slide(self.current.form)  # type: ignore[attr-defined]
