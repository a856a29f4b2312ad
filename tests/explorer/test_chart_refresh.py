"""Charts repaint only the rows a change touched, and what they show equals a full redraw."""

from __future__ import annotations

import pytest
from textual.geometry import Region

from roofline.tui.app import RooflineApp
from roofline.tui.explorer.charts import BatchSweepChart, RooflineChart
from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.perf import switch


def _full_redraw(chart) -> str:
    chart._shown = None
    return chart.render().plain


async def test_a_batch_change_refreshes_some_rows_and_matches_a_full_redraw():
    app = RooflineApp(ScenarioForm(batch=16))
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        chart = app.query_one(RooflineChart)
        width, height = chart.size
        regions: list[Region] = []
        original = chart.refresh

        def spy(*areas, **kwargs):
            regions.extend(areas)
            return original(*areas, **kwargs)

        chart.refresh = spy
        await pilot.press("plus")
        await pilot.pause()
        assert regions, "the decode points moved, so some rows must be repainted"
        assert all(r.height == 1 and r.width == width for r in regions)
        assert len(regions) < height // 2  # the roofs, axes and legend stay put
        shown = chart.render().plain
        assert shown == _full_redraw(chart)


async def test_the_batch_sweep_marks_this_batch_on_both_curves_and_a_change_moves_only_those_rows():
    """The scenario's batch is an ``@`` on each curve, named in the title with its value; a line across the plot
    would change every row of the chart on each keystroke."""
    app = RooflineApp(ScenarioForm(batch=8))
    async with app.run_test(size=(160, 50)) as pilot:
        app.explorer.action_show_view("batch")
        await pilot.pause()
        chart = app.query_one(BatchSweepChart)
        width, height = chart.size
        assert "@ B=8;" in chart.render().plain
        decode = app.explorer.results.chosen(app.explorer.achievable).decode
        _, batch, agg, per_seq = chart._last
        assert (batch, agg, per_seq) == (8, decode.tokens_per_s, decode.tokens_per_s_per_seq)
        regions: list[Region] = []
        original = chart.refresh
        chart.refresh = lambda *areas, **kw: regions.extend(areas) or original(*areas, **kw)
        await pilot.press("plus")
        await pilot.pause()
        shown = chart.render().plain
        assert "@ B=16;" in shown and "B=8;" not in shown
        assert shown.count("@") >= 3  # one in the title, one on each curve
        assert 0 < len(regions) < height // 3
        assert shown == _full_redraw(chart)


async def test_the_context_sweep_marks_the_context_the_step_is_shown_at():
    from roofline.tui.explorer.charts import ContextSweepChart

    app = RooflineApp(ScenarioForm(prompt_tokens=1024, output_tokens=256))
    async with app.run_test(size=(160, 50)) as pilot:
        app.explorer.action_show_view("context")
        await pilot.pause()
        chart = app.query_one(ContextSweepChart)
        assert f"this step, context {app.explorer.results.shown_context:,.0f}" in chart.render().plain
        assert app.explorer.results.shown_context == 1024 + 256 / 2  # mean of the generation's decode contexts
        _, context, per_seq, kv_share, _max_context = chart._last
        assert per_seq == pytest.approx(app.explorer.results.bound.decode.tokens_per_s_per_seq, rel=0.02)
        assert 0 < kv_share < 1
        box = app.query_one("#shown_context")
        box.value = "8192"
        await pilot.pause()
        shown = chart.render().plain
        assert "this step, context 8,192" in shown and shown.count("@") >= 3  # the title's, one on each curve
        assert shown == _full_redraw(chart)


async def test_the_same_data_repaints_nothing_and_a_resize_redraws_everything():
    app = RooflineApp(ScenarioForm())
    async with app.run_test(size=(120, 40)) as pilot:
        app.explorer.action_show_view("batch")
        await pilot.pause()
        chart = app.query_one(BatchSweepChart)
        chart.render()
        calls = []
        original = chart.refresh
        chart.refresh = lambda *areas, **kw: calls.append(areas) or original(*areas, **kw)
        chart.show(*chart._last)
        assert calls == []
        await pilot.resize_terminal(100, 30)
        await pilot.pause()
        assert chart.render().plain == _full_redraw(chart)
        assert len(chart.render().plain.splitlines()) == chart.size.height


async def test_gguf_weights_draw_the_int8_roof_their_gemms_can_reach():
    app = RooflineApp(ScenarioForm(hardware_id="rtx-4090", model_ref="llama-3-8b", weights="q4_0"))
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        text = app.query_one(RooflineChart).render().plain
        assert "int8 roof (GGUF GEMMs)" in text
    app = RooflineApp(ScenarioForm(hardware_id="rtx-4090", model_ref="llama-3-8b"))
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        assert "int8 roof" not in app.query_one(RooflineChart).render().plain


@pytest.mark.skipif(not switch.textual_speedups() or not switch.plotext_speedups(),
                    reason="tests a speed-up path (tui/perf/); ROOFLINE_SPEEDUPS=0 runs the public one")
async def test_light_themes_draw_named_colours_dark_enough_to_read():
    """WCAG contrast of each light-theme shade against white is at least 4.5:1 (yellow on a light canvas was
    about 2.3:1); the chart's markers use them on light themes and plotext's own colours on dark ones."""
    from roofline.tui.app import RooflineApp
    from roofline.tui.explorer.charts import RooflineChart
    from roofline.tui.inputs.form import ScenarioForm
    from roofline.tui.perf.plotext_rows import LIGHT_THEME_COLOURS

    def luminance(rgb):
        def channel(c):
            c /= 255
            return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
        r, g, b = (channel(v) for v in rgb)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    for rgb in LIGHT_THEME_COLOURS.values():
        assert (1.05) / (luminance(rgb) + 0.05) >= 4.5, rgb

    app = RooflineApp(ScenarioForm())
    async with app.run_test(size=(120, 40)) as pilot:
        app.theme = "textual-light"
        await pilot.pause(0.3)
        chart = app.query_one(RooflineChart)
        step_colours = {seg.style.color.triplet for row in chart._current_rows() for seg in row
                        if "@" in seg.text and seg.style.color is not None and seg.style.color.triplet}
        assert (0, 115, 0) in {tuple(c) for c in step_colours}  # the decode step's green, darkened
