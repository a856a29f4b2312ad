"""The shared plot widget: the slides' and the explorer's charts are the same plot functions, and the fast build's
theme name is textual-plotext's own (the one private name it reads, behind tui/perf/)."""

from __future__ import annotations

from importlib import metadata

import pytest

from roofline.presets import load_catalog
from roofline.tui.app import RooflineApp
from roofline.tui.explorer.charts import BatchSweepChart, RooflineChart
from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.views.registry import BY_ID

CATALOG = load_catalog(user_dir=None)


@pytest.mark.slow
@pytest.mark.skipif(not metadata.version("textual-plotext").startswith("1.0."),
                    reason="the private theme-name method is checked against textual-plotext 1.0 only")
async def test_the_fast_build_names_the_theme_as_textual_plotext_does():
    app = RooflineApp(ScenarioForm(), catalog=CATALOG)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        chart = app.query_one(RooflineChart)
        assert chart._get_plotext_theme_name(app.theme) == f"textual-auto-{app.theme}"


@pytest.mark.slow
async def test_each_chart_view_draws_its_registry_plot():
    app = RooflineApp(ScenarioForm(batch=8), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("2")
        await pilot.pause()
        assert app.query_one(RooflineChart).plot is BY_ID["roofline"].plot
        batch = app.query_one(BatchSweepChart)
        assert batch.plot is BY_ID["batch"].plot and batch.state is app.explorer.state


def test_the_version_gate_reads_what_importlib_metadata_reads():
    """The gate reads versions from the .dist-info folders (no importlib.metadata at start-up): the same answers."""
    from roofline.tui.perf.versions import installed_version

    for library in ("textual", "plotext", "textual_plotext"):
        assert installed_version(library) == metadata.version(library)
    assert installed_version("no_such_library_here") is None
