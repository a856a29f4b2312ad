"""Talk mode's audience screen: a deck of live slides over the explorer (every number computed when shown).

The stage: a big title (tui/talk/bigtext.py) where it fits, up to five lines, the slide's numbers large
(Textual's ``Digits``), and the slide's chart filling the rest; from 80x24 up, and "enlarge the terminal"
below. The speaker's notes are not on this screen (the presenter's screen has them; ``n`` shows them here for a
talk given from one screen). The explorer's ``+ - ] [`` turn the slide's batch and prompt live, ``r`` restores
the slide; ``e`` reveals the explorer on the slide's scenario, ``Esc`` there returns.
"""

from __future__ import annotations

import re

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Digits, Label, Static

from roofline.presets.deck_file import Deck
from roofline.presets.loader import PresetCatalog
from roofline.tui.actions import bindings, talk_help_rows
from roofline.tui.messages import OpenExplorer
from roofline.tui.talk.base import NAVIGATION, TalkScreen, clock_text
from roofline.tui.talk.bigtext import big_title
from roofline.tui.talk.deck import (
    BuiltSlide,
    DeckError,
    knob_summary,
    next_device,
    rebuild_slide,
    slide_numbers,
    slide_state,
    slide_view_text,
    turned,
)
from roofline.tui.talk.sync import TalkLink
from roofline.tui.views.registry import CHART_VIEWS
from roofline.tui.widgets.plot import PlotWidget

_DIGITS_ONLY = re.compile(r"[0-9][0-9.,]*")
PRESENT_HELP = "\n".join(["talk mode keys", *(f"  {keys:<25}{does}" for keys, does in talk_help_rows()),
                          "presenter's screen: roofline present --presenter (another terminal)"])


def big_title_lines(width: int, height: int) -> int:
    """How many big-text lines a title may take at this size: 0 (plain bold) below 100x30, 1 up to 40 rows, 2
    from there."""
    if width < 100 or height < 30:
        return 0
    return 1 if height < 40 else 2


class PresentScreen(TalkScreen):
    """One slide at a time: big title, up to five lines, big numbers, the chart; live knobs."""

    BINDINGS = [*NAVIGATION, *bindings("talk")]

    def __init__(self, deck: Deck, slides: list[BuiltSlide], catalog: PresetCatalog,
                 link: TalkLink | None = None, clock=None) -> None:
        super().__init__(deck, len(slides), link=link, clock=clock, id="present")
        self.slides, self.catalog = slides, catalog
        self.shown: BuiltSlide = slides[0]  # the current slide, its knobs turned
        self.title_text = ""

    def compose(self) -> ComposeResult:
        yield Static(id="too-small", markup=False)
        with Vertical(id="slide"):
            yield Static(id="slide-title", markup=False)
            yield Static(id="slide-rule", markup=False)
            yield Static(id="slide-lines", markup=False)
            yield Horizontal(id="slide-numbers")
            with Vertical(id="slide-view"):
                for view in CHART_VIEWS:
                    if view.on_slides:
                        yield PlotWidget(view.plot, id=f"slide-chart-{view.id}", classes="slide-chart")
                yield Static(id="slide-view-text", markup=False)
                yield Static(Text(PRESENT_HELP), id="slide-help")
            yield Static(id="slide-notes", markup=False)
            yield Static(id="slide-footer", markup=False)

    @property
    def current(self) -> BuiltSlide:
        """The slide shown, with its live knobs (``e`` opens the explorer on this)."""
        return self.shown

    # ---- drawing ---------------------------------------------------------------------------------------------
    def apply_size(self, width: int, height: int) -> None:
        super().apply_size(width, height)
        if self.is_mounted and self.title_text:
            self._draw_title()
            self._draw_numbers()

    def show_slide(self, position: int) -> None:
        self.position = max(0, min(position, len(self.slides) - 1))
        self.shown = self.slides[self.position]
        self._draw()

    def _draw(self) -> None:
        built = self.shown
        slide = built.slide
        self.title_text = slide.title
        self._draw_title()
        self.query_one("#slide-lines", Static).update(Text("\n".join(slide.lines)))
        self._draw_numbers()
        self._draw_view()
        self.query_one("#slide-notes", Static).update(Text(f"notes: {slide.notes}" if slide.notes else "notes: -"))
        self.update_clock()

    def _draw_title(self) -> None:
        width = max(0, self.size.width - 4)
        rows = big_title(self.title_text, width, big_title_lines(self.app.size.width, self.app.size.height))
        title = self.query_one("#slide-title", Static)
        title.update(Text("\n".join(rows)) if rows else Text(self.title_text))
        title.set_class(rows is not None, "-big")
        self.query_one("#slide-rule", Static).update("\u2501" * width)

    def _draw_numbers(self) -> None:
        numbers = self.query_one("#slide-numbers", Horizontal)
        numbers.remove_children()
        compact = self.has_class("-compact")
        boxes = []
        for label, value in slide_numbers(self.shown, self.catalog):
            if compact:
                line = Text.assemble((f"{label}: ", "dim"), (value, "bold"))
                boxes.append(Vertical(Label(line, classes="number-value"), classes="slide-number"))
                continue
            big = Digits(value, classes="number-value") if _DIGITS_ONLY.fullmatch(value) else (
                Label(Text(value), classes="number-value"))
            boxes.append(Vertical(Label(Text(label), classes="number-label"), big, classes="slide-number"))
        numbers.mount_all(boxes)
        numbers.display = bool(boxes)

    def _draw_view(self) -> None:
        built, view = self.shown, self.shown.slide.view
        for chart_view in CHART_VIEWS:
            if not chart_view.on_slides:
                continue
            chart = self.query_one(f"#slide-chart-{chart_view.id}", PlotWidget)
            chart.display = chart_view.id == view
            if chart_view.id == view:
                args = chart_view.data(slide_state(built, self.catalog))
                if args is not None:
                    chart.show(*args)
        self.set_class(view == "none" and not self.has_class("-help"), "-no-view")
        self.query_one("#slide-view", Vertical).display = view != "none" or self.has_class("-help")
        self.query_one("#slide-view-text", Static).update(Text("\n".join(slide_view_text(built, self.catalog))))

    def update_clock(self) -> None:
        """The footer: deck, slide, what is on screen (the scenario line), live knobs, and (``t``) the time."""
        from roofline.tui.views.slide_serving import slide_scenario_line

        footer = f"{self.deck.title}   {self.position + 1} / {len(self.slides)}"
        if self.shown.slide.view != "none" or self.shown.slide.numbers:
            footer += f"   {slide_scenario_line(self.shown.slide, self.shown.form, self.shown.results)}"
        changed = knob_summary(self.slides[self.position].form, self.shown.form)
        if changed:
            footer += f"   live: {changed} (r restores)"
        if self.has_class("-show-time"):
            footer += f"   {clock_text(self.elapsed_s)}  (slide {clock_text(self.on_slide_s)})"
        if self.typed:
            footer += f"   go to {self.typed}_"
        widget = self.query_one("#slide-footer", Static)
        if str(widget.render()) != footer:
            widget.update(Text(footer))

    # ---- keys ------------------------------------------------------------------------------------------------
    def action_scale_batch(self, factor: float) -> None:
        self._turn("batch", factor)

    def action_scale_prompt(self, factor: float) -> None:
        self._turn("prompt", factor)

    def action_cycle_device(self, step: int) -> None:
        """The slide on the next device (its compare list, else a tour of common accelerators)."""
        self._show_form(next_device(self.shown.form, self.shown.slide.compare, self.catalog, step))

    def _turn(self, knob: str, factor: float) -> None:
        self._show_form(turned(self.shown.form, knob, factor))

    def _show_form(self, form) -> None:
        if form == self.shown.form:
            return
        try:
            self.shown = rebuild_slide(self.shown, form, self.catalog)
        except DeckError as err:
            self.notify(f"cannot show that: {err}", severity="warning", markup=False)
            return
        self._draw_numbers()
        self._draw_view()
        self.update_clock()

    def action_restore(self) -> None:
        if self.shown is not self.slides[self.position]:
            self.show_slide(self.position)

    def action_toggle_notes(self) -> None:
        self.toggle_class("-notes")

    def action_toggle_time(self) -> None:
        self.toggle_class("-show-time")
        self.update_clock()

    def action_help(self) -> None:
        """Keys over the chart (not over the notes or the numbers); ``?`` or Esc closes."""
        self.toggle_class("-help")
        self._draw_view()

    def action_close_help(self) -> None:
        if self.has_class("-help"):
            self.action_help()

    def action_explore(self) -> None:
        """Reveal the explorer on this slide's scenario (knobs included); Esc there comes back here."""
        self.post_message(OpenExplorer(self.current.form))
