"""The Batch and Context charts draw ``expected``'s band (issue 18) under the achievable ceilings, and nothing of it
under the spec ones, with plotext's speed-ups on and off and at both terminal sizes the explorer supports."""

from __future__ import annotations

import pytest

from roofline.presets import load_catalog
from roofline.tui.app import RooflineApp
from roofline.tui.explorer.charts import BatchSweepChart, ContextSweepChart
from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.views.results import ExpectedRange

CATALOG = load_catalog(user_dir=None)


def _plot_area(text: str) -> str:
    """The rows between the frame's top and bottom, between its left and right sides (no tick labels, title or axis
    labels)."""
    lines = text.splitlines()
    top = next(i for i, line in enumerate(lines) if "┌" in line)
    bottom = next(i for i, line in enumerate(lines) if "└" in line)
    left, right = lines[top].index("┌") + 1, lines[top].rindex("┐")
    return "\n".join(line[left:right] for line in lines[top + 1:bottom])


@pytest.mark.parametrize("speedups", ["1", "0"])
@pytest.mark.parametrize("size", [(160, 50), (80, 24)])
async def test_the_batch_chart_has_the_band_when_achievable_and_none_in_spec_mode(monkeypatch, speedups, size):
    monkeypatch.setenv("ROOFLINE_SPEEDUPS", speedups)
    app = RooflineApp(ScenarioForm(batch=16), catalog=CATALOG)
    async with app.run_test(size=size) as pilot:
        await pilot.press("2")
        await pilot.pause()
        chart = app.query_one(BatchSweepChart)
        spec_text = chart.render().plain
        assert len(chart._last) == 4  # bound: no band argument
        assert "range" not in spec_text and "." not in _plot_area(spec_text)

        await pilot.press("a")  # the achievable ceilings: expected, with its band
        await pilot.pause()
        band = chart._last[-1]
        assert isinstance(band, ExpectedRange) and band is app.explorer.results.batch_band()
        text = chart.render().plain
        assert ". range" in text or ". expected range" in text  # the y label names the band's marker
        assert "." in _plot_area(text)  # the band's lines: under the curves, showing where they part
        # curves and markers still drawn over it
        area = _plot_area(text)
        assert "o" in area and "x" in area and "@" in area

        await pilot.press("a")  # back to spec: the band goes
        await pilot.pause()
        assert chart.render().plain == spec_text


async def test_the_context_chart_has_the_band_when_achievable_and_none_in_spec_mode():
    app = RooflineApp(ScenarioForm(), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("3")
        await pilot.pause()
        chart = app.query_one(ContextSweepChart)
        assert len(chart._last) == 5 and "." not in _plot_area(chart.render().plain)
        assert ("context band",) not in app.explorer.results._sweeps  # nothing computed for spec mode
        await pilot.press("a")
        await pilot.pause()
        assert chart._last[-1] is app.explorer.results.context_band()
        text = chart.render().plain
        assert "o tok/s per sequence; . expected range" in text
        # the context axis is linear in tok/s: the band's two lines stand apart from the curve for many columns
        assert _plot_area(text).count(".") > 40


def test_batch_band_snapshot_achievable(snap_compare):
    """The Batch view under the achievable ceilings at 160x50: the band's dotted lines under both curves."""
    assert snap_compare(RooflineApp(ScenarioForm(batch=16), catalog=CATALOG), terminal_size=(160, 50),
                        press=["2", "a"])
