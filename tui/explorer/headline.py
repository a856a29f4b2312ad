"""Headline numbers, large: decode tokens/s per sequence under both estimates and aggregate, idle cores, TTFT."""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Region, Size
from textual.reactive import reactive
from textual.renderables.digits import Digits as DigitsRenderable
from textual.strip import Strip
from textual.widget import Widget


def _short(value: float) -> str:
    """Digits-friendly: 4 significant figures, thousands as k."""
    if value >= 100_000:
        return f"{value / 1000:,.0f}k"
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


@dataclass(frozen=True, slots=True)
class Reading:
    """One headline number: its label, the short form drawn in large digits (empty: no number, such as an
    unbounded TTFT; the text is drawn in words where the digits go), the exact text, the change."""

    label: str
    digits: str = "-"
    text: str = "-"
    delta: str = ""


HEADLINE_METRICS = (("m-per-seq", "decode tok/s/seq"), ("m-other", "other estimate tok/s/seq"),
                    ("m-aggregate", "aggregate tok/s"), ("m-idle", "idle cores %"), ("m-ttft", "TTFT ms (static)"))
_FIRST_LABELS = dict(HEADLINE_METRICS)


class Headline(Widget):
    """The four headline numbers side by side, drawn by one widget.

    Each column shows a label, the number in three-row digits (Textual's glyphs) or, when ``compact`` (narrow
    terminals), as one bold line, and the change against a pinned baseline. One widget and not four groups of
    four: a keystroke changes every number, and each widget Textual paints costs a fixed share of a frame.
    The lines are built once per change of the numbers, the width or the style.
    """

    COMPONENT_CLASSES = {"headline--label", "headline--digits", "headline--value", "headline--delta"}
    compact: reactive[bool] = reactive(False, layout=True)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.readings: dict[str, Reading] = {key: Reading(label) for key, label in HEADLINE_METRICS}
        self._lines: tuple[tuple, list[Strip]] | None = None

    def show_all(self, numbers: dict[str, tuple]) -> None:
        """Show numbers, ``{metric_id: (value, text, delta[, label])}`` in that order of columns: ``value`` in
        digits (shortened; None or not finite: ``text`` in words instead), ``text`` exact, the change (empty: none)
        and optionally a new label (a unit that changes with the value); one refresh for all of them (each refresh
        looks the widget's region up again)."""
        had_delta = any(r.delta for r in self.readings.values())
        changed = False
        if list(numbers) != list(self.readings)[:len(numbers)]:  # another mode's columns (serving's, static's)
            self.readings = {k: self.readings.get(k, Reading(_FIRST_LABELS.get(k, k))) for k in numbers}
            changed = True
        for metric_id, (value, text, delta, *label) in numbers.items():
            old = self.readings[metric_id]
            digits = _short(value) if value is not None and math.isfinite(value) else ""
            new = Reading(label[0] if label else old.label, digits, text, delta)
            if new != old:
                self.readings[metric_id] = new
                changed = True
        if changed:
            self.refresh(layout=had_delta != any(r.delta for r in self.readings.values()))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return 1 + (1 if self.compact else 3) + (1 if any(r.delta for r in self.readings.values()) else 0)

    def render_lines(self, crop: Region) -> list[Strip]:
        """The lines built (or found) once for all the rows of ``crop``, painted by Textual."""
        self._painting = self._current_lines()
        try:
            return super().render_lines(crop)
        finally:
            self._painting = None

    _painting: list[Strip] | None = None

    def render_line(self, y: int) -> Strip:
        lines = self._painting if self._painting is not None else self._current_lines()
        return lines[y] if 0 <= y < len(lines) else Strip.blank(self.size.width, self.rich_style)

    _styles: tuple[Style, ...] | None = None  # label, digits, value, delta, the widget's own

    def notify_style_update(self) -> None:
        """A theme or CSS change: look the styles up again (per paint they cost more than the lines)."""
        self._styles = None
        super().notify_style_update()

    def _current_lines(self) -> list[Strip]:
        width = self.size.width
        base = self.rich_style  # inherited colours: an ancestor's change does not reach notify_style_update
        if self._styles is None or self._styles[-1] != base:
            self._styles = tuple(self.get_component_rich_style(name) for name in (
                "headline--label", "headline--digits", "headline--value", "headline--delta")) + (base,)
        styles = self._styles
        key = (tuple(self.readings.values()), width, self.compact, styles)
        if self._lines is None or self._lines[0] != key:
            self._lines = (key, self._build_lines(width, *styles))
        return self._lines[1]

    def _build_lines(self, width: int, label: Style, digits: Style, value: Style, delta: Style, base: Style
                     ) -> list[Strip]:
        readings = list(self.readings.values())
        columns = len(readings)
        widths = [width // columns + (1 if i < width % columns else 0) for i in range(columns)]
        rows: list[list[tuple[str, Style]]] = [[(_fit_label(r.label, w - 2), label)
                                                for r, w in zip(readings, widths, strict=True)]]
        if self.compact:
            rows.append([(_fit_label(r.text, w - 2), value) for r, w in zip(readings, widths, strict=True)])
        else:
            glyphs = [_glyph_rows(r, digits, value, cell_width - 2) for r, cell_width in zip(readings, widths,
                                                                                           strict=True)]
            rows += [[g[i] for g in glyphs] for i in range(3)]
        if any(r.delta for r in readings):
            rows.append([(r.delta, delta) for r in readings])
        lines = []
        for cells in rows:
            segments = []
            for (text, style), cell_width in zip(cells, widths, strict=True):
                inner = max(0, cell_width - 2)  # a cell of padding each side of every column
                text = text[:inner]
                segments += [Segment(" ", base), Segment(text, style),
                             Segment(" " * (cell_width - 1 - len(text)), base)]
            lines.append(Strip(segments).crop_extend(0, width, base))
        return lines


# Labels too long for a column at 80 or 120 columns and their short forms, longest first, tried after the
# parenthesis is dropped: a cut label ("ceiling tok/s/", "aggregate tok/") reads as a different unit.
SHORT_LABELS = {"ceiling tok/s/seq": ("ceiling tok/s", "bound tok/s"),
                "expected tok/s/seq": ("expected tok/s", "expect tok/s", "exp. tok/s"),
                "decode tok/s/seq": ("tok/s/seq",), "other estimate tok/s/seq": ("other tok/s",),
                "aggregate tok/s": ("total tok/s",), "tok/s per device": ("tok/s/device", "tok/s/dev")}


def _fit_label(text: str, width: int) -> str:
    """A label (or a compact value) that does not fit drops its parenthesis whole ("TTFT ms (static)" -> "TTFT ms",
    "unbounded (queue grows)" -> "unbounded"), then takes the longest short form that fits (:data:`SHORT_LABELS`;
    the shortest when none does), before it is cut."""
    while cell_len(text) > width and text.endswith(")") and " (" in text:
        text = text[:text.rindex(" (")]
    if cell_len(text) > width and text in SHORT_LABELS:
        forms = SHORT_LABELS[text]
        text = next((form for form in forms if cell_len(form) <= width), forms[-1])
    return text


def _glyph_rows(reading: Reading, digits: Style, words: Style, width: int) -> list[tuple[str, Style]]:
    """The three rows under a label: the number in Textual's digit glyphs, or, for a reading without a number
    ("unbounded (queue grows)"), its text in words, wrapped to the column."""
    if reading.digits:
        return [(seg.text, digits) for seg in DigitsRenderable(reading.digits).render(digits) if seg.text != "\n"]
    lines = textwrap.wrap(reading.text, max(1, width))[:3]
    return [(line, words) for line in lines] + [("", words)] * (3 - len(lines))


class WrappedText(Widget):
    """A few lines of text wrapped to the widget's width, drawn through the line API.

    For text that changes on every keystroke (the verdict, the memory bar): the wrapped lines are built once per
    change of text, width or style, and a layout is asked for only when the number of wrapped lines changes.
    ``render()`` returns the Rich Text shown (what tests and screen readers of the DOM look at).
    """

    DEFAULT_CSS = """
    WrappedText {
        width: 1fr;
        height: auto;
    }
    """

    def __init__(self, text: str = "", *, markup: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        self._source: tuple[str, bool] = ("", False)
        self._text = Text()
        self._lines: tuple[tuple, list[Strip]] | None = None
        self._wrapped: tuple[tuple, list[Text]] | None = None  # (width, source), the text wrapped to that width
        if text:
            self.show(text, markup=markup)

    def show(self, text: str, *, markup: bool = False) -> None:
        """Show ``text`` (Rich markup when ``markup``); nothing happens when it is already shown."""
        if (text, markup) == self._source:
            return
        width = self.content_size.width if self.is_mounted else 0
        rows_before = len(self._wrap(width)) if width else 0
        self._source = (text, markup)
        self._text = Text.from_markup(text) if markup else Text(text)
        self._lines = None
        if self.is_mounted:
            # not laid out yet (or hidden): its next layout measures the new text anyway
            self.refresh(layout=bool(width) and rows_before != len(self._wrap(width)))

    def render(self) -> Text:
        return self._text

    def _wrap(self, width: int) -> list[Text]:
        """The text wrapped to ``width``, worked out once per text and width: a change asks for it to count the
        lines before and after, and the paint that follows asks again (Rich's wrap costs more than the rest)."""
        key = (width, self._source)
        if self._wrapped is None or self._wrapped[0] != key:
            lines = list(self._text.wrap(self.app.console, max(1, width))) if self._text.plain else [Text()]
            self._wrapped = (key, lines)
        return self._wrapped[1]

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return max((cell_len(line) for line in self._text.plain.split("\n")), default=0)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._wrap(width))

    def notify_style_update(self) -> None:
        self._lines = None
        super().notify_style_update()

    def render_lines(self, crop: Region) -> list[Strip]:
        """The inherited style looked up once for all the lines (an ancestor's class change reaches this widget as
        a repaint, not as notify_style_update: the style is part of the lines' key)."""
        self._paint_base = self.rich_style
        try:
            return super().render_lines(crop)
        finally:
            self._paint_base = None

    _paint_base: Style | None = None

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        base = self._paint_base if self._paint_base is not None else self.rich_style
        if self._lines is None or self._lines[0] != (width, self._source, base):
            console = self.app.console
            strips = [Strip(list(Segment.apply_style(line.render(console), base))).crop_extend(0, width, base)
                      for line in self._wrap(width)]
            self._lines = ((width, self._source, base), strips)
        lines = self._lines[1]
        return lines[y] if 0 <= y < len(lines) else Strip.blank(width, base)


class Verdict(WrappedText):
    """What limits decode, and the other estimate beside the chosen one."""
