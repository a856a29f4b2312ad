"""A chart's rows of segments: the text form tests read, a message in place of a plot, and the even log axis.

Shared by every chart in :mod:`.charts`; no plotext here.
"""

from __future__ import annotations

import math

from rich.segment import Segment
from rich.text import Text

from roofline.tui.perf.plotext_rows import ChartRow


def rows_to_text(rows: list[ChartRow]) -> Text:
    """The chart as one Rich Text (for ``render`` and for tests that read what a chart shows)."""
    return Text("\n", no_wrap=True, overflow="crop").join(
        Text.assemble(*((seg.text, seg.style) for seg in row), no_wrap=True, overflow="crop") for row in rows)


UNBUILT_CHART_SIZE = (100, 24)  # what draw() assumes when no build gave it a size (tui/cli/present.py's handout)
PLOT_FRAME_ROWS = 5  # title, top and bottom frame, x tick labels, axis labels: rows that are not plot area


def even_decades(y_low: float, data_top: float, rows: int, headroom_rows: int) -> tuple[float, float]:
    """(y_high, rows per decade) for a log10 axis from the whole decade ``y_low``: every decade the same whole number
    of rows (plotext puts ``y_low`` on the bottom row and ``y_high`` on the top one, rounding in between, so a
    fractional rows-per-decade gives uneven tick spacing), with at least ``headroom_rows`` rows above ``data_top``
    (room for a legend and a label)."""
    rows = max(rows, 2)  # a top row apart from the bottom one, whatever size was asked for
    span = max(data_top - y_low, 1e-9)
    whole = math.floor((rows - 1 - headroom_rows) / span)
    # whole rows per decade, unless one row a decade would leave the top third of a small chart empty
    if whole >= 2 or (whole == 1 and rows - 1 - span <= max(headroom_rows + 1, (rows - 1) / 3)):
        return y_low + (rows - 1) / whole, whole
    # too short for a whole row per decade: the data and the headroom share the rows as they can (uneven ticks)
    per_decade = max(rows - 1 - headroom_rows, 1) / span
    return y_low + (rows - 1) / per_decade, per_decade


MIN_CHART_WIDTH = 40  # below these a plotext chart's axes and labels overlap its data ("1P0.1" at 80x24 on a slide)
MIN_CHART_HEIGHT = 8


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
