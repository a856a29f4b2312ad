"""The layout helpers every plot function shares: the plot's size, what fits in it (titles, labels), the rows of
its plot area and an even log axis. No Textual and no plotext here: a plot function gets a plotext figure and a
size (the explorer's chart widget, a slide, or the handout's plain-text page) and asks these.
"""

from __future__ import annotations

import math

Size = tuple[int, int]  # (columns, rows) of the whole chart

HANDOUT_CHART_SIZE: Size = (100, 24)  # a plain-text page's chart (tui/cli/present.py's handout)
PLOT_FRAME_ROWS = 5  # title, top and bottom frame, x tick labels, axis labels: rows that are not plot area
MIN_CHART_WIDTH = 40  # below these a plotext chart's axes and labels overlap its data ("1P0.1" at 80x24 on a slide)
MIN_CHART_HEIGHT = 8


def fitting_title(size: Size, *variants: str) -> str:
    """The first title that fits the chart's width (plotext drops a title wider than the chart), else the last one
    cut short."""
    width = max(1, size[0] - 2)
    return next((v for v in variants if len(v) <= width), variants[-1][:width])


def label_beside(size: Size, centred: str, *variants: str) -> str:
    """The first of ``variants`` that fits left of the centred x label ``centred`` (plotext writes the left y label
    first and drops a label that would touch another), else the last one."""
    room = size[0] // 2 - len(centred) // 2 - 2
    return next((v for v in variants if len(v) <= room), variants[-1])


def canvas_rows(size: Size) -> int:
    """Rows of the plot area: the chart's height less the title, the frame's two lines, the x ticks and the axis
    labels (plotext 5's layout for a chart with a title and labels)."""
    return max(1, size[1] - PLOT_FRAME_ROWS)


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
