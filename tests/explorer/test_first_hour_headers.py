"""Issue 30 item 10: what the headers say matches what the numbers under them are: the scenario line names the
serving operating point in serving mode, the Serving view's point says when serving mode is off, and the price field
shows the preset's price that Compare and the serving numbers use."""

from __future__ import annotations

from textual.widgets import Input

from roofline.presets import load_catalog
from roofline.tui.app import RooflineApp
from roofline.tui.explorer.summary_widgets import ScenarioLine
from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.views.serving_data import chart_data

CATALOG = load_catalog()


def _line(app: RooflineApp) -> str:
    return str(app.query_one(ScenarioLine).render())


async def test_the_scenario_line_names_the_operating_point_in_serving_mode():
    app = RooflineApp(ScenarioForm(serving=True, concurrency=16), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        assert " / C=16 / " in _line(app) and "batch" not in _line(app)
        app.explorer.set_field("rate_per_s", 20.0)
        await pilot.pause()
        assert " / 20 req/s" in _line(app) and "batch" not in _line(app)
        app.explorer.set_field("serving", False)
        await pilot.pause()
        assert " / batch 1 / " in _line(app)


async def test_the_serving_views_point_says_when_serving_mode_is_off():
    app = RooflineApp(ScenarioForm(serving=False, concurrency=16), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        await pilot.press("8")  # the Serving view computes the numbers in static mode too
        await pilot.pause()
        label = chart_data(app.explorer.state.serving).point_label
        assert "serving mode off" in label and not label.startswith("here")
        app.explorer.set_field("serving", True)
        await pilot.pause()
        assert chart_data(app.explorer.state.serving).point_label == "here, C=16"


async def test_the_price_field_shows_the_preset_price_in_use():
    """H100 SXM's preset price is $3.78 per device-hour (presets/hardware/h100-sxm.toml), what Compare and the
    serving numbers use while the field is empty; a device without a price says none."""
    app = RooflineApp(ScenarioForm(hardware_id="h100-sxm"), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        price = CATALOG.hardware["h100-sxm"].price_usd_per_hour
        assert price == 3.78
        field = app.query_one("#price_per_device_hour", Input)
        assert field.value == "" and field.placeholder == "preset $3.78"
        unpriced = next(h for h in CATALOG.hardware.values() if h.price_usd_per_hour is None)
        app.explorer.set_field("hardware_id", unpriced.id)
        await pilot.pause()
        assert field.placeholder == "none"


def test_a_serving_slides_footer_names_its_operating_point_and_estimate():
    """The built-in deck's serving slide (slide 13: the frontier at C=64, under ``expected``): its footer line says
    C=64 and expected, not batch 1 and bound; a static slide keeps its batch and bound."""
    from roofline.presets.deck_file import builtin_deck_path, read_deck
    from roofline.tui.inputs.registry import FILE_KEY_TYPES
    from roofline.tui.talk.deck import build_slide
    from roofline.tui.views.slide_serving import slide_scenario_line

    deck = read_deck(builtin_deck_path(), keys=FILE_KEY_TYPES)
    built = [build_slide(slide, CATALOG) for slide in deck.slides]
    serving = [b for b in built if b.slide.view == "serving"]
    assert serving
    for b in serving:
        line = slide_scenario_line(b.slide, b.form, b.results)
        assert f" / C={b.form.concurrency:,} / " in line and line.endswith("expected") and "batch" not in line
    static = next(b for b in built if b.slide.view == "roofline")
    assert " / batch " in slide_scenario_line(static.slide, static.form, static.results)
