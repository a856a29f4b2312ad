"""The one line that says what is on screen (explorer header, slide footer, screenshots)."""

from roofline.tui.views.summary import context_warning, scenario_summary
from tests.conftest import scenario


def test_the_scenario_line_names_device_count_model_precisions_batch_lengths_and_estimate():
    s = scenario("h100-sxm", "llama-3.1-70b", batch=16, prompt=1024, output=256, tp=4, weights="fp8")
    expected = "H100 SXM5 80GB x4 / Llama 3.1 70B fp8, KV bf16 / batch 16 / 1,024 -> 256 / bound"
    assert scenario_summary(s, "bound") == expected


def test_a_context_past_the_models_maximum_is_named():
    s = scenario("h100-sxm", "llama-3.1-8b", prompt=200_000, output=256)
    warning = context_warning(s)
    assert "200,256" in warning and "131,072" in warning
    assert context_warning(scenario("h100-sxm", "llama-3.1-8b")) == ""


async def test_the_explorer_header_carries_the_scenario_line():
    from textual.widgets import Static

    from roofline.tui.app import RooflineApp
    from roofline.tui.inputs.form import ScenarioForm

    app = RooflineApp(ScenarioForm(prompt_tokens=200_000))
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        line = str(app.query_one("#scenario-line", Static).render())
        assert line == scenario_summary(app.explorer.results.scenario, "bound")
        await pilot.press("a")
        await pilot.pause()
        assert str(app.query_one("#scenario-line", Static).render()).endswith("/ expected")
        assert "past Llama 3.1 8B's maximum" in str(app.query_one("#memory-bar").render())
