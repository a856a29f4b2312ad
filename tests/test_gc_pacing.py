"""Garbage collection waits from a keystroke to its frame, and is never left off (tui/gc_pacing.py)."""

from __future__ import annotations

import gc

import pytest

from roofline.tui.app import RooflineApp
from roofline.tui.gc_pacing import CollectionPacer


@pytest.fixture(autouse=True)
def collection_restored():
    enabled = gc.isenabled()
    yield
    (gc.enable if enabled else gc.disable)()


class _Refreshes:
    """Stands in for ``App.call_after_refresh``: keeps the callbacks until ``refresh`` runs them."""

    def __init__(self, accepts: bool = True) -> None:
        self.accepts = accepts
        self.pending: list = []

    def __call__(self, callback) -> bool:
        if self.accepts:
            self.pending.append(callback)
        return self.accepts

    def refresh(self) -> None:
        for callback in self.pending:
            callback()
        self.pending.clear()


def test_hold_turns_collection_off_until_the_refresh():
    gc.enable()
    pacer, refreshes = CollectionPacer(), _Refreshes()
    pacer.hold(refreshes)
    assert not gc.isenabled() and pacer.holding
    pacer.hold(refreshes)  # a second key before the frame: one hold, one release
    assert len(refreshes.pending) == 1
    refreshes.refresh()
    assert gc.isenabled() and not pacer.holding


def test_collection_turned_off_elsewhere_is_left_off():
    gc.disable()
    pacer, refreshes = CollectionPacer(), _Refreshes()
    pacer.hold(refreshes)
    assert not refreshes.pending and not pacer.holding
    pacer.release()
    assert not gc.isenabled()


def test_no_refresh_to_wait_for_means_no_hold():
    gc.enable()
    pacer = CollectionPacer()
    pacer.hold(_Refreshes(accepts=False))  # a closing app schedules nothing
    assert gc.isenabled() and not pacer.holding


async def test_a_keystroke_is_handled_with_collection_off_and_shown_with_it_back_on():
    gc.enable()
    app = RooflineApp()
    seen: list[bool] = []
    recompute = app.recompute

    def watched() -> None:
        recompute()
        seen.append(gc.isenabled())

    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.recompute = watched
        await pilot.press("plus")
        await pilot.pause()
        assert app.form.batch == 2
        assert seen == [False]  # the model and the widgets were updated with collection off
        assert gc.isenabled()  # and the frame that shows them turned it back on


async def test_quitting_mid_keystroke_leaves_collection_on():
    gc.enable()
    app = RooflineApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app._collection_pacer.hold(lambda callback: True)  # a refresh that will never come
        assert not gc.isenabled()
    assert gc.isenabled()
