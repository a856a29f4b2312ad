"""Charts (issue 20, item 7): legends never cover data, the roofline's decades are evenly spaced, the ridge label
sits above the roof (never on it), and the context chart has no cryptic axis glyphs."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from roofline.presets import load_catalog
from roofline.tui.app import RooflineApp
from roofline.tui.explorer.charts import BatchSweepChart, ContextSweepChart, RooflineChart
from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.views.plot_layout import even_decades

CATALOG = load_catalog(user_dir=None)
LEGEND = ("achievable roof", "spec roof (in use)", "prefill ops", "decode ops", "decode step")


def _app(**form) -> RooflineApp:
    return RooflineApp(ScenarioForm(**form), catalog=CATALOG)


@given(st.integers(min_value=-3, max_value=15), st.floats(min_value=0.1, max_value=8), st.integers(3, 60),
       st.integers(0, 10))
def test_even_decades_keeps_the_data_in_view_under_the_headroom(y_low, span, rows, headroom):
    y_high, per_decade = even_decades(y_low, y_low + span, rows, headroom)
    assert y_high >= y_low + span - 1e-9  # the data's top is on the chart
    assert (rows - 1) == (y_high - y_low) * per_decade or abs((rows - 1) - (y_high - y_low) * per_decade) < 1e-6
    if per_decade == int(per_decade) and per_decade >= 2:
        # whole rows per decade, and the headroom's rows free above the data's top row
        assert (rows - 1) - round(span * per_decade) >= headroom or span * per_decade > rows - 1 - headroom


def _plot_rows(text: str) -> list[str]:
    lines = text.splitlines()
    top = next(i for i, line in enumerate(lines) if "┌" in line)
    bottom = next(i for i, line in enumerate(lines) if "└" in line)
    return lines[top + 1:bottom]


async def test_the_roofline_legend_sits_above_every_roof_and_point_and_the_ridge_label_above_the_roof():
    app = _app(batch=16)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        rows = _plot_rows(app.query_one(RooflineChart).render().plain)
        legend_rows = [i for i, row in enumerate(rows) if any(name in row for name in LEGEND)]
        label_row = next(i for i, row in enumerate(rows) if "ridge 295 FLOP/B" in row)
        assert legend_rows == list(range(len(LEGEND))) and label_row > legend_rows[-1]
        # nothing plotted above the label's row (points o + @, roofs in braille), bar the legend's own markers
        for row in rows[:label_row]:
            edge = min(i for i in (row.find("┤"), row.find("│")) if i >= 0)
            body = row[edge + 1:]
            for name in LEGEND:
                body = body.replace(name, "")
            body = body[4:]  # the legend's markers
            assert not any(ch in body for ch in "o+@") and not any(0x2800 <= ord(ch) <= 0x28FF for ch in body)
        # the roof runs on the very next row, right of the ridge line
        assert any(0x2800 <= ord(ch) <= 0x28FF for ch in rows[label_row + 1])
        ticks = [i for i, row in enumerate(rows) if "┤" in row.split("│")[0] or row.lstrip()[:1].isdigit()]
        gaps = {b - a for a, b in zip(ticks, ticks[1:], strict=False)}
        assert len(gaps) == 1, ticks  # every decade the same number of rows


async def test_the_baseline_point_is_not_hidden_under_a_legend_at_80x24():
    app = _app(batch=4)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("p", "plus", "plus", "plus")
        await pilot.pause()
        text = app.query_one(RooflineChart).render().plain
        # too short for a legend: the title names the markers
        assert not any(name in text for name in ("spec roof (in use)", "achievable roof", "baseline step"))
        assert "o decode" in text and "@" in text
        assert "B" in "".join(_plot_rows(text)).replace("FLOP/B", "")


async def test_the_context_chart_has_no_legend_over_its_curve_and_no_l_glyphs():
    app = _app()
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("3")
        await pilot.pause()
        text = app.query_one(ContextSweepChart).render().plain
        assert "⅃" not in text and " L " not in text
        assert "o tok/s per sequence" in text and "x KV traffic % of step" in text and "| model max 128k" in text
        first = _plot_rows(text)[0]
        assert first.split("┤", 1)[1].startswith("o")  # the curve starts in the top-left corner, in sight


async def test_the_batch_chart_names_its_markers_in_the_title_not_a_legend():
    app = _app(batch=8)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("2")
        await pilot.pause()
        text = app.query_one(BatchSweepChart).render().plain
        assert "o aggregate grows, x per-sequence falls; @ B=8" in text
        assert "per-sequence tok/s" not in text and "aggregate tok/s" not in text  # the old legend's lines
        assert math.isfinite(len(_plot_rows(text)))


def test_roofline_snapshot_legend_and_ridge_label(snap_compare):
    assert snap_compare(_app(batch=16), terminal_size=(160, 50))


def test_context_snapshot_without_legend(snap_compare):
    assert snap_compare(_app(), terminal_size=(80, 24), press=["3"])
