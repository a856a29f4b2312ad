"""Issue 30 items 14, 15 and 18: ``roofline present`` fails in one line, never a traceback or a hang.

- ``--export svg`` into an existing file, into ``/proc/self/nope``, with a 300-character name, ``--export html
  /dev/full``: one line each, nothing (half-)written; the target is checked before any slide is drawn.
- A deck with no slides, an empty ``slides`` or integers for slides names the file and the key (it said
  "zip() argument 2 is longer than argument 1").
- Without a terminal the talk exits at once with one line, as plain ``roofline`` does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli


def _one_line_error(code, out, err):
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("roofline present: error: "), err
    assert "Traceback" not in err
    return lines[0]


def test_svg_export_into_an_existing_file_is_one_line(tmp_path, capsys):
    target = tmp_path / "slides.svg"
    target.write_text("keep me")
    line = _one_line_error(*run_cli(["present", "--export", "svg", str(target)], capsys))
    assert str(target) in line and target.read_text() == "keep me"


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="Linux /proc")
@pytest.mark.parametrize("fmt", ["svg", "html"])
def test_export_into_proc_is_one_line(capsys, fmt):
    line = _one_line_error(*run_cli(["present", "--export", fmt, "/proc/self/nope"], capsys))
    assert "/proc/self/nope" in line


@pytest.mark.parametrize("fmt", ["svg", "html"])
def test_export_with_a_300_character_name_is_one_line(tmp_path, capsys, fmt):
    target = tmp_path / ("n" * 300)
    line = _one_line_error(*run_cli(["present", "--export", fmt, str(target)], capsys))
    assert "too long" in line and len(line) < 600
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_html_export_to_dev_full_is_one_line(capsys):
    line = _one_line_error(*run_cli(["present", "--export", "html", "/dev/full"], capsys))
    assert "/dev/full" in line


def test_html_export_into_a_missing_folder_writes_nothing(tmp_path, capsys):
    target = tmp_path / "missing" / "talk.html"
    _one_line_error(*run_cli(["present", "--export", "html", str(target)], capsys))
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize(("body", "key"), [
    ('title = "t"\n', "slides"),
    ('title = "t"\nslides = []\n', "slides"),
    ('title = "t"\nslides = [1, 2]\n', "slides"),
    ('title = "t"\nslides = "x"\n', "slides"),
])
def test_a_deck_without_usable_slides_names_the_file_and_key(tmp_path, capsys, body, key):
    deck = tmp_path / "deck.toml"
    deck.write_text(body)
    line = _one_line_error(*run_cli(["present", str(deck), "--export", "markdown"], capsys))
    assert str(deck) in line and key in line and "zip()" not in line


@pytest.mark.slow
def test_present_without_a_terminal_exits_at_once_with_one_line(tmp_path):
    """stdin and stdout are pipes: one line on stderr, exit 2, no escape codes, well within the timeout."""
    env = {**os.environ, "ROOFLINE_NO_DETECT": "1", "ROOFLINE_PREFERENCES": str(tmp_path / "p.toml")}
    env.pop("TEXTUAL_DRIVER", None)
    done = subprocess.run([sys.executable, "-m", "roofline.tui.cli", "present"], stdin=subprocess.PIPE,
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "terminal" in done.stderr
    assert "\x1b" not in done.stderr


def test_present_without_a_terminal_is_refused_in_process(capsys):
    line = _one_line_error(*run_cli(["present"], capsys))  # pytest's stdin is not a terminal
    assert "terminal" in line


@pytest.mark.parametrize(("fmt", "where"), [("html", "/dev/full"), ("svg", "/proc/self/nope"),
                                            ("html", "/proc/self/nope/talk.html")])
def test_the_target_is_refused_before_any_slide_is_drawn(monkeypatch, capsys, fmt, where):
    if not Path(where.split("/nope")[0]).exists():
        pytest.skip(f"needs {where}")
    monkeypatch.setattr("roofline.tui.talk.export.screenshots", lambda *a, **k: pytest.fail("slides drawn"))
    _one_line_error(*run_cli(["present", "--export", fmt, where], capsys))
