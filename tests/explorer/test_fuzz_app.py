"""Fuzz the explorer with random key presses, pastes, the command palette and terminal sizes (fixed seed): it must
keep running, keep a valid scenario on screen, show only finite numbers and write nothing but the scenario files
and screenshots the palette was asked for."""

from __future__ import annotations

import math
import random
import string
import time
from pathlib import Path

import pytest
from textual import events

from roofline.presets import load_catalog
from roofline.tui import app as app_module
from roofline.tui.app import RooflineApp
from roofline.tui.explorer.headline import Headline
from roofline.tui.inputs.form import ScenarioForm

SEED = 1234
KEY_COUNT = 600
RESIZE_EVERY = 50
BURST = 10  # keys sent before waiting for the app to settle (Pilot.press waits after every key: ~5x slower)
PASTE_CHANCE = 0.08  # of each event: a paste of random printable text instead of a key
PASTE_CHARACTERS = string.printable.replace("\x0b", "").replace("\x0c", "") + "[/]@=[/" * 8  # markup-ish, often
# no "q" (quits) and no ctrl+... but ctrl+p, the palette (ctrl+s writes a screenshot, ctrl+q/ctrl+c quit)
KEYS = (
    list(string.digits)
    + [c for c in string.ascii_lowercase if c != "q"]
    + ["tab", "shift+tab", "enter", "escape", "up", "down", "left", "right", "backspace", "plus", "minus",
       "left_square_bracket", "right_square_bracket", "question_mark"]
    + [str(i) for i in range(1, 8)] * 2  # the view keys, drawn more often
    + ["ctrl+p"] * 2
)
METRICS = ("m-per-seq", "m-aggregate", "m-idle", "m-ttft")
BAD_WORDS = ("nan", "inf", "Traceback")
CHARACTERS = {"plus": "+", "minus": "-", "left_square_bracket": "[", "right_square_bracket": "]",
              "question_mark": "?", "tab": "\t", "enter": "\r", "escape": "\x1b", "backspace": "\x7f"}


def _send_key(app: RooflineApp, key: str) -> None:
    """The key event Pilot.press sends, without waiting for the app to go idle after it."""
    character = key if len(key) == 1 else CHARACTERS.get(key)
    event = events.Key(key, character)
    event.set_sender(app)
    app._driver.send_message(event)


class FuzzApp(RooflineApp):
    """The explorer without the palette's Quit (a fuzz that types "quit" into the palette has not found a crash)."""

    CSS_PATH = Path(app_module.__file__).with_name(RooflineApp.CSS_PATH)  # relative paths follow the subclass

    def get_system_commands(self, screen):
        return (command for command in super().get_system_commands(screen) if command.title != "Quit")


def random_paste(rng: random.Random) -> str:
    """Printable text, brackets and markup-like runs included; now and then long (a path over 255 bytes)."""
    length = rng.choice([1, 2, 5, 12, 40, 300])
    return "".join(rng.choice(PASTE_CHARACTERS) for _ in range(length))


def send_event(app: RooflineApp, rng: random.Random, log: list[str]) -> None:
    """A key, or (at PASTE_CHANCE) a paste into whatever has focus: a field, a dialog's prompt, the palette."""
    if rng.random() < PASTE_CHANCE:
        text = random_paste(rng)
        log.append(f"<paste {text!r}>")
        event = events.Paste(text)
        event.set_sender(app)
        app._driver.send_message(event)
        return
    key = rng.choice(KEYS)
    log.append(key)
    _send_key(app, key)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    return load_catalog(user_dir=tmp_path_factory.mktemp("no-user-presets"))


def _headline_numbers(app: RooflineApp) -> dict[str, float]:
    r = app.explorer.results
    out = {}
    for name in ("bound", "expected"):
        e = getattr(r, name)
        out[f"{name}.tokens_per_s_per_seq"] = e.decode.tokens_per_s_per_seq
        out[f"{name}.tokens_per_s"] = e.decode.tokens_per_s
        out[f"{name}.idle_core_pct"] = e.decode.phase.idle_core_pct
        out[f"{name}.ttft_s"] = e.ttft_s
        out[f"{name}.output_tokens_per_s"] = e.output_tokens_per_s
    out["memory.per_device_bytes"] = r.memory.per_device_bytes
    out["memory.capacity_bytes"] = r.memory.capacity_bytes
    out["memory.max_batch"] = r.memory.max_batch
    return out


def _check_screen(app: RooflineApp, log: list[str]) -> None:
    where = f"after {len(log)} keys, last: {log[-20:]}"
    assert app.is_running and app.return_code is None, where
    assert app.explorer.results is not None, where
    for key, value in _headline_numbers(app).items():
        assert math.isfinite(value) and value >= 0, (key, value, where)
    assert 0 <= app.explorer.results.chosen(app.explorer.achievable).decode.phase.idle_core_pct <= 100, where
    for metric in METRICS:
        shown = app.query_one(Headline).readings[metric].digits.lower()
        assert shown and not any(word.lower() in shown for word in BAD_WORDS), (metric, shown, where)
    for selector in ("#verdict", "#memory-bar"):
        text = str(app.query_one(selector).render())
        assert not any(f" {word} " in f" {text} " for word in ("nan", "inf")), (selector, text, where)


# the command line's limits; the explorer's fields have none (see test_a_huge_output_count_does_not_freeze...)


async def test_random_keys_and_sizes_keep_the_explorer_alive(catalog, tmp_path, monkeypatch, capsys):
    # The real app, unpatched: its fields cap their length (Textual's integer pattern backtracks on long runs
    # of digits) and their values (tui/limits.py), which is what keeps random typing from freezing it.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path / "no-user-presets"))
    rng = random.Random(SEED)
    app = FuzzApp(ScenarioForm(), catalog=catalog)
    log: list[str] = []
    sizes: list[tuple[int, int]] = []
    start = time.perf_counter()
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        keys_pressed = 0
        next_resize = rng.randint(RESIZE_EVERY - 10, RESIZE_EVERY + 10)
        while keys_pressed < KEY_COUNT:
            for _ in range(BURST):
                keys_pressed += 1
                send_event(app, rng, log)
            await pilot.pause()
            assert app.is_running and app.return_code is None, f"app died after {log[-40:]}"
            if keys_pressed >= next_resize:
                size = (rng.randint(20, 300), rng.randint(10, 100))
                sizes.append(size)
                log.append(f"<resize {size[0]}x{size[1]}>")
                await pilot.resize_terminal(*size)
                await pilot.pause()
                next_resize = keys_pressed + rng.randint(RESIZE_EVERY - 10, RESIZE_EVERY + 10)
                _check_screen(app, log)
        await pilot.pause()
        _check_screen(app, log)
        assert keys_pressed >= KEY_COUNT
        assert len(sizes) >= 10
        # a field typed into may be invalid, but the last good scenario stays and the status says why
        for field, reason in app.explorer.invalid_fields.items():
            assert reason, field
    elapsed = time.perf_counter() - start
    assert app.return_code in (None, 0)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    # only what the palette was asked for: a scenario ('save scenario') or a screenshot (Textual's command)
    assert all(p.suffix in (".toml", ".svg") for p in written), written
    with capsys.disabled():
        print(f"\nfuzz: {keys_pressed} keys, {len(sizes)} resizes, {elapsed:.1f} s")
