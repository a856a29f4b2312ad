"""Faster drop-ins for a few of plotext 5's internals, equal in what they return.

A keystroke rebuilds the visible chart, and plotext (pure Python) spends most of a build in a few helpers:
filling the cell matrix's background cell by cell, inserting each cell through four method calls, finding a
bar's fill boundaries in quadratic time, and regrouping the roof lines' braille dots although the roof did not
move. ``install()`` swaps in versions that return the same values:

- ``matrix_class.set_matrices``: the background row by row (canvas colour inside the canvas columns and rows,
  the axes colour outside), not a lambda per cell;
- ``matrix_class.insert_element``: the same tests and writes, inline;
- ``matrix_class.add_horizontal_string`` and ``add_vertical_string`` (titles, labels, ticks, axes, legend: some
  four hundred cells a build, each through a call of ``insert_element``): the cells that pass its tests written
  as one slice of each layer's row (a column's cells in a loop), after the same placement and space check;
- ``_utility.get_fill_boundaries``: per point, the lowest y among points with the same x that lie below it
  (its own y when none does), from one pass that keeps each x's lowest y;
- ``_utility.fill_data``: the same fill, with the points already filled kept in a set, not a list, and the markers
  and colours elongated list by list (plotext regroups them per point and back);
- ``_utility.remove_outsiders`` (the points outside the canvas, per signal): each list filtered by the indices kept,
  not regrouped per point and back;
- ``_utility.join`` (flattening nested lists, called per axis column for the tick marks): a loop that extends
  one list, not a comprehension per level;
- ``_utility.get_matrix_data`` (data to canvas cells, for every point, tick and line of a build): the same
  arithmetic and plotext's rounding written out in one loop, not three function calls per value;
- ``_utility.get_line`` (the cells between two points of a line plot, a few hundred calls a build): the same
  integer steps without flattening and re-checking the four numbers through three helper calls;
- ``_utility.get_lines`` (a line plot's cells, segment by segment): a segment between whole numbers stepped inline,
  and the markers and colours elongated list by list rather than regrouped per point and back;
- ``_utility.hd_group``: remembered for the last few inputs of whole numbers (a pure function of them; copies
  are returned).

And ``reset_plot``, which the charts call instead of ``clear_figure`` before each drawing: a fresh monitor, not a
fresh figure.

tests/test_plotext_speedups.py checks each against plotext's own on generated inputs and every chart of the
explorer built both ways. Only plotext 5.x is patched (the version textual-plotext needs); anything else is left
alone.
"""

from __future__ import annotations

import math
from collections import OrderedDict

_ORIGINALS: dict[str, object] = {}
_HD_GROUP_CACHE_SIZE = 32


def _set_matrices(self) -> None:
    from plotext import _utility as ut

    cols, rows = self.cols, self.rows
    self.marker = [[ut.space] * cols for _ in range(rows)]
    self.fullground = [[ut.no_color] * cols for _ in range(rows)]
    canvas_cols, canvas_rows = self.Cols_canvas, self.Rows_canvas
    start = min(max(canvas_cols.start, 0), cols) if canvas_cols else 0
    stop = min(max(canvas_cols.stop, start), cols) if canvas_cols else 0
    outside = [self.axes_color] * cols
    inside = [self.axes_color] * start + [self.canvas_color] * (stop - start) + [self.axes_color] * (cols - stop)
    self.background = [list(inside) if row in canvas_rows else list(outside) for row in range(rows)]
    self.style = [[ut.no_color] * cols for _ in range(rows)]


def _insert_element(self, col, row, marker, fullground=None, style=None, background=None, check_canvas=False):
    if col in self.Cols and row in self.Rows and (
            check_canvas is False or (col in self.Cols_canvas and row in self.Rows_canvas)):
        self.marker[row][col] = marker
        if fullground is not None:
            self.fullground[row][col] = fullground
        if background is not None:
            self.background[row][col] = background
        if style is not None:
            self.style[row][col] = style


def _add_horizontal_string(self, col, row, string, fullground=None, style=None, background=None, alignment="left",
                           check_space=False, check_canvas=False):
    from plotext import _utility as ut

    length = len(string)
    if alignment == "left":
        pass
    elif alignment == "center":
        col -= length // 2
    elif alignment == "right":
        col -= length - 1
    else:  # "dynamic": plotext moves the string clear of what the row already holds
        col = ut.correct_coord(self.get_marker_row(row), string, col)
    if check_space:
        first, stop = max(col - 1, 0), min(col + length + 1, self.cols)
        markers = self.marker[row] if first < stop else ()  # plotext indexes the row only when it looks at a cell
        if not (all([markers[c] == ut.space for c in range(first, stop)]) and col >= 0 and col + length <= self.cols):
            return False
    # insert_element's test, per cell: inside the matrix (and the canvas when asked)
    cols, rows = self.Cols, self.Rows
    if row not in rows or (check_canvas and row not in self.Rows_canvas):
        return True
    low, high = max(col, cols.start), min(col + length, cols.stop)
    if check_canvas:
        low, high = max(low, self.Cols_canvas.start), min(high, self.Cols_canvas.stop)
    if low < high:
        cells = slice(low, high)
        self.marker[row][cells] = list(string[low - col:high - col])
        if fullground is not None:
            self.fullground[row][cells] = [fullground] * (high - low)
        if background is not None:
            self.background[row][cells] = [background] * (high - low)
        if style is not None:
            self.style[row][cells] = [style] * (high - low)
    return True


def _add_vertical_string(self, col, row, string, fullground=None, style=None, background=None, alignment="bottom",
                         check_canvas=False):
    length = len(string)
    row = row if alignment == "bottom" else row - length // 2 if alignment == "center" else row - length + 1
    cols, rows = self.Cols, self.Rows
    if col not in cols or (check_canvas and col not in self.Cols_canvas):
        return
    low, high = max(row, rows.start), min(row + length, rows.stop)
    if check_canvas:
        low, high = max(low, self.Rows_canvas.start), min(high, self.Rows_canvas.stop)
    marker, fg, st, bg = self.marker, self.fullground, self.style, self.background
    for r in range(low, high):
        marker[r][col] = string[r - row]
        if fullground is not None:
            fg[r][col] = fullground
        if background is not None:
            bg[r][col] = background
        if style is not None:
            st[r][col] = style


def _get_fill_boundaries(x, y):
    if not x or any(v != v for v in (*x, *y)):  # empty (plotext's raises) or NaN (never equal, not even to itself)
        return _ORIGINALS["get_fill_boundaries"](x, y)
    points = [(x[i], y[i]) for i in range(len(x))]  # by index, as plotext's (a shorter y fails the same way)
    lowest: dict = {}
    for xi, yi in points:
        known = lowest.get(xi)
        if known is None or yi < known:
            lowest[xi] = yi
    return [lowest[xi] if lowest[xi] < yi else yi for xi, yi in points]


def _fill_data(x, y, y0, *other):
    from plotext import _utility as ut

    if not x or any(v != v for v in (*x, *y)):  # empty or NaN: plotext's own (see _get_fill_boundaries)
        return _ORIGINALS["fill_data"](x, y, y0, *other)
    if not other or min(map(len, other)) < len(x):  # plotext's fails on a short list, and so does its own here
        return _ORIGINALS["fill_data"](x, y, y0, *other)
    y0 = ut.get_fill_boundaries(x, y) if isinstance(y0, str) else [y0] * len(x)
    xf, yf = [], []
    of = [[] for _ in other]  # each of the other lists elongated as it is, not regrouped per point and back
    seen = set()
    for i in range(len(x)):
        xi, yi, y0i = x[i], y[i], y0[i]
        point = (xi, yi)
        if point in seen:  # plotext asks ``[xi, yi] not in xy`` of a list: quadratic in the points
            continue
        seen.add(point)
        yn = range(y0i, yi + 1) if y0i < yi else range(yi, y0i) if y0i > yi else (y0i,)
        count = len(yn)
        xf += [xi] * count
        yf += yn
        for elongated, values in zip(of, other, strict=True):
            elongated += [values[i]] * count
    return [xf, yf] + of


def _remove_outsiders(x, y, width, height, *other):
    if not other or min(map(len, other)) < len(x):  # plotext's fails on a short list (or none): its own
        return _ORIGINALS["remove_outsiders"](x, y, width, height, *other)
    columns, rows = range(width), range(height)
    inside = [i for i in range(len(x)) if x[i] in columns and y[i] in rows]
    if not inside:  # plotext's transpose of nothing: one empty list, repeated
        return [[]] * (2 + len(other))
    return [[values[i] for i in inside] for values in (x, y, *other)]


def _get_matrix_data(data, lim, bins):
    # data -> canvas cells, per value floor(round(0.5 + (bins - 1) * (v - low) / (high - low), 8)) with plotext's
    # round (halves up), written out in one loop rather than three function calls per value; None and NaN pass
    # through, and a string fails in math.isnan as in plotext's ``numerical``
    low, high = lim[0], lim[1]
    scale = bins - 1
    floor, ceil, isnan = math.floor, math.ceil, math.isnan
    cells = []
    for value in data:
        if value is None or isnan(value):
            cells.append(value)
            continue
        shifted = (0.5 + scale * (value - low) / (high - low)) * 100000000
        whole = floor(shifted)
        rounded = whole if shifted - whole < 0.5 else ceil(shifted)
        cells.append(floor(rounded * 1e-08))
    return cells


def _join(data):
    # plotext's axis drawing joins the few vertical-line columns once per column of the axis (hundreds of calls
    # a build, each on a short list): the test for nested lists runs in C (types compared by ``in``), not as a
    # generator per row
    flat = []
    for row in data:
        if type(row) == list:  # noqa: E721 - plotext's own test: list subclasses are kept whole, as there
            if list in map(type, row):
                flat += _join(row)
            else:
                flat += row
        else:
            flat.append(row)
    return flat


def _get_line(x, y):
    try:
        x0, x1 = x
        y0, y1 = y
    except (TypeError, ValueError):
        return _ORIGINALS["get_line"](x, y)
    if not (type(x0) in _NUMBERS and type(x1) in _NUMBERS and type(y0) in _NUMBERS and type(y1) in _NUMBERS):
        return _ORIGINALS["get_line"](x, y)  # None, strings or nested lists: plotext's own
    if x0 != x0 or x1 != x1 or y0 != y0 or y1 != y1:  # NaN: plotext leaves the pair as it is
        return x, y
    points = int(max(abs(int(x1) - int(x0)), abs(int(y1) - int(y0))) + 1)
    x_slope = (x1 - x0) / (points - 1) if points > 1 else 0  # plotext's linspace, step for step
    y_slope = (y1 - y0) / (points - 1) if points > 1 else 0
    return [[int(x0 + i * x_slope) for i in range(points)], [int(y0 + i * y_slope) for i in range(points)]]


_NUMBERS = (int, float)


def _get_lines(x, y, *other):
    # the cells of a line plot: each segment's cells but its last, then the last point; the markers and colours
    # elongated list by list (plotext regroups them per point and back); a segment between two whole numbers
    # (what get_matrix_data gives) stepped here, anything else through get_line
    from plotext import _utility as ut

    if not x or not other or len(y) < len(x) or min(map(len, other)) < len(x):
        return _ORIGINALS["get_lines"](x, y, *other)  # nothing to join, or lists plotext's own would trip on
    xl, yl = [], []
    source: list[int] = []  # for each cell, the point whose marker and colours it takes (its segment's start)
    for n in range(len(x) - 1):
        x0, x1, y0, y1 = x[n], x[n + 1], y[n], y[n + 1]
        if type(x0) is int and type(x1) is int and type(y0) is int and type(y1) is int:
            steps = max(abs(x1 - x0), abs(y1 - y0))  # get_line's points - 1: the cells before the segment's end
            if steps == 1:  # neighbouring cells: the segment's start alone
                xl.append(x0)
                yl.append(y0)
                source.append(n)
            elif steps:
                x_slope, y_slope = (x1 - x0) / steps, (y1 - y0) / steps
                xl += [int(x0 + i * x_slope) for i in range(steps)]
                yl += [int(y0 + i * y_slope) for i in range(steps)]
                source += [n] * steps
        else:
            xn, yn = ut.get_line([x0, x1], [y0, y1])
            xl += xn[:-1]
            yl += yn[:-1]
            source += [n] * len(xn[:-1])
    last = min(map(len, other)) - 1  # plotext's last group of the (truncated) other lists
    return [xl + [x[-1]], yl + [y[-1]]] + [[values[i] for i in source] + [values[last]] for values in other]


_hd_cache: OrderedDict = OrderedDict()


def _hd_group(x, y, xf, yf):
    if not all(type(v) is int for v in (*x, *y)):  # the memo's key would take 2.0 for 2: plotext's own, unmemoised
        return _ORIGINALS["hd_group"](x, y, xf, yf)
    key = (tuple(x), tuple(y), tuple(xf), tuple(yf))
    hit = _hd_cache.get(key)
    if hit is None:
        hit = _hd_cache[key] = _ORIGINALS["hd_group"](x, y, xf, yf)
        if len(_hd_cache) > _HD_GROUP_CACHE_SIZE:
            _hd_cache.popitem(last=False)
    else:
        _hd_cache.move_to_end(key)
    gx, gy, gm = hit
    return list(gx), list(gy), list(gm)


def reset_plot(figure) -> None:
    """Clear a figure without subplots for a new drawing, as ``clear_figure`` does, without rebuilding the figure.

    ``clear_figure`` runs the figure's ``__init__`` again, which builds a placeholder figure for subplots and
    deep-copies a monitor for it: most of a clear's cost, for a figure that never has subplots. Everything a
    drawing sets lives in the figure's monitor (each setter of a figure without subplots hands on to it), so a
    fresh monitor, sharing the figure's date settings as ``__init__`` arranges, is a clear figure. The figure's
    own size is left: the caller sets it before building (charts.py does). With the drop-ins not installed, or
    a figure with subplots, plotext's own clear.
    """
    if not _ORIGINALS or not getattr(figure, "_no_plots", False) or not getattr(figure, "_is_master", False):
        figure.clear_figure()
        return
    from plotext._monitor import monitor_class

    monitor = monitor_class()
    monitor.set_date(figure.date)
    monitor.set_size(figure.monitor.size)
    figure.monitor = monitor


def install() -> bool:
    """Swap the drop-ins in (once); False, changing nothing, for a plotext other than 5.x."""
    if _ORIGINALS:
        return True
    from roofline.tui.perf.versions import installed_version

    if not (installed_version("plotext") or "").startswith("5."):
        return False
    try:
        from plotext import _matrix, _utility
    except ImportError:
        return False
    targets = ((_matrix.matrix_class, "set_matrices", _set_matrices),
               (_matrix.matrix_class, "insert_element", _insert_element),
               (_matrix.matrix_class, "add_horizontal_string", _add_horizontal_string),
               (_matrix.matrix_class, "add_vertical_string", _add_vertical_string),
               (_utility, "get_fill_boundaries", _get_fill_boundaries),
               (_utility, "fill_data", _fill_data),
               (_utility, "remove_outsiders", _remove_outsiders),
               (_utility, "hd_group", _hd_group),
               (_utility, "join", _join),
               (_utility, "get_matrix_data", _get_matrix_data),
               (_utility, "get_line", _get_line),
               (_utility, "get_lines", _get_lines))
    if not all(hasattr(owner, name) for owner, name, _ in targets):
        return False
    for owner, name, replacement in targets:
        _ORIGINALS[name] = getattr(owner, name)
        setattr(owner, name, replacement)
    return True


def uninstall() -> None:
    """Put plotext's own back (tests compare both)."""
    if not _ORIGINALS:
        return
    from plotext import _matrix, _utility

    for name, original in _ORIGINALS.items():
        owner = _matrix.matrix_class if hasattr(_matrix.matrix_class, name) else _utility
        setattr(owner, name, original)
    _ORIGINALS.clear()
    _hd_cache.clear()
