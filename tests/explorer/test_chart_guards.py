"""Charts survive any in-range input, say "enlarge the terminal" below a usable size, and keep the spec and
achievable roofs apart (issue: the spec roof hid under the achievable one)."""

import pytest

from roofline.presets import load_catalog
from roofline.tui.app import RooflineApp
from roofline.tui.explorer.charts import BatchSweepChart, RooflineChart
from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.views.plot_layout import MIN_CHART_HEIGHT, MIN_CHART_WIDTH

CATALOG = load_catalog()


def _text(chart) -> str:
    return "\n".join("".join(seg.text for seg in row) for row in chart._current_rows())


@pytest.mark.parametrize("peak_tflops", [0.001, 0.01, 10_000_000.0])
async def test_extreme_peak_overrides_do_not_crash_the_charts(peak_tflops):
    """Was a crash: a 0.001 TFLOP/s peak (inside the field's range) raised IndexError in plotext."""
    app = RooflineApp(ScenarioForm(peak_override_tflops=peak_tflops), catalog=CATALOG)
    async with app.run_test(size=(120, 40)) as pilot:
        for view in ("2", "3", "4", "1"):  # the roofline last: a hidden chart has no rows
            await pilot.press(view)
            await pilot.pause()
            assert app.is_running
        text = _text(app.query_one(RooflineChart))
        assert "roof" in text or "cannot be drawn" in text


async def test_a_chart_below_its_usable_size_asks_for_a_larger_terminal():
    app = RooflineApp(catalog=CATALOG)
    async with app.run_test(size=(50, 15)) as pilot:
        await pilot.pause()
        chart = app.query_one(RooflineChart)
        width, height = chart.size
        assert width < MIN_CHART_WIDTH or height < MIN_CHART_HEIGHT
        assert "enlarge the terminal" in _text(chart)


async def test_the_roof_in_use_is_named_and_the_other_drawn_apart():
    app = RooflineApp(catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        built = app.query_one(RooflineChart).plt.build()
        assert "spec roof (in use)" in built and "achievable roof" in built
        assert "(spec)" in built  # the title names the ceilings in use
        await pilot.press("a")
        await pilot.pause()
        built = app.query_one(RooflineChart).plt.build()
        assert "achievable roof (in use)" in built and "spec roof (bound)" in built
        assert "(achievable)" in built
        ridge = app.explorer.results.achievable.ridge_flops_per_byte
        from roofline.tui.views.formatting import flop_per_byte

        assert f"ridge {flop_per_byte(ridge)} FLOP/B" in built  # the achievable ridge, not the spec's 295
        assert app.query_one(BatchSweepChart) is not None
