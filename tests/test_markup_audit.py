"""Text from users, files and tools is never markup, and never reaches a terminal raw (issue 22, class 1).

One user preset folder holds a GPU and a model whose names are markup that would crash Rich or Textual
(``[/x]`` closes a tag that was never opened) or act (``[@click=app.quit]``); one deck has the same in its
title, lines and notes. The explorer (every view, the hardware list, Compare, the palette) and the talk must
stay up and show the text literally.
"""

from __future__ import annotations

import re

import pytest

from roofline.presets import load_catalog
from roofline.presets.loader import builtin_presets_dir
from roofline.tui.app import RooflineApp
from roofline.tui.cli.main import main
from roofline.tui.cli.terminal_text import without_controls
from roofline.tui.inputs.form import ScenarioForm

CLOSING = "[/x]"
CLICK = "[@click=app.quit]"
GPU_NAME = f"Evil {CLOSING} GPU {CLICK}"
MODEL_NAME = f"Evil {CLOSING} model {CLICK}"
ESC_NAME = "Red \x1b[31mGPU\x1b]0;owned\x07 \x1b[2J"


def _user_presets(folder, gpu_name: str = GPU_NAME, model_name: str = MODEL_NAME):
    """A user hardware and model preset: copies of built-ins with new ids, names and (hardware) vendor."""
    (folder / "hardware").mkdir(parents=True)
    (folder / "models").mkdir()
    hw = (builtin_presets_dir() / "hardware" / "h100-sxm.toml").read_text()
    hw = hw.replace('id = "h100-sxm"', 'id = "evil-gpu"').replace('name = "NVIDIA H100 SXM5 80GB"',
                                                                   f'name = "{_toml(gpu_name)}"')
    hw = hw.replace('vendor = "NVIDIA"', f'vendor = "{_toml(CLOSING)}V"')
    (folder / "hardware" / "evil-gpu.toml").write_text(hw)
    model = (builtin_presets_dir() / "models" / "llama-3.1-8b.toml").read_text()
    model = model.replace('id = "llama-3.1-8b"', 'id = "evil-model"').replace('name = "Llama 3.1 8B"',
                                                                              f'name = "{_toml(model_name)}"')
    (folder / "models" / "evil-model.toml").write_text(model)
    return folder


def _toml(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\x1b", "\\u001b").replace("\x07", "\\u0007")


def _screen_text(app) -> str:
    """What the screen shows, from the SVG screenshot (non-breaking spaces as spaces)."""
    return app.export_screenshot().replace("&#160;", " ")


def _palette_lines(app) -> list[str]:
    """Every line of every option the open palette lists, as plain text."""
    from textual.command import CommandList

    options = app.screen.query_one(CommandList)
    return [line for i in range(options.option_count)
            for line in str(options.get_option_at_index(i).prompt).splitlines()]


@pytest.fixture
def evil_catalog(tmp_path, monkeypatch):
    folder = _user_presets(tmp_path / "presets")
    monkeypatch.setenv("ROOFLINE_PRESETS", str(folder))
    catalog = load_catalog(user_dir=folder)
    assert not catalog.errors, catalog.errors
    assert catalog.hardware["evil-gpu"].name == GPU_NAME
    return catalog


async def test_markup_in_preset_names_shows_literally_everywhere_in_the_explorer(evil_catalog, tmp_path,
                                                                                monkeypatch):
    monkeypatch.chdir(tmp_path)
    form = ScenarioForm(hardware_id="evil-gpu", model_ref="evil-model")
    app = RooflineApp(form, catalog=evil_catalog)
    async with app.run_test(size=(200, 60)) as pilot:
        await pilot.pause()
        assert "evil-gpu" in app.explorer.compare_ids or app.explorer.action_compare_add() is None
        for view in "1234567":
            await pilot.press(view)
            await pilot.pause()
            assert app.is_running, view
        await pilot.press("1")
        await pilot.pause()
        shown = _screen_text(app)
        assert CLOSING in shown and "Evil" in shown  # the hardware list and the header, literally
        # the palette: titles, ids and help lines (the vendor) are plain text
        await pilot.press("ctrl+p", *"evil")
        await pilot.pause(0.6)
        assert app.is_running
        listed = _palette_lines(app)
        assert f"hardware: {GPU_NAME} [evil-gpu]" in listed
        assert f"model: {MODEL_NAME} [evil-model]" in listed
        assert any(line.startswith(f"{CLOSING}V ") for line in listed)  # the help line: vendor and year
        await pilot.press("escape")
        await pilot.pause()
        assert app.is_running and app.screen is app.explorer


async def test_palette_titles_keep_the_ids_in_brackets(tmp_path):
    """``[h200]`` used to vanish from 'hardware: NVIDIA H200 [h200]' (read as an unknown style tag)."""
    app = RooflineApp(ScenarioForm(), catalog=load_catalog(user_dir=tmp_path))
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("ctrl+p", *"h200")
        await pilot.pause(0.6)
        assert any(line.startswith("hardware: ") and line.endswith(" [h200]") for line in _palette_lines(app))


DECK = f'''title = "Deck {CLOSING}"

[[slides]]
title = "Title {CLOSING} {CLICK}"
lines = ["a line with [/ in it", "{CLICK} click me", "[bold]not bold[/bold]"]
view = "roofline"
numbers = ["idle_core_pct"]
notes = "notes {CLOSING}"
[slides.scenario]
hardware = "evil-gpu"
model = "evil-model"
batch = 1
prompt_tokens = 1024
output_tokens = 256

[[slides]]
title = "Second {CLOSING}"
lines = ["[/"]
view = "compare"
'''


async def test_markup_in_a_deck_shows_literally_in_the_talk(evil_catalog, tmp_path):
    from roofline.presets.deck_file import read_deck
    from roofline.tui.inputs.registry import FILE_KEY_TYPES

    path = tmp_path / "deck.toml"
    path.write_text(DECK)
    deck = read_deck(path, keys=FILE_KEY_TYPES)
    app = RooflineApp(catalog=evil_catalog, deck=deck)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        shown = _screen_text(app)
        slide = app.screen
        assert slide.title_text == f"Title {CLOSING} {CLICK}"  # drawn in big letters, or as this text
        assert "a line with [/ in it" in shown and "[bold]not bold[/bold]" in shown
        assert f"{CLICK} click me" in shown
        assert app.is_running
        await pilot.press("n")  # notes
        await pilot.press("right")
        await pilot.pause()
        assert app.is_running
        assert app.screen.title_text == f"Second {CLOSING}"
        await pilot.resize_terminal(90, 30)  # small: the title as plain text
        await pilot.pause()
        assert app.is_running
        assert f"Second {CLOSING}" in _screen_text(app)


def test_terminal_text_drops_escape_sequences_and_controls_but_keeps_lines():
    assert without_controls("a\x1b[31mb\x1b]0;title\x07c\x1b[2J\n\td\x00e\x9b2Jf") == "abc\n\tdef"


def test_presets_listing_prints_no_escape_sequence_from_a_user_preset_name(tmp_path, monkeypatch, capsys):
    folder = _user_presets(tmp_path / "presets", gpu_name=ESC_NAME, model_name=ESC_NAME)
    monkeypatch.setenv("ROOFLINE_PRESETS", str(folder))
    assert main(["presets"]) == 0
    out, err = capsys.readouterr()
    assert "Red GPU" in out.replace("\x1b[31m", "")
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f\x9b]", out + err), repr(out[:200])


def test_present_markdown_export_prints_no_escape_sequence(tmp_path, monkeypatch, capsys):
    folder = _user_presets(tmp_path / "presets", gpu_name=ESC_NAME, model_name=ESC_NAME)
    monkeypatch.setenv("ROOFLINE_PRESETS", str(folder))
    path = tmp_path / "deck.toml"
    deck = DECK.replace(CLOSING, "\\u001b[31mred\\u001b[0m").replace("\"notes ", "\"notes \\u0007")
    path.write_text(re.sub(r'view = "\w+"', 'view = "none"', deck))  # text only: the charts are tested elsewhere
    assert main(["present", str(path), "--export", "markdown"]) == 0
    out, err = capsys.readouterr()
    assert "Title red" in out
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f\x9b]", out + err), repr(out[:300])


@pytest.mark.parametrize("deck", ["~nouser-roofline-test/deck.toml", "x" * 300 + ".toml",
                                  "folder/" + "y" * 256 + "/deck.toml"])
def test_present_refuses_paths_the_os_would_refuse_in_one_line(deck, capsys):
    code = main(["present", deck, "--export", "markdown"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "deck" in err


async def test_the_overwrite_question_quotes_a_markup_like_path_literally(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = "[bold]x[@click=app.quit].toml"  # no slash: one file in this folder
    (tmp_path / name).write_text("")
    app = RooflineApp(ScenarioForm(), catalog=load_catalog(user_dir=tmp_path / "none"))
    async with app.run_test(size=(160, 50)) as pilot:
        app.explorer.action_save_scenario()
        await pilot.pause()
        app.screen.query_one("#path").value = name
        await pilot.press("enter")
        await pilot.pause()
        assert app.is_running
        assert f"{name} exists. Overwrite it?" in _screen_text(app)
        await pilot.press("n")
        await pilot.pause()
        assert app.is_running and (tmp_path / name).read_text() == ""
