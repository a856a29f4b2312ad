"""The tool stays offline and writes nothing unless asked: no socket is opened by `report`, `history` or the
explorer, and a read-only HOME and preset folder do not stop them (and stay unchanged)."""

from __future__ import annotations

import json
import os
import socket
import stat
from pathlib import Path

import pytest

from roofline.presets import load_catalog
from roofline.tui.app import RooflineApp
from roofline.tui.inputs.form import ScenarioForm

from .conftest import run_cli

REPORT = ["report", "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--batch", "8", "--format", "json"]
KEYS = ["plus", "plus", "right_square_bracket", "a", "p", "2", "3", "4", "5", "6", "7", "1", "minus", "i", "i"]


_run = run_cli


@pytest.fixture
def no_network(monkeypatch):
    """Every way to reach a host raises and is recorded."""
    attempts: list[tuple] = []

    def refuse(name):
        def blocked(*args, **kwargs):
            attempts.append((name, args[1:] if name.startswith("socket.") else args))
            raise OSError(f"network access blocked in tests ({name})")

        return blocked

    monkeypatch.setattr(socket.socket, "connect", refuse("socket.connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", refuse("socket.connect_ex"))
    monkeypatch.setattr(socket, "create_connection", refuse("create_connection"))
    monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
    return attempts


def test_report_does_not_touch_the_network(no_network, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path / "none"))
    code, out, err = _run(REPORT, capsys)
    assert code == 0, err
    assert json.loads(out)["hardware"]["id"] == "h100-sxm"
    code, out, err = _run(["report", "--model", "deepseek-v3", "--hardware", "h200", "--tp", "8"], capsys)
    assert code == 0, err
    assert no_network == []


def test_history_and_presets_do_not_touch_the_network(no_network, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path / "none"))
    code, out, err = _run(["history", "--format", "json"], capsys)
    assert code == 0, err
    json.loads(out)
    code, out, err = _run(["history", "--metric", "fp64"], capsys)
    assert code == 0, err
    code, out, err = _run(["presets", "--format", "json"], capsys)
    assert code == 0, err
    assert no_network == []


async def test_explorer_does_not_touch_the_network(no_network, tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path / "none"))
    monkeypatch.chdir(tmp_path)
    app = RooflineApp(ScenarioForm(), catalog=load_catalog(user_dir=tmp_path / "none"))
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        for key in KEYS:
            await pilot.press(key)
        await pilot.pause()
        assert app.is_running and app.explorer.results is not None
        assert app.explorer.form.batch == 2
    assert no_network == []
    assert list(tmp_path.iterdir()) == []


# ---- read-only HOME and preset folder --------------------------------------------------------
def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under root with its size and mtime (permissions cannot be relied on when tests run as root)."""
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")}


def _make_read_only(root: Path) -> None:
    for p in [root, *root.rglob("*")]:
        mode = p.stat().st_mode
        p.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _make_writable(root: Path) -> None:
    for p in [root, *root.rglob("*")]:
        p.chmod(p.stat().st_mode | stat.S_IWUSR)


@pytest.fixture
def read_only_home(tmp_path, monkeypatch):
    """HOME, the XDG folders, the preset folder (with one valid user preset) and the cwd, all read-only."""
    home = tmp_path / "home"
    presets = tmp_path / "presets"
    cwd = tmp_path / "cwd"
    for folder in (home / ".config", home / ".cache", home / ".local" / "share", presets / "hardware",
                   presets / "models", cwd):
        folder.mkdir(parents=True)
    # a user copy of a built-in preset under a new id, so the folder is really read
    src = Path(__file__).resolve().parents[1] / "presets" / "hardware" / "l4.toml"
    text = src.read_text(encoding="utf-8").replace('id = "l4"', 'id = "my-l4"')
    (presets / "hardware" / "my-l4.toml").write_text(text, encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("ROOFLINE_PRESETS", str(presets))
    monkeypatch.chdir(cwd)
    before = _snapshot(tmp_path)
    for folder in (home, presets, cwd):
        _make_read_only(folder)
    yield tmp_path, presets
    for folder in (home, presets, cwd):
        _make_writable(folder)
    assert _snapshot(tmp_path) == before, "something was written under HOME, the preset folder or the cwd"


def test_report_works_with_a_read_only_home_and_preset_folder(read_only_home, capsys):
    code, out, err = _run(REPORT, capsys)
    assert code == 0, err
    assert json.loads(out)["memory"]["fits"] is True
    code, out, err = _run(["report", "--hardware", "my-l4", "--model", "llama-3.1-8b", "--no-ops"], capsys)
    assert code == 0, err
    assert "NVIDIA L4" in out
    code, out, err = _run(["history", "--format", "json"], capsys)
    assert code == 0, err
    code, out, err = _run(["presets", "hardware"], capsys)
    assert code == 0, err
    assert "my-l4" in out and err == ""


async def test_explorer_works_with_a_read_only_home_and_preset_folder(read_only_home):
    _, presets = read_only_home
    assert os.environ["ROOFLINE_PRESETS"] == str(presets)
    app = RooflineApp(ScenarioForm(hardware_id="my-l4"))  # the catalog from the read-only user folder
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        assert app.explorer.results is not None and app.explorer.results.scenario.hardware.id == "my-l4"
        for key in KEYS:
            await pilot.press(key)
        await pilot.pause()
        assert app.is_running and app.explorer.results is not None
