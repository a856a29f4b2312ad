"""The Workload pane's config.json field: a typed path loads that model, a bad one says why and keeps the last good."""

from __future__ import annotations

import json

from textual.widgets import Input, Select, Static

from roofline.presets import load_catalog
from roofline.tui.app import RooflineApp
from roofline.tui.inputs.form import ScenarioForm

CATALOG = load_catalog()
TINY = {"model_type": "llama", "hidden_size": 512, "intermediate_size": 1024, "num_hidden_layers": 4,
        "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 1000}


async def _submit_path(app: RooflineApp, pilot, path: str) -> None:
    field = app.query_one("#config_path", Input)
    field.focus()
    field.value = path
    await pilot.press("enter")
    await pilot.pause()


async def test_a_typed_config_json_loads_that_model(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(TINY), encoding="utf-8")
    app = RooflineApp(ScenarioForm(), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        await _submit_path(app, pilot, str(path))
        assert app.explorer.form.model_ref == str(path)
        assert app.explorer.results.scenario.model.num_layers == 4
        assert app.query_one("#model_ref", Select).value == str(path)
        summary = str(app.query_one("#model-summary", Static).render())
        assert "4 layers, 8 heads, 2 KV heads" in summary


async def test_a_missing_config_json_is_an_error_not_another_model(tmp_path):
    app = RooflineApp(ScenarioForm(), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        before = app.explorer.results.scenario.model.id
        await _submit_path(app, pilot, str(tmp_path / "nope" / "config.json"))
        assert app.explorer.results.scenario.model.id == before == "llama-3.1-8b"
        status = str(app.query_one("#status", Static).render())
        assert "config.json" in status and "nope" in status
        assert app.query_one("#config_path", Input).has_class("-invalid")


async def test_checkboxes_show_an_empty_box_when_off():
    from roofline.tui.explorer.panes import StateCheckbox

    app = RooflineApp(ScenarioForm(), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        achievable = app.query_one("#achievable", StateCheckbox)
        flash = app.query_one("#flash_attention", StateCheckbox)
        assert "X" not in str(achievable.render()).split("achievable")[0]
        assert "X" in str(flash.render()).split("FlashAttention")[0]
        await pilot.press("a")
        await pilot.pause()
        assert app.explorer.achievable and "X" in str(achievable.render()).split("achievable")[0]
