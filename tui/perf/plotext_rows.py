"""A plotext figure as rows of Rich segments: the fast path through plotext 5's private build steps, and the
public path (``build()``, decoded by Rich) that :mod:`roofline.tui.perf.switch` falls back to.

The fast path skips plotext's ANSI encoding (and Rich's decoding of it): it reads plotext's cell matrix directly,
and converts only the rows that changed since the last build. tests/perf/test_plotext_rows.py checks that both
paths show the same characters.
"""

from __future__ import annotations

from plotext import _utility as plotext_utility
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

_STYLE_CACHE: dict[tuple, Style] = {}


# On light themes the named colours plotext draws markers and lines in are too pale to read (yellow on a light
# canvas measured about 2.3:1); these darker shades keep each colour's hue at 4.5:1 or better against white.
LIGHT_THEME_COLOURS: dict[str, tuple[int, int, int]] = {
    "yellow": (140, 95, 0), "cyan": (0, 105, 135), "green": (0, 115, 0), "gray": (90, 90, 90),
    "magenta": (150, 0, 150), "orange": (165, 80, 0), "red": (185, 0, 0), "blue": (0, 60, 200),
}


def _style_for(fullground, style, background, light: bool = False) -> Style:
    try:
        key = (fullground, style, background, light)
        cached = _STYLE_CACHE.get(key)
    except TypeError:  # a colour given as a list (unhashable)
        key = (str(fullground), str(style), str(background), light)
        cached = _STYLE_CACHE.get(key)
    if cached is None:
        if light and isinstance(fullground, str):  # "blue+" (plotext's bright variant) maps as "blue"
            fullground = LIGHT_THEME_COLOURS.get(fullground.rstrip("+"), fullground)
        ansi = plotext_utility.colors_to_ansi(fullground, style, background)
        spans = Text.from_ansi(ansi + "x" + plotext_utility.ansi_end).spans
        cached = _STYLE_CACHE[key] = spans[0].style if spans else Style.null()
    return cached


ChartRow = tuple[Segment, ...]  # one row of a chart: a segment per run of equally styled cells


def matrix_to_rows(matrix, previous: tuple[list[tuple], list[ChartRow]] | None = None, light: bool = False
                   ) -> tuple[list[tuple], list[ChartRow]]:
    """A plotext cell matrix as rows of segments (top first), one per run of equally coloured cells.

    Segments rather than Rich Text: a changed row goes straight into a Strip, where a Text would be rendered by
    Rich again on every paint (on the batch sweep, where most rows change, that was 10 ms a keystroke).
    Returns each row's cells (plotext's lists of characters, colours, styles, backgrounds) with its segments;
    ``previous`` is what an earlier call returned (same size and theme): a row whose cells equal those of the
    same row there takes its segments as they are. Rows are compared in place (list equality, in C), not looked
    up by content: hashing every row's cells cost more than converting the rows that changed.
    ``light``: a light theme, whose named colours are drawn darker (LIGHT_THEME_COLOURS).
    """
    marker, fg, st, bg = matrix.marker, matrix.fullground, matrix.style, matrix.background
    old_cells, old_rows = previous if previous is not None else ((), ())
    cells_by_row, rows = [], []
    for y, row in enumerate(list(matrix.Rows)[::-1]):
        chars, fgs, sts, bgs = cells = marker[row], fg[row], st[row], bg[row]
        cells_by_row.append(cells)
        if y < len(old_cells) and old_cells[y] == cells:
            rows.append(old_rows[y])
            continue
        segments: list[Segment] = []
        start, width = 0, len(chars)
        for x in range(1, width + 1):  # a run ends where any of the three colours changes
            if x == width or fgs[x] != fgs[start] or sts[x] != sts[start] or bgs[x] != bgs[start]:
                segments.append(Segment("".join(chars[start:x]), _style_for(fgs[start], sts[start], bgs[start], light)))
                start = x
        rows.append(tuple(segments))
    return cells_by_row, rows


def fast_rows(plt, width: int, height: int, theme_name: str, previous, light: bool):
    """plotext 5's private build steps, then :func:`matrix_to_rows` (plotext 5.3 checked)."""
    plt.plotsize(width, height)
    plt._set_size(width, height)
    plt.theme(theme_name)
    plt._set_sizes()
    plt._build_matrix()
    return matrix_to_rows(plt.monitor.matrix, previous, light=light)


def public_rows(text: Text, height: int, console) -> tuple[list, list[ChartRow]]:
    """A chart rendered the public way (textual-plotext's ``PlotextPlot.render``: plotext's ``build()`` at the
    widget's size, decoded by Rich) as rows of segments."""
    rows: list[ChartRow] = []
    for line in text.split("\n", allow_blank=True)[:height]:
        rows.append(tuple(seg for seg in line.render(console) if seg.text and seg.text != "\n"))
    while len(rows) < height:
        rows.append(())
    return [None] * len(rows), rows
