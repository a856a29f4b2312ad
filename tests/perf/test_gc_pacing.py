"""Garbage collection waits from a keystroke to its frame, and is never left off (tui/gc_pacing.py)."""

from __future__ import annotations

import asyncio
import gc

import pytest

from roofline.tui.app import RooflineApp
from roofline.tui.explorer.ops_table import OpsTable
from roofline.tui.perf import gc_pacing
from roofline.tui.perf.gc_pacing import CollectionPacer
from roofline.tui.perf.partial_paint import ClusteredCompositor


@pytest.fixture(autouse=True)
def collection_restored():
    enabled = gc.isenabled()
    yield
    (gc.enable if enabled else gc.disable)()


async def test_hold_lasts_until_the_frame_is_written():
    gc.enable()
    pacer = CollectionPacer()
    pacer.hold()
    assert not gc.isenabled() and pacer.holding
    pacer.hold()  # a second event before the frame: still one hold
    pacer.frame_painted()
    assert not gc.isenabled()  # the frame is written first: back on at the loop's next turn
    await asyncio.sleep(0)
    assert gc.isenabled() and not pacer.holding


async def test_no_frame_means_the_hold_expires(monkeypatch):
    gc.enable()
    monkeypatch.setattr(gc_pacing, "MAX_HOLD_S", 0.01)
    pacer = CollectionPacer()
    pacer.hold()
    assert not gc.isenabled()
    await asyncio.sleep(0.05)
    assert gc.isenabled() and not pacer.holding


async def test_collection_turned_off_elsewhere_is_left_off():
    gc.disable()
    pacer = CollectionPacer()
    pacer.hold()
    assert not pacer.holding
    pacer.frame_painted()
    pacer.release()
    await asyncio.sleep(0)
    assert not gc.isenabled()


def test_nothing_is_held_outside_an_event_loop():
    gc.enable()
    pacer = CollectionPacer()
    pacer.hold()
    assert gc.isenabled() and not pacer.holding


def test_an_explorer_that_is_not_running_leaves_collection_on():
    gc.enable()
    app = RooflineApp()
    with pytest.raises(Exception):  # noqa: B017 - whatever Textual raises without a screen; collection must stay on
        app.explorer.recompute()
    assert gc.isenabled()


@pytest.mark.parametrize(("view", "keys"), [("1", ["plus"]), ("5", ["down"]), ("3", ["right_square_bracket"])])
async def test_a_keystroke_is_handled_and_composed_with_collection_off_then_it_comes_back(view, keys, monkeypatch):
    """``+`` is the explorer's binding; ``down`` in the ops table is the table's own key (no recompute)."""
    gc.enable()
    composed: list[bool] = []
    original = ClusteredCompositor.render_update

    def render_update(self, *args, **kwargs):
        composed.append(gc.isenabled())
        return original(self, *args, **kwargs)

    monkeypatch.setattr(ClusteredCompositor, "render_update", render_update)
    app = RooflineApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(view)
        await pilot.pause()
        if view == "5":
            app.query_one(OpsTable).focus()
            await pilot.pause()
        await asyncio.sleep(0.3)
        composed.clear()
        await pilot.press(*keys)
        await pilot.pause()
        assert composed and composed[0] is False  # the key's frame was composed with collection off
        assert gc.isenabled()  # and it came back after it


async def test_quitting_mid_keystroke_leaves_collection_on():
    gc.enable()
    app = RooflineApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.collection_pacer.hold()
        assert not gc.isenabled()
    assert gc.isenabled()


async def test_a_resize_under_a_dialog_reaches_the_explorer():
    app = RooflineApp()
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert app.screen is not app.screen_stack[0]
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.has_class("-narrow")
