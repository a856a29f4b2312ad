"""Issue 30 item 8: in serving mode Compare shows the serving figures first (after device and TP), and Right scrolls
a table wider than the pane."""

from __future__ import annotations

from textual.widgets import DataTable

from roofline.presets import load_catalog
from roofline.tui.app import RooflineApp
from roofline.tui.explorer.compare_view import compare_columns
from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.views.compare_data import COLUMNS
from roofline.tui.views.serving_data import COMPARE_COLUMNS as SERVING_COLUMNS

CATALOG = load_catalog(user_dir=None)


def test_serving_columns_come_right_after_device_and_tp():
    labels = [label for _, label in compare_columns(True)]
    assert labels[:2] == ["device", "TP"]
    assert labels[2:2 + len(SERVING_COLUMNS)] == list(SERVING_COLUMNS)
    assert labels[2 + len(SERVING_COLUMNS):] == [c.label for c in COLUMNS[2:]]
    assert [label for _, label in compare_columns(False)] == [c.label for c in COLUMNS]


async def test_in_serving_mode_the_serving_figures_are_on_screen_and_right_scrolls():
    app = RooflineApp(ScenarioForm(serving=True, model_ref="llama-3.1-70b", tp=4), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("6")
        await pilot.pause()
        await pilot.pause()
        table = app.query_one("#compare-table", DataTable)
        labels = [str(c.label).removesuffix(" v").removesuffix(" ^") for c in table.columns.values()]
        assert labels[2] == SERVING_COLUMNS[0]
        row = table.get_row_at(0)
        assert str(row[2]) != "" and str(row[labels.index("$/Mtok @T")]).startswith(("$", "-"))
        # the serving columns are within the visible width
        widths = [c.get_render_width(table) for c in table.columns.values()]
        assert sum(widths[:2 + len(SERVING_COLUMNS)]) <= table.size.width
        assert table.virtual_size.width > table.size.width  # wider than the pane: Right scrolls it
        assert table.scroll_x == 0
        await pilot.press("right")  # the table takes the key and scrolls a whole column
        await pilot.pause()
        await pilot.pause()
        assert table.scroll_x == widths[1]
        await pilot.press("right", "left", "left")
        await pilot.pause()
        assert table.scroll_x == 0
