"""Talk mode: the built-in deck, keys, the explorer round trip, errors and the handout."""

from __future__ import annotations

import pytest
from textual.widgets import Digits, Label, Static

from roofline.models.inference import estimate
from roofline.presets import load_catalog
from roofline.presets.deck_file import builtin_deck_path, read_deck
from roofline.presets.loader import PresetFileError
from roofline.tui.app import RooflineApp
from roofline.tui.cli.main import main
from roofline.tui.inputs.form import build_scenario
from roofline.tui.inputs.registry import FILE_KEY_TYPES
from roofline.tui.talk.deck import check_deck
from roofline.tui.talk.screen import PresentScreen

CATALOG = load_catalog(user_dir=None)
DECK = read_deck(builtin_deck_path(), keys=FILE_KEY_TYPES)


def _app() -> RooflineApp:
    return RooflineApp(catalog=CATALOG, deck=DECK)


def _shown_numbers(screen: PresentScreen) -> list[str]:
    values = []
    for box in screen.query(".slide-number"):
        widget = box.children[1]
        values.append(str(widget.value) if isinstance(widget, Digits) else str(widget.render()))
    return values


def test_builtin_deck_tells_the_story_in_about_twelve_slides():
    assert DECK.title == "The memory wall"
    assert 10 <= len(DECK.slides) <= 14
    views = {s.view for s in DECK.slides}
    assert {"roofline", "history", "batch", "context", "memory", "compare", "ops"} <= views
    assert len(check_deck(DECK, CATALOG)) == len(DECK.slides)


async def test_step_forward_back_jump_and_numbers_match_the_model():
    app = _app()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PresentScreen) and screen.position == 0
        for index in range(len(DECK.slides)):
            built = screen.current
            bound = estimate(build_scenario(built.form, CATALOG), "bound")
            expected = {
                "idle_core_pct": f"{bound.decode.phase.idle_core_pct:.1f}",
                "decode_tokens_per_s_per_seq": f"{bound.decode.tokens_per_s_per_seq:,.1f}",
                "decode_tokens_per_s": f"{bound.decode.tokens_per_s:,.0f}",
            }
            shown = dict(zip(built.slide.numbers, _shown_numbers(screen), strict=True))
            for name, value in shown.items():
                if name in expected:
                    assert value == expected[name], (index, name)
            assert screen.title_text == built.slide.title
            if index < len(DECK.slides) - 1:
                await pilot.press("space")
                await pilot.pause()
        assert screen.position == len(DECK.slides) - 1
        await pilot.press("space")  # past the end stays on the last slide
        assert screen.position == len(DECK.slides) - 1
        await pilot.press("left", "pageup")
        assert screen.position == len(DECK.slides) - 3
        await pilot.press("home")
        assert screen.position == 0
        await pilot.press("end")
        assert screen.position == len(DECK.slides) - 1
        await pilot.press("4", "enter")
        await pilot.pause()
        assert screen.position == 3
        await pilot.press("9", "9", "enter")  # no slide 99: stays, says so
        assert screen.position == 3


async def test_e_opens_the_explorer_on_the_slide_and_escape_returns():
    app = _app()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await pilot.press("5", "enter")
        await pilot.pause()
        slide_form = app.screen.current.form
        await pilot.press("e")
        await pilot.pause()
        assert not isinstance(app.screen, PresentScreen)
        # kept while the explorer is up: a removed screen pushed back never painted again (its timers were gone)
        assert app.present_screen.is_attached and app.is_screen_installed(app.present_screen)
        assert app.explorer.form == slide_form and app.explorer.results.scenario.batching.batch_size == 64
        await pilot.press("plus")
        assert app.explorer.form.batch == 128
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, PresentScreen) and app.screen.position == 4


async def test_notes_and_time_toggle_and_explorer_keys_are_inert_on_slides():
    app = _app()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        notes = app.screen.query_one("#slide-notes")
        assert not notes.display
        await pilot.press("n")
        assert notes.display
        await pilot.press("t")
        await pilot.pause()
        assert ":" in str(app.screen.query_one("#slide-footer", Static).render())
        batch = app.explorer.form.batch
        await pilot.press("plus", "minus")
        assert app.explorer.form.batch == batch
        labels = [str(label.render()) for label in app.screen.query(Label)]
        assert any("idle cores" in text for text in labels)


@pytest.mark.parametrize(("body", "fragment"), [
    ('title = "t"\n[[slides]]\ntitle = "a"\nview = "pie"\n', "slide 1: view"),
    ('title = "t"\n[[slides]]\ntitle = "a"\nnumbers = ["speed"]\n', "slide 1: numbers"),
    ('title = "t"\n[[slides]]\ntitle = "a"\n[[slides]]\ntitle = "b"\n[slides.scenario]\nbatch = "8"\n',
     "slide 2: scenario.batch"),
    ('title = "t"\n[[slides]]\ntitle = "a"\nlines = ["1","2","3","4","5","6"]\n', "slide 1: lines"),
    ('[[slides]]\ntitle = "a"\n', "title"),
    ('title = "t"\n[[slides]\n', "not valid TOML"),
])
def test_bad_decks_name_the_slide_and_key(tmp_path, body, fragment):
    path = tmp_path / "deck.toml"
    path.write_text(body)
    with pytest.raises(PresetFileError) as info:
        read_deck(path, keys=FILE_KEY_TYPES)
    assert fragment in str(info.value)


@pytest.mark.parametrize(("scenario", "fragment"), [
    ('hardware = "nope"', "slide 1: scenario.hardware"),
    ("tp = 3", "slide 1: scenario.tp"),
])
def test_unknown_presets_in_a_deck_fail_before_the_screen_opens(tmp_path, capsys, scenario, fragment):
    path = tmp_path / "deck.toml"
    path.write_text(f'title = "t"\n[[slides]]\ntitle = "a"\n[slides.scenario]\n{scenario}\n')
    assert main(["present", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and fragment in err[0]


def test_markdown_handout_has_every_slide_with_computed_numbers(capsys):
    assert main(["present", "--export", "markdown"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# The memory wall")
    assert out.count("\n## ") == len(DECK.slides)
    first = check_deck(DECK, CATALOG)[0]
    idle = first.results.bound.decode.phase.idle_core_pct
    assert f"**idle cores %**: {idle:.1f}" in out
    assert "ridge 295 FLOP/B" in out  # the roofline chart as text
    assert "\x1b[" not in out


@pytest.mark.parametrize("slide", [1, 2, 3])
def test_first_three_slides_snapshot(snap_compare, slide):
    assert snap_compare(_app(), terminal_size=(120, 36), press=["space"] * (slide - 1))
