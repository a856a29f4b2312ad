"""Pilot tests: the serving mode in the Batching pane, the headline in serving mode, the Serving view and Compare's
serving columns follow the model's functions called directly."""

from __future__ import annotations

from textual.widgets import Checkbox, DataTable, Input

from roofline.models.serving import frontier, max_concurrency_for_targets
from roofline.presets import load_catalog
from roofline.tui.app import RooflineApp
from roofline.tui.explorer.charts import ServingChart
from roofline.tui.explorer.headline import Headline
from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.views.serving_data import COMPARE_COLUMNS, serving_settings

CATALOG = load_catalog()


def _app(**form) -> RooflineApp:
    return RooflineApp(ScenarioForm(**form), catalog=CATALOG)


def _reading(app: RooflineApp, metric_id: str):
    return app.query_one(Headline).readings[metric_id]


def _expected_point(app: RooflineApp, concurrency: int):
    """The frontier point the model gives for the explorer's scenario at ``concurrency``."""
    screen = app.explorer
    s = screen.results.scenario
    st = serving_settings(screen.form, s)
    return frontier(s, st.mix, [concurrency], screen.ceiling.estimate_name, st.options).points[0]


async def test_static_by_default_and_the_serving_fields_hidden():
    app = _app()
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        assert not app.explorer.form.serving
        assert _reading(app, "m-per-seq").label == "ceiling tok/s/seq"
        assert not app.query_one("#concurrency", Input).parent.display  # shown in serving mode only


async def test_switching_to_serving_and_changing_the_concurrency_follows_the_frontier():
    app = _app()
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        app.query_one("#serving", Checkbox).value = True  # the switch in the Batching pane
        await pilot.pause()
        assert app.explorer.form.serving
        assert app.query_one("#concurrency", Input).parent.display
        p = _expected_point(app, 16)  # the default concurrency
        assert _reading(app, "m-per-seq").label == "tok/s per user"
        assert _reading(app, "m-per-seq").text == f"{p.tokens_per_s_per_user:,.1f}"
        assert _reading(app, "m-idle").label == "ITL ms"
        assert _reading(app, "m-idle").text == f"{p.itl_s * 1e3:,.1f}"
        field = app.query_one("#concurrency", Input)
        field.focus()
        field.value = ""
        await pilot.press("1", "2", "8")
        await pilot.pause()
        assert app.explorer.form.concurrency == 128
        p128 = _expected_point(app, 128)
        assert app.explorer.serving.point == p128
        assert _reading(app, "m-aggregate").text == (f"{p128.tokens_per_s_per_device:,.0f}"
                                                     if p128.tokens_per_s_per_device >= 1000
                                                     else f"{p128.tokens_per_s_per_device:,.1f}")
        assert "C=128" in str(app.query_one("#verdict").render())
        app.query_one("#serving", Checkbox).value = False  # back to the static batch
        await pilot.pause()
        assert _reading(app, "m-per-seq").label == "ceiling tok/s/seq"
        assert _reading(app, "m-per-seq").text == f"{app.explorer.results.bound.decode.tokens_per_s_per_seq:,.1f}"


async def test_the_serving_view_shows_the_frontier_and_the_targets_summary():
    app = _app(serving=True, concurrency=32)
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.press("8")
        await pilot.pause()
        await pilot.pause()
        screen = app.explorer
        s = screen.results.scenario
        st = serving_settings(screen.form, s)
        t = max_concurrency_for_targets(s, st.mix, itl_s=0.05, ttft_s=1.0, estimate_name="bound",
                                        options=st.options)
        summary = str(app.query_one("#serving-summary").render())
        assert f"up to C={t.max_concurrency:,}" in summary
        chart = app.query_one(ServingChart).render().plain
        assert "frontier" in chart and "here, C=32" in chart and "ITL target" in chart
        await pilot.press("a")  # achievable ceilings: the expected estimate
        await pilot.pause()
        assert screen.serving.estimate_name == "expected" and screen.serving.point == _expected_point(app, 32)


async def test_the_serving_view_computes_in_static_mode_too_and_pins_a_baseline():
    app = _app(concurrency=8)
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.press("p")  # pin H100
        app.explorer.set_field("hardware_id", "h200")
        await pilot.press("8")
        await pilot.pause()
        await pilot.pause()
        r = app.explorer.serving
        assert r is not None and r.baseline_curve is not None
        assert "baseline" in app.query_one(ServingChart).render().plain
        assert _reading(app, "m-per-seq").label == "ceiling tok/s/seq"  # the headline stays static


async def test_a_prefix_longer_than_the_prompt_marks_its_field():
    app = _app(serving=True)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        field = app.query_one("#prefix_tokens", Input)
        field.focus()
        field.value = ""
        await pilot.press(*"5000")
        await pilot.pause()
        assert "prefix_tokens" in app.explorer.invalid_fields
        assert "prefix tokens" in str(app.query_one("#status").render())


async def test_compare_gains_serving_columns_in_serving_mode():
    app = _app(serving=True)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("6")
        await pilot.pause()
        await pilot.pause()
        table = app.query_one("#compare-table", DataTable)
        labels = [str(c.label) for c in table.columns.values()]
        assert labels[2:6] == list(COMPARE_COLUMNS)  # right after device and TP (issue 30 item 8)
        row = table.get_row("h100-sxm")
        assert len(row) == len(labels)
        assert row[3] == "-"  # no rate set: no devices for it
        assert row[4].startswith("$")  # H100's own price
        app.query_one("#serving", Checkbox).value = False
        await pilot.pause()
        await pilot.pause()
        assert [str(c.label) for c in table.columns.values()] == labels[:2] + labels[6:]
