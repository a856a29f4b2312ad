"""Headline numbers, large: decode tokens/s per sequence and aggregate, idle cores, TTFT."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.geometry import Region
from textual.renderables.digits import Digits as DigitsRenderable
from textual.strip import Strip
from textual.widgets import Digits, Label, Static

from .quiet_update import set_text


def _short(value: float) -> str:
    """Digits-friendly: 4 significant figures, thousands as k."""
    if value >= 100_000:
        return f"{value / 1000:,.0f}k"
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


class SteadyDigits(Digits):
    """Digits whose width is set by CSS, so a new value repaints it without a layout pass.

    Textual's ``Digits.update`` asks for a screen-wide layout whenever the number of characters changes (16 -> 128),
    which re-arranges every widget on a keystroke. With a fixed or fractional width the region cannot change (the
    height is always three rows), so a repaint is enough; with an auto width it behaves as ``Digits``.
    """

    _lines: tuple[tuple, list[Strip]] | None = None  # (value, width, style), the three rows

    def update(self, value: str) -> None:
        if self.styles.width is not None and self.styles.width.is_auto:
            super().update(value)
            return
        if not isinstance(value, str):
            raise TypeError("value must be a str")
        if value != self.value:
            self._value = value
            self.refresh()

    def render_lines(self, crop: Region) -> list[Strip]:
        """Textual's, with the width looked up once for the rows it asks ``render_line`` for."""
        self._paint_width = self.size.width
        try:
            return super().render_lines(crop)
        finally:
            self._paint_width = None

    _paint_width: int | None = None

    def render_line(self, y: int) -> Strip:
        """One of the three rows, built once per value (the line API: Textual's generic path renders the glyphs
        through Rich's Align on every repaint). The style is looked up on the first row only: it costs more than
        the glyphs, and a theme change repaints from the first row."""
        width = self._paint_width if self._paint_width is not None else self.size.width
        cached = self._lines
        if y == 0 or cached is None or cached[0][:2] != (self._value, width):
            style = self.rich_style
            key = (self._value, width, style)
            if cached is None or cached[0] != key:
                rows = [segment for segment in DigitsRenderable(self._value).render(style) if segment.text != "\n"]
                cached = self._lines = (key, [Strip([row]).crop_extend(0, width, style) for row in rows])
        _, lines = cached
        return lines[y] if 0 <= y < len(lines) else Strip.blank(width, cached[0][2])


class Metric(Vertical):
    def __init__(self, label: str, metric_id: str) -> None:
        super().__init__(id=metric_id, classes="metric")
        self._label = label

    def compose(self) -> ComposeResult:
        yield Label(self._label, classes="metric-label")
        yield SteadyDigits("-")
        yield Static("-", classes="value-text")
        yield Static("", classes="delta")

    def show(self, value: float, text: str, delta: str = "") -> None:
        if not self.is_mounted or len(self.children) < 4:  # a late message while the app shuts down
            return
        _, digits, value_text, label = self.children  # as composed (queries walk the DOM on every keystroke)
        digits.update(_short(value))
        set_text(value_text, text)
        set_text(label, delta)
        if label.display != bool(delta):
            label.display = bool(delta)


class Headline(Horizontal):
    def compose(self) -> ComposeResult:
        yield Metric("decode tok/s/seq", "m-per-seq")
        yield Metric("aggregate tok/s", "m-aggregate")
        yield Metric("idle cores %", "m-idle")
        yield Metric("TTFT ms", "m-ttft")


class Verdict(Static):
    """What limits decode, and the other estimate beside the chosen one."""
