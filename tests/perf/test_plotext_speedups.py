"""The plotext drop-ins return exactly what plotext's own helpers return, and the charts built with them match."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from plotext import _matrix, _utility

from roofline.tui.app import RooflineApp
from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.perf import plotext_speedups
from roofline.tui.widgets.plot import PlotWidget


@pytest.fixture(autouse=True)
def _installed():
    assert plotext_speedups.install()
    yield
    plotext_speedups.install()


def _originals():
    return dict(plotext_speedups._ORIGINALS)


def _matrix_with(set_matrices, cols, rows, canvas, colours):
    m = _matrix.matrix_class()
    m.set_size(cols, rows)
    m.set_canvas_area(*canvas)
    m.set_axes_color(colours[0])
    m.set_canvas_color(colours[1])
    set_matrices(m)
    return m


canvas_areas = st.tuples(*(st.integers(-5, 60) for _ in range(4)))


@given(st.integers(0, 50), st.integers(0, 30), canvas_areas)
def test_set_matrices_fills_the_same_cells(cols, rows, canvas):
    colours = ("black", (10, 20, 30))
    ours = _matrix_with(plotext_speedups._set_matrices, cols, rows, canvas, colours)
    theirs = _matrix_with(_originals()["set_matrices"], cols, rows, canvas, colours)
    for layer in ("marker", "fullground", "background", "style"):
        assert getattr(ours, layer) == getattr(theirs, layer), layer
    for layer in (ours.marker, ours.fullground, ours.background, ours.style):  # rows are separate lists, as plotext's
        assert len({id(row) for row in layer}) == rows


inserts = st.lists(st.tuples(st.integers(-3, 25), st.integers(-3, 15), st.sampled_from("ab@"),
                             st.sampled_from([None, "red", 7]), st.sampled_from([None, "bold"]),
                             st.sampled_from([None, "blue"]), st.booleans()), max_size=40)


@given(canvas_areas, inserts)
def test_insert_element_writes_the_same_cells(canvas, ops):
    ours = _matrix_with(plotext_speedups._set_matrices, 20, 12, canvas, ("black", "white"))
    theirs = _matrix_with(plotext_speedups._set_matrices, 20, 12, canvas, ("black", "white"))
    for col, row, marker, fg, style, bg, check in ops:
        plotext_speedups._insert_element(ours, col, row, marker, fg, style, bg, check)
        _originals()["insert_element"](theirs, col, row, marker, fg, style, bg, check)
    for layer in ("marker", "fullground", "background", "style"):
        assert getattr(ours, layer) == getattr(theirs, layer), layer


strings = st.one_of(st.text(alphabet="ab -", max_size=12), st.lists(st.sampled_from("-+|"), max_size=12))
string_calls = st.lists(st.tuples(
    st.integers(-14, 30), st.integers(-14, 16), strings, st.sampled_from([None, "red", 7]),
    st.sampled_from([None, "bold"]), st.sampled_from([None, "blue"]),
    st.sampled_from(["left", "center", "right", "dynamic", "bottom", "top"]), st.booleans(), st.booleans(),
    st.booleans()), max_size=12)


def _outcome(function, *args):
    """What ``function(*args)`` returns, or the type of what it raises."""
    try:
        return function(*args)
    except Exception as err:  # noqa: BLE001 - the drop-in must fail where plotext's fails, in the same way
        return type(err)


def _plotexts(name, *args):
    """plotext's own string helper, with plotext's own ``insert_element`` (which it calls per cell) in place."""
    _matrix.matrix_class.insert_element = _originals()["insert_element"]
    try:
        return _outcome(_originals()[name], *args)
    finally:
        _matrix.matrix_class.insert_element = plotext_speedups._insert_element


@given(canvas_areas, string_calls)
def test_strings_are_written_to_the_same_cells(canvas, calls):
    """Horizontal and vertical strings, every alignment, the space and canvas checks, rows and columns off the
    matrix: the same cells, the same answers, the same failures."""
    ours = _matrix_with(plotext_speedups._set_matrices, 20, 12, canvas, ("black", "white"))
    theirs = _matrix_with(plotext_speedups._set_matrices, 20, 12, canvas, ("black", "white"))
    for col, row, string, fg, style, bg, alignment, check_space, check_canvas, vertical in calls:
        if vertical:
            args = (col, row, string, fg, style, bg, alignment, check_canvas)
            mine = _outcome(plotext_speedups._add_vertical_string, ours, *args)
            plotexts = _plotexts("add_vertical_string", theirs, *args)
        else:
            args = (col, row, string, fg, style, bg, alignment, check_space, check_canvas)
            mine = _outcome(plotext_speedups._add_horizontal_string, ours, *args)
            plotexts = _plotexts("add_horizontal_string", theirs, *args)
        assert mine == plotexts, (args, vertical)
        for layer in ("marker", "fullground", "background", "style"):
            assert getattr(ours, layer) == getattr(theirs, layer), layer


@given(st.lists(st.tuples(st.integers(0, 6), st.integers(-5, 8)), min_size=1, max_size=60))
def test_fill_boundaries_match(points):
    x, y = [p[0] for p in points], [p[1] for p in points]
    assert plotext_speedups._get_fill_boundaries(x, y) == _originals()["get_fill_boundaries"](x, y)


@given(st.lists(st.tuples(st.integers(0, 6), st.integers(-5, 8), st.sampled_from("ox"), st.sampled_from("rg"),
                          st.sampled_from([None, "bold"])), min_size=1, max_size=60),
       st.one_of(st.integers(-3, 5), st.just("internal")))
def test_fill_data_matches(points, level):
    x, y, markers, colours, styles = ([p[i] for p in points] for i in range(5))
    ours = plotext_speedups._fill_data(list(x), list(y), level, list(markers), list(colours), list(styles))
    assert ours == _originals()["fill_data"](list(x), list(y), level, list(markers), list(colours), list(styles))


@given(st.lists(st.tuples(st.integers(-3, 9), st.integers(-3, 9), st.sampled_from("ox"), st.sampled_from("rg"),
                          st.sampled_from([None, "bold"])), max_size=40), st.integers(0, 7), st.integers(0, 7))
def test_remove_outsiders_keeps_the_same_points(points, width, height):
    x, y, markers, colours, styles = ([p[i] for p in points] for i in range(5))
    ours = plotext_speedups._remove_outsiders(x, y, width, height, markers, colours, styles)
    assert ours == _originals()["remove_outsiders"](x, y, width, height, markers, colours, styles)


def test_short_or_missing_lists_fail_or_pass_as_plotexts_do():
    """A list shorter than the points, or none besides x and y: plotext's own answer (or failure)."""
    for drop_in, name, args in ((plotext_speedups._remove_outsiders, "remove_outsiders", ([0, 1], [0, 1], 3, 3)),
                                (plotext_speedups._fill_data, "fill_data", ([0, 1], [2, 3], 0))):
        for other in ((), (["o"],)):
            assert _outcome(drop_in, *args, *other) == _outcome(_originals()[name], *args, *other), (name, other)


def test_fill_boundaries_and_fill_with_nan_are_plotexts():
    nan = float("nan")
    for x, y in (([0, 0, 0], [nan, 1, 5]), ([0, nan, 1], [1, 2, 3])):
        ours = plotext_speedups._get_fill_boundaries(list(x), list(y))
        theirs = _originals()["get_fill_boundaries"](list(x), list(y))
        assert repr(ours) == repr(theirs)
    plotext_speedups.uninstall()
    try:
        theirs = _utility.fill_data([0, 0, 0], [nan, 1, 5], "internal", ["o"] * 3)
    finally:
        plotext_speedups.install()
    assert repr(_utility.fill_data([0, 0, 0], [nan, 1, 5], "internal", ["o"] * 3)) == repr(theirs)


def test_hd_group_of_floats_is_not_answered_from_the_memo_of_ints():
    assert plotext_speedups._hd_group([2], [2], [2], [4])[0] == [1]
    floats = plotext_speedups._hd_group([2.0], [2.0], [2], [4])
    assert floats == _originals()["hd_group"]([2.0], [2.0], [2], [4])
    assert type(floats[0][0]) is float


def test_fill_boundaries_of_nothing_fail_as_plotexts_do():
    with pytest.raises(ValueError):
        plotext_speedups._get_fill_boundaries([], [])


@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), min_size=1, max_size=80))
def test_hd_group_is_plotexts_and_its_results_are_not_shared(points):
    x, y = [p[0] for p in points], [p[1] for p in points]
    xf, yf = [2] * len(x), [4] * len(x)
    expected = _originals()["hd_group"](x, y, xf, yf)
    first = plotext_speedups._hd_group(x, y, xf, yf)
    first[0].append("mutated")  # a caller changing what it got back must not change the next answer
    assert plotext_speedups._hd_group(x, y, xf, yf) == expected
    assert first[1:] == expected[1:]


nested = st.recursive(st.integers(-5, 5) | st.text(max_size=2) | st.tuples(st.integers()), st.lists, max_leaves=30)


@given(st.lists(nested, max_size=8))
def test_join_flattens_as_plotexts(data):
    assert plotext_speedups._join(data) == _originals()["join"](data)


coordinate = st.one_of(st.integers(-300, 300), st.floats(-300, 300, allow_nan=False), st.just(float("nan")),
                       st.none())


@given(st.tuples(coordinate, coordinate), st.tuples(coordinate, coordinate))
def test_get_line_steps_as_plotexts(x, y):
    x, y = list(x), list(y)
    try:
        expected = _originals()["get_line"](list(x), list(y))
    except TypeError:  # None mixed with numbers: plotext's own fails, and so does ours (it is plotext's)
        return
    assert plotext_speedups._get_line(list(x), list(y)) == expected


values = st.one_of(st.floats(-1e6, 1e6), st.integers(-10**6, 10**6), st.none(), st.just(float("nan")),
                   st.just(float("inf")))


@given(st.lists(values, max_size=30), st.tuples(st.one_of(st.floats(-1e3, 1e3), st.integers(-50, 50)),
                                                st.one_of(st.floats(-1e3, 1e3), st.integers(-50, 50))),
       st.integers(0, 400))
def test_matrix_data_is_plotexts(data, lim, bins):
    """Canvas cells of values (ints, floats, None, NaN, infinity) over any limits (equal limits fail alike)."""
    ours = _outcome(plotext_speedups._get_matrix_data, list(data), list(lim), bins)
    theirs = _outcome(_originals()["get_matrix_data"], list(data), list(lim), bins)
    assert repr(ours) == repr(theirs)


def test_matrix_data_rounds_halves_as_plotext_does():
    """Values that land on .5 (and a hair below, which plotext's 8-digit rounding lifts) across a canvas, and values
    whose 8-digit rounding meets a half exactly at a cell's edge (k - 0.5e-8: halves go up, into cell k)."""
    data = [i / 8 for i in range(-40, 41)] + [0.49999999999, 2.4999999999, 1e-9]
    for bins in (2, 3, 9, 117):
        assert plotext_speedups._get_matrix_data(data, [-5, 5], bins) == \
            _originals()["get_matrix_data"](data, [-5, 5], bins)
    edges = [k - 0.5 - 0.5e-8 for k in range(1, 5)]
    assert plotext_speedups._get_matrix_data(edges, [0, 1], 2) == [1, 2, 3, 4]
    assert _originals()["get_matrix_data"](edges, [0, 1], 2) == [1, 2, 3, 4]


line_points = st.lists(st.one_of(st.integers(-40, 40), st.floats(-40, 40), st.just(float("nan"))), max_size=12)


@given(line_points, line_points, st.lists(st.sampled_from("ox"), max_size=14), st.lists(st.sampled_from("rg"),
                                                                                       max_size=14))
def test_get_lines_joins_points_as_plotexts(x, y, markers, colours):
    """Whole numbers (what canvas cells are), floats and NaN; marker and colour lists shorter or longer than the
    points: the same cells and lists, or the same failure."""
    ours = _outcome(plotext_speedups._get_lines, list(x), list(y), list(markers), list(colours))
    theirs = _outcome(_originals()["get_lines"], list(x), list(y), list(markers), list(colours))
    assert repr(ours) == repr(theirs)


@given(st.lists(st.tuples(st.integers(-60, 60), st.integers(-60, 60)), min_size=1, max_size=20))
def test_get_lines_of_canvas_cells_is_plotexts(points):
    x, y = [p[0] for p in points], [p[1] for p in points]
    markers, colours = ["o"] * len(x), ["red"] * len(x)
    assert plotext_speedups._get_lines(x, y, markers, colours) == _originals()["get_lines"](x, y, markers, colours)


def test_get_lines_of_neighbouring_cells_keeps_each_points_marker():
    """Points a cell apart (a dense curve), a long step, a vertical run: each point's own marker and colour."""
    x, y = [0, 1, 2, 3, 9, 9, 10], [5, 5, 6, 6, 6, 1, 2]
    markers, colours = list("abcdefg"), [f"c{i}" for i in range(7)]
    assert plotext_speedups._get_lines(x, y, markers, colours) == _originals()["get_lines"](x, y, markers, colours)


def test_uninstall_restores_plotexts_own():
    plotext_speedups.uninstall()
    assert _utility.hd_group is not plotext_speedups._hd_group
    assert _matrix.matrix_class.set_matrices is not plotext_speedups._set_matrices
    assert plotext_speedups.install()
    assert _utility.hd_group is plotext_speedups._hd_group


async def test_every_chart_builds_the_same_with_and_without_them():
    """Each view's chart over a few scenarios (batch up and down, context, a pinned baseline, fp8 KV)."""
    app = RooflineApp(ScenarioForm(model_ref="llama-3.1-70b", tp=4, batch=16))
    compared = 0
    async with app.run_test(size=(160, 50)) as pilot:
        for view in ("1", "2", "3", "4", "7"):
            await pilot.press(view)
            await pilot.pause()
            for keys in ("+", "+ +", "]", "p -", "-"):
                await pilot.press(*keys.split())
                await pilot.pause()
                for chart in app.query(PlotWidget):
                    if not chart.display or not chart.size.width or chart._last is None:
                        continue
                    width, height = chart.size
                    fast = chart._build_rows(width, height)
                    plotext_speedups.uninstall()
                    try:
                        slow = chart._build_rows(width, height)
                    finally:
                        plotext_speedups.install()
                    assert fast == slow, (view, keys, type(chart).__name__)
                    compared += 1
    assert compared >= 25
