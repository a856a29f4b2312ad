"""The explorer's clustered partial paint writes exactly what Textual's own partial paint writes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from textual._compositor import Compositor
from textual.geometry import Region

from roofline.tui.app import RooflineApp
from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.perf.partial_paint import ClusteredCompositor, cluster_regions


def test_cluster_regions_groups_by_shared_columns():
    left = Region(0, 28, 22, 1)
    headline = Region(46, 2, 100, 3)
    chart_rows = [Region(44, y, 116, 1) for y in (14, 15, 30)]
    boxes = cluster_regions([left, headline, *chart_rows])
    assert boxes == [left, Region(44, 2, 116, 29)]
    assert cluster_regions([Region(0, 0, 160, 1), left, headline]) == [Region(0, 0, 160, 29)]  # full-width row
    assert cluster_regions([]) == []


regions = st.builds(Region, st.integers(0, 150), st.integers(0, 45), st.integers(1, 40), st.integers(1, 10))


@given(st.lists(regions, max_size=12))
def test_every_region_lies_in_one_box_and_boxes_share_no_column(rs):
    boxes = cluster_regions(rs)
    for r in rs:
        assert sum(box.contains_region(r) for box in boxes) == 1
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert a.right <= b.x or b.right <= a.x


@pytest.mark.parametrize("size", [(160, 50), (80, 24)])
async def test_clustered_updates_equal_textuals_own(monkeypatch, size):
    """Every partial update during a session (keys over all chart views, the ops table, the inputs toggle) is
    rendered both ways from the same changed regions; the terminal output must be identical."""
    compared: list[int] = []
    clustered = ClusteredCompositor._clustered_partial_update

    def both(self: ClusteredCompositor):
        dirty = set(self._dirty_regions)
        with monkeypatch.context() as textuals:  # the reference: Textual's own partial update and renders
            textuals.setattr(ClusteredCompositor, "_get_renders", Compositor._get_renders)
            theirs = Compositor.render_partial_update(self)
        self._dirty_regions = set(dirty)
        ours = clustered(self)
        if theirs is None:
            assert ours is None
            return ours
        console = app.console
        assert ours.render_segments(console) == theirs.render_segments(console)
        compared.append(len(cluster_regions(dirty)))
        return ours

    monkeypatch.setattr(ClusteredCompositor, "_clustered_partial_update", both)
    app = RooflineApp(ScenarioForm(model_ref="llama-3.1-70b", tp=4, batch=16))
    async with app.run_test(size=size) as pilot:
        for keys in ("1", "+", "+", "-", "]", "2", "+", "[", "3", "+", "4", "-", "5", "down", "+", "a", "1", "i",
                     "+", "i", "-", "p", "+", "g", "escape", "+"):
            await pilot.press(*keys.split())
            await pilot.pause()
        app.notify("a toast over the chart")  # a widget on the overlay layer, above the changed regions
        for key in ("+", "-", "]"):
            await pilot.press(key)
            await pilot.pause()
    assert len(compared) > 15
    if size == (160, 50):  # narrow screens show the inputs or the results, not both
        assert max(compared) >= 2  # the clustered path really ran (left field and right results changed together)


async def test_falls_back_to_textuals_paint_when_its_private_api_moved(monkeypatch):
    def moved_on(self):
        self._dirty_regions.clear()  # what a half-run clustered update could leave behind
        raise AttributeError("'Compositor' object has no attribute 'cuts'")

    monkeypatch.setattr(ClusteredCompositor, "_clustered_partial_update", moved_on)
    app = RooflineApp(ScenarioForm())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("+", "+")
        await pilot.pause()
        assert app.explorer.form.batch == 4
        compositor = app.screen._compositor
        compositor._dirty_regions.add(Region(0, 0, 10, 1))
        update = compositor.render_partial_update()  # the regions are painted Textual's way, not dropped
        assert update is not None and update.spans == [(0, 0, 10)]


async def test_widgets_beside_the_changes_are_not_rendered(monkeypatch):
    """A `+` on the ops view at 160x50: the table's scrollbars (beside its changed rows) and the containers beside
    the batch field are not rendered; the table, the field and the numbers are."""
    from textual.widget import Widget

    from roofline.tui.explorer.ops_table import OpsTable

    rendered: list[str] = []

    def recording(paint):
        def spy(self, crop):
            rendered.append(type(self).__name__ if not self.id else f"#{self.id}")
            return paint(self, crop)
        return spy

    app = RooflineApp(ScenarioForm(model_ref="llama-3.1-70b", tp=4, batch=16, prompt_tokens=4096, output_tokens=1024))
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("5", "plus")  # the view mounted and settled, its scrollbars drawn
        await pilot.pause(0.3)
        assert app.query_one(OpsTable).show_vertical_scrollbar  # the table does have scrollbars
        table = app.query_one(OpsTable)
        monkeypatch.setattr(table, "refresh", lambda *regions, **kw: refreshed.append(regions) or
                            OpsTable.refresh(table, *regions, **kw))
        refreshed: list = []
        monkeypatch.setattr(Widget, "render_lines", recording(Widget.render_lines))  # Textual's path
        await pilot.press("plus")
        await pilot.pause()
    assert refreshed and all(refreshed), "the table's changed rows, each a region of its own (not the whole table)"
    assert {"#batch", "#op-formula", "#headline", "#verdict", "#ops-table"} <= set(rendered)
    assert "ScrollBar" not in rendered and "#batching-pane" not in rendered and "Horizontal" not in rendered
