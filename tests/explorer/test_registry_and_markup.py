"""The input registry drives the fields, and text a person types is never markup."""

from textual.widgets import Input, Static

from roofline.presets import load_catalog
from roofline.tui.app import RooflineApp
from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.inputs.registry import BY_NAME

CATALOG = load_catalog()


async def test_a_loaded_override_shows_in_its_field(tmp_path):
    """Was a bug: a scenario saved with a bandwidth override loaded into the model while the field said
    "preset"; every input of the file now reaches its widget."""
    path = tmp_path / "s.toml"
    path.write_text('[scenario]\nhardware = "h200"\nmem_bw_override_gb_per_s = 2500.0\nprice_per_device_hour = 3.5\n'
                    'capacity_override_gib = 100.0\nbatch = 4\n')
    app = RooflineApp(catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        assert app.explorer.load_scenario_file(path)
        await pilot.pause()
        assert app.explorer.results.scenario.hardware.mem_bw_bytes_per_s == 2500e9
        assert app.query_one("#mem_bw_override_gb_per_s", Input).value == "2500"
        assert app.query_one("#price_per_device_hour", Input).value == "3.5"
        assert app.query_one("#capacity_override_gib", Input).value == "100"
        assert app.query_one("#batch", Input).value == "4"


async def test_markup_typed_into_a_field_is_shown_as_text():
    """Was a crash: `[/` in a field reached a markup Static through the status line (MarkupError)."""
    app = RooflineApp(ScenarioForm(batch=8), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        for text in ("[/", "[@click=quit]", "[b]", "[/x]"):  # within the 16-character field
            box = app.query_one("#batch", Input)
            box.focus()
            box.value = text
            await pilot.pause()  # Input.Changed, then the panel's message to the screen
            await pilot.pause()
            assert app.is_running
            status = str(app.query_one("#status", Static).render())
            assert text.strip() in status  # quoted as typed, not interpreted
            assert app.explorer.form.batch == 8


def test_the_default_prompt_is_the_cores_everywhere():
    """One default per input: the core's Batching, the registry, the form and the CLI agree (512 vs 1024 once)."""
    from roofline.models.scenario import Batching
    from roofline.tui.cli.main import build_parser
    from roofline.tui.cli.scenario_flags import form_from_args

    assert BY_NAME["prompt_tokens"].default == Batching().prompt_tokens == ScenarioForm().prompt_tokens
    args = build_parser().parse_args(["report"])
    assert form_from_args(args).prompt_tokens == Batching().prompt_tokens


async def test_engine_and_topology_are_explorer_fields():
    """The serving stack and the TP links reach the explorer's numbers (issue 18: engine shown and chosen)."""
    from textual.widgets import Select

    app = RooflineApp(ScenarioForm(hardware_id="a100-pcie-80gb", model_ref="llama-3.1-70b", tp=4), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        expected_generic = app.explorer.results.expected.decode.step_time_s
        app.query_one("#engine", Select).value = "rocm-eager"
        await pilot.pause()
        assert app.explorer.results.scenario.engine == "rocm-eager"
        assert app.explorer.results.expected.decode.step_time_s > expected_generic  # eager launches cost more
        app.query_one("#topology", Select).value = "nvswitch"
        await pilot.pause()
        assert app.explorer.results.scenario.topology == "nvswitch"
        app.query_one("#topology", Select).value = "auto"
        await pilot.pause()
        assert app.explorer.results.scenario.topology is None
        assert "rocm-eager" in str(app.query_one("#scenario-line").render())  # the top line names the engine
