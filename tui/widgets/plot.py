"""The one chart widget: it holds a plot function (:mod:`roofline.tui.views.plots`) and its last data, builds the
figure at the widget's size and keeps the rows; a new data set repaints only the rows that changed.

plotext keeps state between builds (ticks, scales), so a figure built twice at two sizes can differ from one built
once; replaying the plot function before each build makes what is shown depend only on the data and the size.
``show`` builds the new figure at once and compares it row by row with the one on screen: only changed rows are
refreshed, so a keystroke that moves a few points writes a few rows to the terminal instead of the whole chart
(over SSH that is most of the traffic).
"""

from __future__ import annotations

from collections.abc import Callable

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Region
from textual.strip import Strip
from textual_plotext import PlotextPlot

from roofline.tui.perf import switch
from roofline.tui.perf.plotext_rows import ChartRow
from roofline.tui.views.plot_layout import MIN_CHART_HEIGHT, MIN_CHART_WIDTH

switch.install_plotext_speedups()  # a rebuild per keystroke: plotext's slowest helpers, when verified


def rows_to_text(rows: list[ChartRow]) -> Text:
    """The chart as one Rich Text (for ``render`` and for tests that read what a chart shows)."""
    return Text("\n", no_wrap=True, overflow="crop").join(
        Text.assemble(*((seg.text, seg.style) for seg in row), no_wrap=True, overflow="crop") for row in rows)


def message_rows(text: str, width: int, height: int, style) -> list[ChartRow]:
    """A chart's rows holding one centred message instead of a plot (wrapped to the width)."""
    words, lines, line = text.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > max(1, width):
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    top = max(0, (height - len(lines)) // 2)
    rows: list[ChartRow] = [() for _ in range(height)]
    for i, text_line in enumerate(lines[:height]):
        rows[min(height - 1, top + i)] = (Segment(text_line[:width].center(width), style),)
    return rows


class PlotWidget(PlotextPlot):
    """A plot redrawn from its last data by its plot function ``plot(plt, size, *data)``."""

    plot: Callable | None = None  # a subclass names its plot function; an instance may be given one

    def __init__(self, plot: Callable | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        if plot is not None:
            self.plot = plot
        self._last: tuple | None = None
        self._shown: tuple[tuple[int, int, str], list[ChartRow]] | None = None  # (width, height, theme), rows
        self._strips: dict[int, Strip] = {}  # row -> its rendered Strip, for the rows shown
        self._strip_style = Style.null()  # the widget's style, looked up when all strips are rebuilt
        # the last build's (width, height, theme), each row's plotext cells (its matrix's row lists, never changed
        # after the build) and segments: rows whose cells did not change are not converted again
        self._last_build: tuple[tuple, list[tuple], list[ChartRow]] | None = None
        self._painting: tuple[list[ChartRow], int] | None = None

    def show(self, *args) -> None:
        self._last = args
        previous = self._shown
        width, height = self.size
        if previous is None or previous[0] != (width, height, self.app.theme) or not width or not height:
            self._shown = None
            self.refresh()
            return
        rows = self._build_rows(width, height)
        changed = [y for y, (old, new) in enumerate(zip(previous[1], rows, strict=True)) if old != new]
        self._shown = ((width, height, self.app.theme), rows)
        for y in changed:
            self._strips.pop(y, None)
        if changed:
            self.refresh(*(Region(0, y, width, 1) for y in changed))

    def _build_rows(self, width: int, height: int) -> list[ChartRow]:
        if width < MIN_CHART_WIDTH or height < MIN_CHART_HEIGHT:  # plotext draws garbage below this
            self._last_build = None
            return message_rows(f"enlarge the terminal: this chart needs {MIN_CHART_WIDTH}x{MIN_CHART_HEIGHT} "
                                f"cells, it has {width}x{height}", width, height, self.rich_style)
        plt = self.plt
        key = (width, height, self.app.theme)
        previous = self._last_build[1:] if self._last_build is not None and self._last_build[0] == key else None
        try:
            if self._last is not None and self.plot is not None:
                switch.reset_plot(plt)
                self.plot(plt, (width, height), *self._last)
            cells, rows = switch.plot_rows(plt, width, height, self, previous, light=not self.app.current_theme.dark,
                                           console=self.app.console,
                                           public=lambda: PlotextPlot.render(self))  # textual-plotext's own
        except (ArithmeticError, IndexError, ValueError) as err:  # plotext on numbers it cannot place: say so
            self._last_build = None
            return message_rows(f"this chart cannot be drawn for these numbers ({type(err).__name__}); the "
                                "numbers above still hold", width, height, self.rich_style)
        self._last_build = (key, cells, rows)
        return rows

    def _current_rows(self) -> list[ChartRow]:
        width, height = self.size
        key = (width, height, self.app.theme)
        if self._shown is None or self._shown[0] != key:
            self._shown = (key, self._build_rows(width, height))
            self._strips = {}
        return self._shown[1]

    def render(self):
        return rows_to_text(self._current_rows())

    def render_lines(self, crop: Region) -> list[Strip]:
        """The chart's rows for ``crop``; the rows and width are looked up once for all lines."""
        self._painting = (self._current_rows(), self.size.width)
        try:
            return super().render_lines(crop)
        finally:
            self._painting = None

    def render_line(self, y: int) -> Strip:
        """One row as a Strip, converted once per change (the line API: a paint of a few changed rows does not turn
        the whole figure into Textual content again)."""
        rows, width = self._painting or (self._current_rows(), self.size.width)
        if not 0 <= y < len(rows):
            return Strip.blank(width, self.rich_style)
        strip = self._strips.get(y)
        if strip is None:
            if not self._strips:  # the whole figure is new (first paint, resize, theme): look the style up again
                self._strip_style = self.rich_style  # per row it would cost more than the row itself
            strip = Strip(rows[y])
            if strip.cell_length != width:
                strip = strip.crop_extend(0, width, self._strip_style)
            self._strips[y] = strip
        return strip
