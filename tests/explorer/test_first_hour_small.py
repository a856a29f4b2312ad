"""Issue 30 item 22 (part): at 80x24, the stated minimum, every view's tab reads whole ("8 Servin" was cut)."""

from __future__ import annotations

from textual.widgets import Tab

from roofline.presets import load_catalog
from roofline.tui.app import RooflineApp
from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.views.registry import VIEWS

CATALOG = load_catalog(user_dir=None)


async def test_every_tab_is_whole_at_80x24():
    app = RooflineApp(ScenarioForm(), catalog=CATALOG)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        tabs = [t for t in app.query(Tab) if t.id and t.id.removeprefix("--content-tab-") in {v.id for v in VIEWS}]
        assert len(tabs) == len(VIEWS)
        for tab in tabs:
            assert tab.region.right <= 80, (str(tab.label), tab.region)
            assert tab.size.width >= len(str(tab.label))


async def test_an_unbounded_ttft_reads_whole_in_the_compact_headline():
    """At 80x24 the headline is one line per number; 'unbounded (queue grows)' does not fit a column, so it drops
    its parenthesis whole instead of ending 'unbounded (qu'."""
    from roofline.tui.explorer.headline import Headline

    form = ScenarioForm(model_ref="llama-3.1-70b", hardware_id="h100-sxm", tp=4, prompt_tokens=2048,
                        output_tokens=300, serving=True, rate_per_s=20.0, arrivals="poisson")
    app = RooflineApp(form, catalog=CATALOG)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.pause()
        headline = app.query_one(Headline)
        assert headline.compact
        values = headline.render_line(1).text
        assert "unbounded" in values and "unbounded (" not in values
