"""Talk mode on stage: the ticking clock, the presenter's screen following the audience's through the state file,
live knobs, the layout at three sizes, the help panel, and the size floor."""

from __future__ import annotations

import os
import stat

import pytest
from textual.widgets import Static

from roofline.presets import load_catalog
from roofline.presets.deck_file import builtin_deck_path, read_deck
from roofline.tui.app import RooflineApp
from roofline.tui.inputs.registry import FILE_KEY_TYPES
from roofline.tui.talk.base import clock_text
from roofline.tui.talk.presenter import PresenterApp, PresenterScreen
from roofline.tui.talk.screen import PresentScreen
from roofline.tui.talk.sync import TalkLink, read_state

CATALOG = load_catalog(user_dir=None)
DECK = read_deck(builtin_deck_path(), keys=FILE_KEY_TYPES)


class FakeClock:
    """Seconds that move only when a test says so."""

    def __init__(self) -> None:
        self.now_s = 1_000_000.0

    def __call__(self) -> float:
        return self.now_s


async def _until(condition, what: str, pilot) -> None:
    """Wait for a condition the app reaches by itself (an interval firing), at most 200 short pauses."""
    for _ in range(200):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"never happened: {what}")


def _footer(screen) -> str:
    return str(screen.query_one("#slide-footer", Static).render())


def test_clock_text():
    assert clock_text(0) == "00:00"
    assert clock_text(65.9) == "01:05"  # whole seconds, never rounded up
    assert clock_text(3 * 3600 + 61) == "3:01:01"


async def test_the_clock_ticks_without_keys(tmp_path, monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr("roofline.tui.talk.base.TICK_S", 0.02)
    link = TalkLink(tmp_path / "talk.json", "deck", clock=clock)
    app = RooflineApp(catalog=CATALOG, deck=DECK, talk_link=link)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await pilot.press("t")
        screen = app.screen
        assert "00:00  (slide 00:00)" in _footer(screen)
        clock.now_s += 65  # no key pressed after this: only the interval can redraw the footer
        await _until(lambda: "01:05  (slide 01:05)" in _footer(screen), "the footer shows 01:05", pilot)


async def test_presenter_follows_the_audience_forward_back_and_jump(tmp_path, monkeypatch):
    """Two apps in one event loop, joined only by the state file."""
    clock = FakeClock()
    monkeypatch.setattr("roofline.tui.talk.base.TICK_S", 0.02)
    state = tmp_path / "run" / "talk.json"
    audience = RooflineApp(catalog=CATALOG, deck=DECK, talk_link=TalkLink(state, "memory-wall", clock=clock))
    presenter = PresenterApp(DECK, link=TalkLink(state, "memory-wall", clock=clock))
    async with audience.run_test(size=(120, 36)) as seen, presenter.run_test(size=(100, 30)) as notes_pilot:
        await seen.pause()
        await notes_pilot.pause()
        stage, desk = audience.screen, presenter.screen
        assert isinstance(stage, PresentScreen) and isinstance(desk, PresenterScreen)
        assert stat.S_IMODE(os.stat(state).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(state.parent).st_mode) == 0o700

        async def both_at(position: int) -> None:
            await _until(lambda: stage.position == position and desk.position == position,
                         f"both screens on slide {position + 1}", notes_pilot)

        await seen.press("space", "space")  # forward on the audience screen
        await both_at(2)
        assert desk.next_title == DECK.slides[3].title
        assert DECK.slides[2].notes in str(desk.query_one("#presenter-notes", Static).render())
        await seen.press("left")  # back
        await both_at(1)
        await seen.press("7", "enter")  # jump
        await both_at(6)
        await notes_pilot.press("space")  # the presenter's keys drive the audience screen too
        await both_at(7)
        await notes_pilot.press("home")
        await both_at(0)
        clock.now_s += 30
        await _until(lambda: "00:30" in str(desk.query_one("#clock-elapsed").value), "presenter clock 00:30",
                     notes_pilot)
        assert read_state(state).position == 0


async def test_either_screen_runs_alone(tmp_path):
    presenter = PresenterApp(DECK, link=None)
    async with presenter.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("end")
        assert presenter.screen.position == len(DECK.slides) - 1
        assert presenter.screen.next_title == "(the end)"
        assert "alone" in str(presenter.screen.query_one("#presenter-footer", Static).render())


async def test_live_knobs_change_the_slide_and_r_restores():
    app = RooflineApp(catalog=CATALOG, deck=DECK)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await pilot.press("5", "enter")  # What batching buys: batch 64
        await pilot.pause()
        screen = app.screen
        original = screen.current
        assert original.form.batch == 64
        await pilot.press("plus")
        assert screen.current.form.batch == 128
        # the numbers follow the model: aggregate tok/s at batch 128 is the bound estimate's
        assert screen.current.results.bound.decode.tokens_per_s > original.results.bound.decode.tokens_per_s
        assert "batch 64 -> 128" in _footer(screen)
        await pilot.press("right_square_bracket")
        assert screen.current.form.prompt_tokens == 2 * original.form.prompt_tokens
        await pilot.press("r")
        assert screen.current is original and "live" not in _footer(screen)
        assert app.explorer.form.batch != 128  # the explorer's own scenario is untouched


async def test_help_panel_leaves_the_notes_and_numbers_visible():
    app = RooflineApp(catalog=CATALOG, deck=DECK)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await pilot.press("n", "question_mark")
        await pilot.pause()
        screen = app.screen
        help_panel, notes = screen.query_one("#slide-help"), screen.query_one("#slide-notes")
        assert help_panel.display and notes.display
        assert not help_panel.region.overlaps(notes.region)
        assert not help_panel.region.overlaps(screen.query_one("#slide-numbers").region)
        await pilot.press("escape")
        await pilot.pause()
        assert not screen.query_one("#slide-help").display


async def test_below_80x24_the_stage_asks_for_a_larger_terminal():
    app = RooflineApp(catalog=CATALOG, deck=DECK)
    async with app.run_test(size=(79, 30)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert screen.has_class("-too-small") and not screen.query_one("#slide").display
        assert "enlarge the terminal" in str(screen.query_one("#too-small", Static).render())
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert not screen.has_class("-too-small") and screen.query_one("#slide").display


@pytest.mark.slow
@pytest.mark.parametrize("size", [(80, 24), (100, 30), (160, 50)])
@pytest.mark.parametrize("slide", [1, 3, 6])
def test_stage_layout_snapshot(snap_compare, size, slide):
    app = RooflineApp(catalog=CATALOG, deck=DECK)
    assert snap_compare(app, terminal_size=size, press=[str(slide), "enter"])


def test_state_file_reads_nothing_from_a_bad_file(tmp_path):
    path = tmp_path / "talk.json"
    path.write_text("{not json")
    assert read_state(path) is None
    path.write_text('{"version": 1, "deck": "d", "position": -1, "seq": 1, "started_at_s": 0, "slide_at_s": 0, '
                    '"writer_pid": 1}')
    assert read_state(path) is None


def test_a_stale_talk_is_not_joined(tmp_path):
    """A state whose writer is gone (pid of a finished process) starts a new talk at slide 1."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    path = tmp_path / "talk.json"
    path.write_text(f'{{"version": 1, "deck": "d", "position": 5, "seq": 9, "started_at_s": 0, "slide_at_s": 0, '
                    f'"writer_pid": {int(done.stdout)}}}')
    state = TalkLink(path, "d", clock=FakeClock()).open()
    assert state.position == 0 and state.seq == 1 and state.writer_pid == os.getpid()  # a new talk


def test_export_svg_and_html(tmp_path, capsys):
    from roofline.tui.cli.main import main

    assert main(["present", "--export", "svg", str(tmp_path / "svg"), "--size", "100x30"]) == 0
    files = sorted((tmp_path / "svg").iterdir())
    assert len(files) == len(DECK.slides) and files[0].name == "01-the-idle-kitchen.svg"
    text = files[0].read_text()
    assert text.startswith("<svg") and "url(\"http" not in text and "url(http" not in text  # no web font
    assert main(["present", "--export", "html", str(tmp_path / "talk.html")]) == 0
    page = (tmp_path / "talk.html").read_text()
    assert page.count("<svg") == len(DECK.slides) and "<script" not in page
    assert "H200 has the H100&#x27;s FLOP/s" in page  # the notes are in
    assert main(["present", "--export", "svg"]) == 2  # needs a folder
    assert "--export" in capsys.readouterr().err




async def test_d_steps_the_slide_through_devices_and_r_restores():
    """The device is a live knob too (issue 21): the slide's numbers follow the device, D steps back."""
    app = RooflineApp(catalog=CATALOG, deck=DECK)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await pilot.press("1", "enter")  # the idle kitchen: Llama 3.1 8B on one H100
        await pilot.pause()
        screen = app.screen
        original = screen.current
        assert original.form.hardware_id == "h100-sxm"
        await pilot.press("d")
        assert screen.current.form.hardware_id == "h200"
        # H200: the same FLOP/s and 4.8 TB/s instead of 3.35: the bound's decode speed follows the bandwidth
        now, before = screen.current.results.bound.decode, original.results.bound.decode
        ratio = now.tokens_per_s_per_seq / before.tokens_per_s_per_seq
        assert 1.3 < ratio < 1.5
        assert "device h100-sxm -> h200" in _footer(screen)
        await pilot.press("D")
        assert screen.current.form.hardware_id == "h100-sxm"
        await pilot.press("d", "r")
        assert screen.current is original
