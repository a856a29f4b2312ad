"""Issue 30 item 11: outside text never reaches a terminal or a file with a control character in it.

Every string of tests/hostile_strings.py goes into a user hardware preset's name and source, a deck's title, lines
and notes (TOML and Markdown), and a flag; ``report`` and ``plan`` (text, Markdown, JSON), ``presets`` (text,
JSON), ``present --export`` (Markdown handout; SVG and HTML in the slow test) and ``serve``'s checks print or
write nothing with a control byte, and the SVGs parse as XML.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from roofline.presets.clean_text import clean_strings, without_controls
from roofline.presets.loader import builtin_presets_dir
from tests.conftest import run_cli
from tests.hostile_strings import HOSTILE, assert_clean, control_characters, toml_string

HOSTILE_IDS = list(HOSTILE)


@pytest.fixture(autouse=True)
def _user_presets(tmp_path, monkeypatch):
    folder = tmp_path / "user-presets"
    (folder / "hardware").mkdir(parents=True)
    monkeypatch.setenv("ROOFLINE_PRESETS", str(folder))
    return folder


def _hostile_hardware(folder: Path, text: str) -> str:
    """A user copy of the H100 preset whose name and source carry ``text``; its id."""
    base = (builtin_presets_dir() / "hardware" / "h100-sxm.toml").read_text()
    base = re.sub(r'^id = .*$', 'id = "evil-gpu"', base, count=1, flags=re.M)
    base = re.sub(r'^name = .*$', lambda _: f"name = {toml_string(text)}", base, count=1, flags=re.M)
    base = re.sub(r'^source = .*$', lambda _: f"source = {toml_string(text)}", base, count=1, flags=re.M)
    (folder / "hardware" / "evil-gpu.toml").write_text(base)
    return "evil-gpu"


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE_IDS)
def test_the_cleaner_removes_every_control_character(text):
    assert control_characters(without_controls(text)) == []
    assert control_characters(json.dumps(clean_strings({"k": [text], text: 1}), ensure_ascii=False)) == []


def test_the_cleaner_keeps_ordinary_text():
    text = "Llama 3.1 70B on 8 x H200 — 1,000 tok/s\n\tµs ü 中文"
    assert without_controls(text) == text


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
@pytest.mark.parametrize("command", ["report", "plan"])
@pytest.mark.parametrize("key", HOSTILE_IDS)
def test_report_and_plan_print_no_control_character_from_a_preset_name(_user_presets, capsys, fmt, command, key):
    hw = _hostile_hardware(_user_presets, HOSTILE[key])
    argv = [command, "--hardware", hw, "--format", fmt] + (["--no-ops"] if command == "report" else [])
    code, out, err = run_cli(argv, capsys)
    assert code == 0, err
    assert_clean(out, f"{command} --format {fmt}")
    assert_clean(err, "stderr")
    if fmt == "json":
        assert_clean(json.dumps(json.loads(out), ensure_ascii=False), "the JSON's strings")


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("key", HOSTILE_IDS)
def test_the_presets_listing_prints_no_control_character(_user_presets, capsys, fmt, key):
    _hostile_hardware(_user_presets, HOSTILE[key])
    code, out, err = run_cli(["presets", "hardware", "--sources", "--format", fmt], capsys)
    assert code == 0, err
    assert "evil-gpu" in out
    assert_clean(out, "presets")
    if fmt == "json":
        assert_clean(json.dumps(json.loads(out), ensure_ascii=False), "the JSON's strings")


@pytest.mark.parametrize("key", HOSTILE_IDS)
def test_an_error_quoting_a_hostile_flag_value_is_clean(capsys, key):
    code, out, err = run_cli(["report", "--model", HOSTILE[key]], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert_clean(err, "the error line")


def _toml_deck(tmp_path: Path, text: str) -> Path:
    t = toml_string(text)
    deck = tmp_path / "deck.toml"
    deck.write_text(f"title = {t}\n\n[[slides]]\ntitle = {t}\nlines = [{t}]\nnotes = {t}\nview = \"none\"\n"
                    "[slides.scenario]\nhardware = \"h100-sxm\"\n")
    return deck


def _markdown_deck(tmp_path: Path, text: str) -> Path:
    deck = tmp_path / "deck.md"
    deck.write_text(f"---\ntitle: {text}\n---\n# {text}\n- {text}\n???\n{text}\n", encoding="utf-8")
    return deck


@pytest.mark.parametrize("make_deck", [_toml_deck, _markdown_deck], ids=["toml", "markdown"])
@pytest.mark.parametrize("key", HOSTILE_IDS)
def test_the_handout_carries_no_control_character(tmp_path, capsys, make_deck, key):
    deck = make_deck(tmp_path, HOSTILE[key])
    code, out, err = run_cli(["present", str(deck), "--export", "markdown"], capsys)
    assert code == 0, err
    assert_clean(out, "the handout")


@pytest.mark.parametrize("make_deck", [_toml_deck, _markdown_deck], ids=["toml", "markdown"])
def test_a_loaded_deck_is_clean_where_it_enters(tmp_path, make_deck):
    from roofline.presets.deck_file import read_deck

    for text in HOSTILE.values():
        deck = read_deck(make_deck(tmp_path, text))
        assert_clean(deck.title + "".join(s.title + "".join(s.lines) + s.notes for s in deck.slides), "the deck")


@pytest.mark.slow
def test_svg_and_html_exports_are_well_formed_and_clean(tmp_path, capsys):
    """Every hostile string at once in one deck: the SVGs parse as XML, no file carries a control byte."""
    text = " ".join(HOSTILE.values())
    deck = _toml_deck(tmp_path, text)
    code, out, err = run_cli(["present", str(deck), "--export", "svg", str(tmp_path / "svg"), "--size", "80x24"],
                             capsys)
    assert code == 0, err
    svgs = sorted((tmp_path / "svg").glob("*.svg"))
    assert svgs
    for svg in svgs:
        body = svg.read_text(encoding="utf-8")
        assert_clean(body.replace("\r", ""), svg.name)
        ET.fromstring(body)  # well-formed XML
    page = tmp_path / "talk.html"
    code, out, err = run_cli(["present", str(deck), "--export", "html", str(page), "--size", "80x24"], capsys)
    assert code == 0, err
    assert_clean(page.read_text(encoding="utf-8").replace("\r", ""), "the HTML page")


@pytest.mark.parametrize("key", HOSTILE_IDS)
def test_serve_replies_and_logs_carry_no_control_character(key):
    from roofline.tui.cli.serve import allowed_origins, refusal

    allowed = allowed_origins("127.0.0.1", 8000)
    for headers in ({"host_header": HOSTILE[key], "origin_header": None},
                    {"host_header": "127.0.0.1:8000", "origin_header": HOSTILE[key]}):
        reason = refusal(client="127.0.0.1", allowed=allowed, websocket=True, **headers)
        assert reason is not None
        assert_clean(reason, "serve's refusal")


@pytest.mark.parametrize("key", HOSTILE_IDS)
def test_serve_refuses_a_hostile_public_url_in_one_clean_line(capsys, key):
    code, out, err = run_cli(["serve", "--public-url", f"http://a{HOSTILE[key]}b:8000"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert_clean(err, "serve's error")
