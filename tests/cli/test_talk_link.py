"""Issue 30 item 13: each talk has its own link; the presenter finds the running talks and asks when there are
several; a runtime folder that is not the user's, or is writable by others, is refused in one line."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from roofline.tui.talk.sync import (
    TalkFolderError,
    TalkLink,
    check_private_folder,
    choose_talk,
    running_talks,
    talk_folder,
    talk_state_path,
)


@pytest.fixture
def runtime(tmp_path, monkeypatch):
    """A runtime folder of this test's (platformdirs takes XDG_RUNTIME_DIR only when it is 0700 and ours, and
    falls back to the shared /tmp/runtime-<uid> otherwise: the folder is handed over directly)."""
    base = tmp_path / "run"
    base.mkdir(mode=0o700)
    monkeypatch.setattr("roofline.tui.talk.sync.default_state_path", lambda: base / "roofline" / "talk.json")
    return base


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def _sleeper():
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def test_two_talks_have_two_links(runtime):
    folder = talk_folder()
    assert folder.parent == runtime
    one = _sleeper()
    two = _sleeper()
    try:
        TalkLink(talk_state_path(folder, one.pid), "deck-a").open()
        TalkLink(talk_state_path(folder, two.pid), "deck-b").open()
        talks = running_talks(folder)
        assert [state.deck for _, state in talks] == ["deck-a", "deck-b"]
        assert running_talks(folder, "deck-b")[0][0] == talk_state_path(folder, two.pid)
    finally:
        one.kill()
        two.kill()
        one.wait()
        two.wait()


def test_the_presenter_joins_the_one_talk_without_asking(runtime):
    folder = talk_folder()
    TalkLink(talk_state_path(folder), "deck").open()  # this process stands for the audience screen
    talks = running_talks(folder)
    assert choose_talk(talks, ask=lambda prompt: pytest.fail("asked")) == talk_state_path(folder)


def test_the_presenter_asks_when_there_are_several(runtime):
    folder = talk_folder()
    other = _sleeper()
    try:
        TalkLink(talk_state_path(folder), "deck-a").open()
        TalkLink(talk_state_path(folder, other.pid), "deck-b").open()
        talks = running_talks(folder)
        asked, shown = [], []
        answers = iter(["9", "2"])
        chosen = choose_talk(talks, ask=lambda prompt: asked.append(prompt) or next(answers), out=shown.append)
        assert chosen == talks[1][0] and len(asked) == 2
        assert any("deck-b" in line for line in shown)
        with pytest.raises(ValueError, match="2 talks are running"):
            choose_talk(talks, ask=None)  # no terminal to ask on: one line naming them
        with pytest.raises(ValueError, match="no talk chosen"):
            choose_talk(talks, ask=lambda prompt: (_ for _ in ()).throw(EOFError))
    finally:
        other.kill()
        other.wait()


def test_a_talk_that_ended_is_not_listed_and_its_file_goes(runtime):
    folder = talk_folder()
    stale = talk_state_path(folder, _dead_pid())
    TalkLink(stale, "deck").open()
    assert running_talks(folder) == [] and not stale.exists()


def test_a_folder_writable_by_others_is_refused_in_one_line(runtime):
    os.chmod(runtime, 0o777)
    with pytest.raises(TalkFolderError) as refused:
        talk_folder()
    assert "writable by others" in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="chown to another user needs root")
def test_a_folder_owned_by_another_user_is_refused(runtime):
    os.chown(runtime, 4242, -1)
    with pytest.raises(TalkFolderError, match="owned by another user"):
        talk_folder()


def test_a_runtime_folder_platformdirs_refuses_is_one_line(monkeypatch):
    """No XDG_RUNTIME_DIR and /tmp/runtime-<uid> made by another user: platformdirs raises PermissionError."""
    import platformdirs

    from roofline.tui.talk import sync

    def refuse(*args, **kwargs):
        raise PermissionError(13, "/tmp/runtime-1000 is owned by another user")

    monkeypatch.setattr(platformdirs, "user_runtime_dir", refuse)
    with pytest.raises(TalkFolderError, match="XDG_RUNTIME_DIR"):
        sync.talk_folder()


def test_a_link_for_a_folder_is_refused(tmp_path):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(TalkFolderError, match="not a folder"):
        check_private_folder(tmp_path / "link")


def test_a_folder_another_user_made_leaves_the_talk_running_alone(runtime, monkeypatch, capsys):
    """``present`` with a hostile runtime folder: a one-line warning and no link, never a traceback."""
    from argparse import Namespace

    from roofline.tui.cli import present

    os.chmod(runtime, 0o777)
    monkeypatch.setattr(present, "has_terminal", lambda: True)
    started = []

    class FakeApp:
        def __init__(self, *args, talk_link=None, **kwargs):
            started.append(talk_link)

        def run(self):
            return None

    monkeypatch.setattr("roofline.tui.app.RooflineApp", FakeApp)
    args = Namespace(deck=None, presenter=False, export=None, size="120x36")
    assert present.run_present(args) == 0
    err = capsys.readouterr().err
    assert started == [None] and len(err.strip().splitlines()) == 1 and "writable by others" in err


def test_the_presenter_command_joins_the_running_talk_and_its_deck(runtime, monkeypatch):
    """``present --presenter`` with one talk running (its state file written by this process, standing for the
    audience screen): the presenter's link is that talk's file, and the deck is that talk's deck."""
    from argparse import Namespace

    from roofline.presets.deck_file import builtin_deck_path
    from roofline.tui.cli import present

    folder = talk_folder()
    deck = str(builtin_deck_path().resolve())
    TalkLink(talk_state_path(folder), deck).open()
    monkeypatch.setattr(present, "has_terminal", lambda: True)
    started = []

    class FakePresenter:
        def __init__(self, deck, link=None):
            started.append((deck, link))

        def run(self):
            return None

    monkeypatch.setattr("roofline.tui.talk.presenter.PresenterApp", FakePresenter)
    assert present.run_present(Namespace(deck=None, presenter=True, export=None, size="120x36")) == 0
    (shown_deck, link), = started
    assert link.path == talk_state_path(folder) and shown_deck.path == deck
