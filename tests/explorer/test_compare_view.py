"""The Compare view: TP used and the smallest TP that fits, device columns, sorting by key and by header click,
a caption that says what $/Mtok counts; serving columns still sort and stay aligned."""

from __future__ import annotations

from textual.widgets import Checkbox, DataTable

from roofline.presets import load_catalog
from roofline.tui.app import RooflineApp
from roofline.tui.explorer.compare_view import CompareView
from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.messages import SortChanged
from roofline.tui.views.compare_data import COLUMNS, PRICE_CAPTION
from roofline.tui.views.serving_data import COMPARE_COLUMNS as SERVING_COLUMNS

CATALOG = load_catalog(user_dir=None)


def _app(**form) -> RooflineApp:
    return RooflineApp(ScenarioForm(**form), catalog=CATALOG)


def _column(table: DataTable, label: str) -> list[str]:
    labels = [str(c.label).removesuffix(" v").removesuffix(" ^") for c in table.columns.values()]
    i = labels.index(label)
    return [str(table.get_row_at(y)[i]) for y in range(table.row_count)]


async def _open_compare(pilot):
    await pilot.press("6")
    await pilot.pause()
    await pilot.pause()


async def test_compare_shows_tp_the_tp_that_fits_and_device_figures():
    app = _app(model_ref="llama-3.1-70b")  # 131.5 GiB of bf16 weights: not on one 80 GiB H100
    async with app.run_test(size=(160, 50)) as pilot:
        await _open_compare(pilot)
        table = app.query_one("#compare-table", DataTable)
        assert [str(c.label) for c in table.columns.values()] == [c.label for c in COLUMNS]
        h100 = [str(cell) for cell in table.get_row("h100-sxm")]
        assert h100[1] == "1" and h100[6] == "NO: TP 2 fits" and h100[2] == h100[3] == h100[8] == "-"
        assert h100[9] == "3.35" and h100[10] == "80" and h100[11] == "295"  # 989 TFLOP/s / 3.35 TB/s
        caption = str(app.query_one("#compare-caption").render())
        assert PRICE_CAPTION in caption.replace("\n", " ") or PRICE_CAPTION.split()[0] in caption
        assert caption.startswith("list order; s or a header click sorts")


async def test_s_cycles_the_sort_column_and_a_header_click_sorts_and_reverses():
    app = _app(model_ref="llama-3.1-70b")
    async with app.run_test(size=(200, 50)) as pilot:
        await _open_compare(pilot)
        table = app.query_one("#compare-table", DataTable)
        names = _column(table, "device")
        await pilot.press("s")  # device name, A to Z
        await pilot.pause()
        assert _column(table, "device") == sorted(names, key=lambda n: n.removeprefix("> ").strip().lower())
        assert str(list(table.columns.values())[0].label) == "device ^"
        await pilot.press("s", "s")  # TP, then tok/s/seq: the fastest first, devices it does not fit on last
        await pilot.pause()
        speeds = _column(table, "tok/s/seq")
        numbers = [float(v) for v in speeds if v != "-"]
        assert numbers == sorted(numbers, reverse=True) and set(speeds[len(numbers):]) == {"-"}
        assert "sorted by tok/s/seq (largest first)" in str(app.query_one("#compare-caption").render())
        # a click on the TTFT header: smallest first; a second click: largest first
        header_y = table.region.y
        x = table.region.x + sum(col.get_render_width(table) for col in list(table.columns.values())[:4]) + 2
        await pilot.click(offset=(x, header_y))
        await pilot.pause()
        assert app.explorer.compare_sort == ("ttft_s", False)
        await pilot.click(offset=(x, header_y))
        await pilot.pause()
        assert app.explorer.compare_sort == ("ttft_s", True)
        ttft_ms = [float(v.split()[0]) for v in _column(table, "TTFT") if v.endswith(" ms")]
        assert ttft_ms == sorted(ttft_ms, reverse=True)
        for _ in range(len(COLUMNS) - 4):  # from TTFT (the fifth column) past the last: back to the list's order
            await pilot.press("s")
        await pilot.pause()
        assert app.explorer.compare_sort is None and _column(table, "device") == names


async def test_x_still_removes_the_highlighted_device_after_sorting():
    app = _app()
    async with app.run_test(size=(160, 50)) as pilot:
        await _open_compare(pilot)
        table = app.query_one("#compare-table", DataTable)
        await pilot.press("s", "s", "s")  # tok/s/seq
        await pilot.pause()
        table.focus()
        table.move_cursor(row=0)
        top = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        assert top == "b200"  # 8 TB/s: the fastest decode at batch 1 of the default list
        await pilot.press("x")
        await pilot.pause()
        assert "b200" not in app.explorer.compare_ids and "b200" not in table.rows


async def test_serving_columns_stay_aligned_and_sort():
    app = _app(serving=True)
    async with app.run_test(size=(220, 50)) as pilot:
        await _open_compare(pilot)
        table = app.query_one("#compare-table", DataTable)
        labels = [str(c.label) for c in table.columns.values()]
        static = [c.label for c in COLUMNS]
        assert labels == static[:2] + list(SERVING_COLUMNS) + static[2:]  # serving figures first (issue 30 item 8)
        assert all(len(table.get_row_at(y)) == len(labels) for y in range(table.row_count))
        # users/device at the targets, largest first: as a header click on that column sends it
        app.query_one(CompareView).post_message(SortChanged((f"serving {SERVING_COLUMNS[0]}", True)))
        await pilot.pause()
        await pilot.pause()
        users = [v for v in _column(table, SERVING_COLUMNS[0]) if v != "-"]
        assert [float(v.replace(",", "")) for v in users] == sorted((float(v.replace(",", "")) for v in users),
                                                                     reverse=True)
        app.query_one("#serving", Checkbox).value = False
        await pilot.pause()
        await pilot.pause()
        assert [str(c.label).removesuffix(" v") for c in table.columns.values()] == [c.label for c in COLUMNS]


def test_compare_snapshot_does_not_fit_and_sorted(snap_compare):
    assert snap_compare(_app(model_ref="llama-3.1-70b"), terminal_size=(160, 50), press=["6", "s", "s", "s"])
