"""The ops table paints its rows past Textual's styles cache when it is a plain box (tui/plain_box.py): the strips
must be Textual's own, on every kind of row (header, cursor, odd, even), focused or not, scrolled, dark and light."""

from __future__ import annotations

from textual.geometry import Region
from textual.widget import Widget

from roofline.tui.app import RooflineApp
from roofline.tui.explorer.ops_table import OpsTable
from roofline.tui.inputs.form import ScenarioForm


def _compare(table: OpsTable, label: str) -> int:
    width, height = table.size
    compared = 0
    for crop in (Region(0, 0, width, height), Region(4, 1, width - 9, min(6, height - 1))):
        table._styles_cache.clear()
        theirs = Widget.render_lines(table, crop)
        ours = table.render_lines(crop)
        assert [list(s) for s in ours] == [list(s) for s in theirs], (label, crop)
        compared += 1
    return compared


async def test_ops_rows_painted_directly_equal_textuals_styles_cache():
    app = RooflineApp(ScenarioForm(model_ref="llama-3.1-70b", tp=4, batch=16))
    compared = 0
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("5")
        await pilot.pause()
        table = app.query_one("#ops-table", OpsTable)
        for theme in ("textual-dark", "textual-light"):
            app.theme = theme
            await pilot.pause()
            assert table._plain_box()  # 160x50: the whole table fits, no scrollbars
            compared += _compare(table, f"{theme} unfocused")
            table.focus()
            await pilot.press("down", "down", "down", "plus")
            await pilot.pause()
            compared += _compare(table, f"{theme} focused, cursor on row 3")
            app.set_focus(None)
            await pilot.pause()
    assert compared == 8


async def test_a_scrolled_table_with_scrollbars_too_and_padding_sends_it_through_textuals_path():
    """At 80x24 the table scrolls and shows scrollbars: the compositor draws them over the table's own rows, which
    are still Textual's. Padding is something only Textual's path draws."""
    app = RooflineApp(ScenarioForm(model_ref="llama-3.1-70b", tp=4, batch=16))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("5")
        await pilot.pause()
        table = app.query_one("#ops-table", OpsTable)
        table.focus()
        await pilot.press("end", "right")
        await pilot.pause()
        assert table.show_vertical_scrollbar and table.show_horizontal_scrollbar
        assert table.scroll_y > 0 and table.scroll_x > 0 and table._plain_box()
        assert _compare(table, "scrolled to the last row") == 2
        table.styles.padding = (0, 1)
        await pilot.pause()
        assert not table._plain_box()  # so render_lines is Textual's own
