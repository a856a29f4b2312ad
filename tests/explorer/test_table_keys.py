"""Arrow keys over a view's table while a select holds the focus: Ops' table (a ScrollView with its own bindings,
no ``action_cursor_right``) must take Left/Right as Compare's DataTable does. The random-keys fuzz test found the
explorer stopping with AttributeError here at 80x24."""

from __future__ import annotations

import pytest

from roofline.presets import load_catalog
from roofline.tui.app import RooflineApp
from roofline.tui.inputs.form import ScenarioForm

CATALOG = load_catalog(user_dir=None)


@pytest.mark.slow
@pytest.mark.parametrize("view_key", ["5", "6"])
@pytest.mark.parametrize("arrow", ["right", "left", "down"])
async def test_arrows_over_a_table_from_a_select_keep_the_explorer_alive(view_key, arrow):
    app = RooflineApp(ScenarioForm(model_ref="deepseek-v3", tp=8, hardware_id="h200"), catalog=CATALOG)
    async with app.run_test(size=(80, 40)) as pilot:
        await pilot.press(view_key)
        await pilot.pause()
        app.screen.set_focus(app.screen.query_one("#hardware_id"))
        await pilot.pause()
        await pilot.press(arrow, arrow)
        await pilot.pause()
        assert app.is_running
        assert app.screen.query_one("#results") is not None
