"""The explorer's panes are the registry's: every input with a pane has its widget there, in registry order, and a
serving input's widget is shown only in serving mode."""

from __future__ import annotations

import pytest
from textual.widgets import Select

from roofline.presets import load_catalog
from roofline.tui.app import RooflineApp
from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.inputs.registry import PANES, inputs_for_pane

CATALOG = load_catalog()
PANE_IDS = {"hardware": "#hardware-pane", "workload": "#workload-pane", "batching": "#batching-pane"}


@pytest.mark.slow
async def test_each_pane_shows_its_registry_inputs_in_order():
    app = RooflineApp(ScenarioForm(serving=True), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        for pane in PANES:
            container = app.query_one(PANE_IDS[pane])
            ids = [w.id for w in container.query("*") if w.id in {s.name for s in inputs_for_pane(pane)}]
            assert ids == [s.name for s in inputs_for_pane(pane)], pane
        for spec in inputs_for_pane("batching"):
            if spec.group == "serving" and spec.kind != "bool":
                row = app.query_one(f"#{spec.name}").parent
                assert row.has_class("serving-field"), spec.name


@pytest.mark.slow
async def test_the_arrivals_choice_reaches_the_form():
    """--arrivals is one registry record; its select in the Batching pane sets the form the screen computes."""
    app = RooflineApp(ScenarioForm(serving=True), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        app.query_one("#arrivals", Select).value = "poisson"
        await pilot.pause()
        assert app.explorer.form.arrivals == "poisson"
