"""Issue 30 item 4: keys that arrive in a burst (over SSH several keys come in one read) all land, in order, and the
field shows what the model uses. Run with the speed-ups on and off (ROOFLINE_SPEEDUPS=0, tui/perf/switch.py)."""

from __future__ import annotations

import pytest
from textual import events
from textual.widgets import Input

from roofline.presets import load_catalog
from roofline.tui.app import RooflineApp
from roofline.tui.inputs.form import ScenarioForm

CATALOG = load_catalog()


CHARACTERS = dict.fromkeys(("backspace", "delete", "left", "right", "home", "end"))


async def _send(app: RooflineApp, pilot, *keys: str) -> None:
    """Queue every key at once, as the terminal driver does for one read of several bytes (``pilot.press`` waits for
    the app to go idle after each key, which a burst over SSH never does), then let the app settle."""
    for key in keys:
        app.post_message(events.Key(key, CHARACTERS.get(key, key)))
    for _ in range(6):
        await pilot.pause()


async def _burst(app: RooflineApp, pilot, field: str, *keys: str) -> Input:
    box = app.query_one(f"#{field}", Input)
    box.focus()
    box.cursor_position = len(box.value)
    await pilot.pause()
    await _send(app, pilot, *keys)
    return box


@pytest.mark.parametrize("speedups", ["1", "0"])
async def test_a_burst_with_backspaces_lands_every_key(monkeypatch, speedups):
    """'256', three Backspaces, '32' in one burst: batch 32 in the field, the form and the results."""
    monkeypatch.setenv("ROOFLINE_SPEEDUPS", speedups)
    app = RooflineApp(ScenarioForm(batch=1), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        box = await _burst(app, pilot, "batch", "backspace", "2", "5", "6", "backspace", "backspace", "backspace",
                           "3", "2")
        assert box.value == "32"
        assert app.explorer.form.batch == 32
        assert app.explorer.results.scenario.batching.batch_size == 32


@pytest.mark.parametrize("speedups", ["1", "0"])
async def test_backspace_then_a_digit_in_tp_shows_the_tp_applied(monkeypatch, speedups):
    """tp 1, Backspace, '4' in one burst: the field reads 4 and the scenario runs on 4 devices."""
    monkeypatch.setenv("ROOFLINE_SPEEDUPS", speedups)
    app = RooflineApp(ScenarioForm(model_ref="llama-3.1-70b", hardware_id="h100-sxm", tp=1), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        box = await _burst(app, pilot, "tp", "backspace", "4")
        assert box.value == "4"
        assert app.explorer.form.tp == 4
        assert app.explorer.results.scenario.parallelism.tp == 4


@pytest.mark.parametrize("speedups", ["1", "0"])
async def test_a_burst_with_cursor_moves_edits_where_the_cursor_is(monkeypatch, speedups):
    """prompt 2048: End, "0", three Lefts, Delete, Home, Delete, "4" in one burst: 2048 -> 20480 -> 2080 -> 4080."""
    monkeypatch.setenv("ROOFLINE_SPEEDUPS", speedups)
    app = RooflineApp(ScenarioForm(prompt_tokens=2048), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        box = await _burst(app, pilot, "prompt_tokens", "end", "0", "left", "left", "left", "delete", "home", "delete",
                           "4")
        assert box.value == "4080"
        assert app.explorer.form.prompt_tokens == 4080
        assert app.explorer.results.scenario.batching.prompt_tokens == 4080
