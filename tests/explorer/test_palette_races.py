"""The command palette late: whatever it receives after it is dismissed, the explorer stays up (issues 20, 22).

Keys reach the palette through message queues, so a key typed just before Escape or Enter is handled after the
palette was dismissed. Textual's palette then dismisses a second time (popping the screen under it:
``ScreenStackError: Can't pop screen``) or starts a new search on a screen being taken down (whose watchers
then miss the ``CommandList``: ``NoMatches``). ``tui/explorer/commands.py`` and ``tui/perf/palette_guard.py``.
"""

from __future__ import annotations

import asyncio
import random

import pytest
from textual import events
from textual.command import CommandList, CommandPalette
from textual.widgets import Input, LoadingIndicator

from roofline.presets import load_catalog
from roofline.tui.app import RooflineApp
from roofline.tui.explorer import commands
from roofline.tui.explorer.screen import ExplorerScreen
from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.perf import palette_guard, switch

CHARACTERS = {"enter": "\r", "escape": "\x1b", "plus": "+", "minus": "-", "backspace": "\x7f", "ctrl+p": None}


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    return load_catalog(user_dir=tmp_path_factory.mktemp("no-user-presets"))


def _post(app, *keys: str) -> None:
    """Keys queued at once, as a fast typist's arrive: nothing waits for the app between them."""
    for key in keys:
        app.post_message(events.Key(key, key if len(key) == 1 else CHARACTERS.get(key)))


async def _open_palette_on(pilot, app, query: str) -> CommandPalette:
    await pilot.press("ctrl+p", *query)
    await pilot.pause(0.5)  # the search has listed its hits
    assert isinstance(app.screen, CommandPalette)
    return app.screen


async def test_two_quick_enters_run_the_command_once_and_keep_the_explorer(catalog, tmp_path, monkeypatch):
    """The second Enter used to pop the explorer itself: ScreenStackError, app gone."""
    monkeypatch.chdir(tmp_path)
    app = RooflineApp(ScenarioForm(), catalog=catalog)
    async with app.run_test(size=(120, 40)) as pilot:
        await _open_palette_on(pilot, app, "pin baseline")
        _post(app, "enter", "enter")
        await pilot.pause(0.3)
        assert app.is_running and app.return_code is None
        assert app.screen is app.explorer
        assert app.explorer.baseline is not None


async def test_a_letter_handled_after_the_dismissal_starts_no_search(catalog, monkeypatch):
    searches: list[str] = []
    original = commands.ScenarioCommands.search

    async def counted(self, query):
        searches.append(query)
        async for hit in original(self, query):
            yield hit

    monkeypatch.setattr(commands.ScenarioCommands, "search", counted)
    app = RooflineApp(ScenarioForm(), catalog=catalog)
    async with app.run_test(size=(120, 40)) as pilot:
        palette = await _open_palette_on(pilot, app, "")
        field = palette.query_one(Input)
        palette.dismiss()
        palette.post_message(Input.Changed(field, "h"))  # the letter typed just before Escape, handled late
        palette.dismiss()  # and a second Escape or Enter: must not pop the explorer
        await pilot.pause(0.3)
        assert searches == []
        assert app.is_running and app.screen is app.explorer


async def test_reopening_while_the_last_palette_is_taken_down(catalog):
    app = RooflineApp(ScenarioForm(), catalog=catalog)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        for _ in range(5):
            _post(app, "ctrl+p", "h", "escape", "ctrl+p", "escape", "ctrl+p", "m", "enter", "escape")
            await pilot.pause()
        await pilot.pause(0.3)
        assert app.is_running and app.return_code is None


@pytest.mark.parametrize("seed", [1, 2])
async def test_random_palette_sessions_with_late_keys_and_resizes(catalog, tmp_path, monkeypatch, seed):
    """ctrl+p, letters, a pause of 0 to 0.3 s, Enter or Escape, more keys, sometimes a resize; seeded."""
    monkeypatch.chdir(tmp_path)
    rng = random.Random(seed)
    app = RooflineApp(ScenarioForm(), catalog=catalog)
    log: list[str] = []
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        for _ in range(25):
            keys = ["ctrl+p", *rng.choices("hmwkpc", k=rng.randint(0, 4))]
            _post(app, *keys)
            await asyncio.sleep(rng.choice([0, 0.01, 0.05, 0.1, 0.2, 0.3]))
            tail = [rng.choice(["enter", "escape"]), *rng.choices(["plus", "minus", "enter", "escape", "h", "1"],
                                                                   k=rng.randint(0, 4))]
            _post(app, *tail)
            log += keys + tail
            if rng.random() < 0.3:
                size = (rng.randint(40, 200), rng.randint(12, 60))
                log.append(f"<resize {size}>")
                await pilot.resize_terminal(*size)
            await pilot.pause()
            assert app.is_running and app.return_code is None, log[-30:]
        _post(app, "escape", "escape")
        await pilot.pause(0.3)
        assert app.is_running, log[-30:]
        assert list(tmp_path.glob("*.svg")) == []


# ---- the watcher guard (private names of Textual, tui/perf/palette_guard.py) --------------------------------
def test_the_guard_applies_exactly_on_verified_textual():
    cls = commands.palette_class()
    assert issubclass(cls, commands.ExplorerPalette)
    assert issubclass(cls, palette_guard.PaletteWatchersGuard) == switch.verified("textual")


@pytest.mark.skipif(not switch.verified("textual"), reason="the guard is off on unverified Textual")
async def test_guarded_watchers_match_textuals_while_the_list_is_there_and_do_nothing_once_it_is_gone(catalog):
    app = RooflineApp(ScenarioForm(), catalog=catalog)
    async with app.run_test(size=(120, 40)) as pilot:
        palette = await _open_palette_on(pilot, app, "")
        assert isinstance(palette, palette_guard.PaletteWatchersGuard)
        for visible in (False, True):  # as Textual's watchers: the classes follow the flags
            palette._list_visible = visible
            palette._show_busy = visible
            await pilot.pause()
            assert palette.query_one(CommandList).has_class("--visible") is visible
            assert palette.query_one(LoadingIndicator).has_class("--visible") is visible
        await palette.query_one(CommandList).remove()
        await palette.query_one(LoadingIndicator).remove()
        palette._list_visible = False  # what a search finishing late does: Textual's watchers raise NoMatches
        palette._show_busy = False
        await pilot.pause()
        assert app.is_running and app.return_code is None
        palette.dismiss()
        await pilot.pause()
        assert isinstance(app.screen, ExplorerScreen)
