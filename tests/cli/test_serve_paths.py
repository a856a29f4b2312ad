"""Paths the OS refuses (issue 22 section 5) in ``--scenario`` for the explorer and ``roofline serve``: one line on
stderr naming the flag, exit 2, never a traceback. The explorer itself is never started: the form is checked first."""

from __future__ import annotations

import argparse
import errno
import os

import pytest

from roofline.presets import safe_files
from roofline.tui.cli.main import main as cli_main_function
from roofline.tui.cli.serve import explorer_args_from_namespace

LONG_NAME = "a" * 300 + ".toml"  # one part over NAME_MAX (255 bytes)


def refused_paths(tmp_path) -> list[str]:
    return ["~nouser-roofline/x.toml", str(tmp_path / LONG_NAME), "~nouser-roofline/" + LONG_NAME]


def one_line_error(capsys, code: int, flag: str) -> str:
    out, err = capsys.readouterr()
    assert code == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert flag in err
    return err


@pytest.fixture(autouse=True)
def _no_gpu_probe(monkeypatch):
    monkeypatch.setenv("ROOFLINE_NO_DETECT", "1")


@pytest.mark.parametrize("which", range(3))
def test_explorer_scenario_path_the_os_refuses_is_one_line(tmp_path, capsys, which):
    path = refused_paths(tmp_path)[which]
    code = cli_main_function(["--scenario", path])
    one_line_error(capsys, code, "--scenario")


@pytest.mark.parametrize("which", range(3))
def test_serve_scenario_path_the_os_refuses_is_one_line(tmp_path, capsys, which):
    path = refused_paths(tmp_path)[which]
    code = cli_main_function(["--scenario", path, "serve", "--port", "8999"])
    one_line_error(capsys, code, "--scenario")


def test_a_scenario_the_user_may_not_read_is_one_line(tmp_path, capsys, monkeypatch):
    scenario = tmp_path / "locked.toml"
    scenario.write_text("[scenario]\nhardware = 'h100-sxm'\n")
    real_open = os.open

    def refuse(path, *args, **kwargs):  # as root a chmod 000 file stays readable, so the OS's answer is staged
        if os.fspath(path) == str(scenario):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(safe_files.os, "open", refuse)
    err = one_line_error(capsys, cli_main_function(["--scenario", str(scenario), "serve"]), "--scenario")
    assert "Permission denied" in err


@pytest.mark.parametrize("which", range(3))
def test_serve_command_words_refuse_a_bad_path_with_a_value_error(tmp_path, which):
    """explorer_args_from_namespace is public: it says which flag, as a ValueError main turns into one line."""
    args = argparse.Namespace(scenario=refused_paths(tmp_path)[which])
    with pytest.raises(ValueError, match="--scenario"):
        explorer_args_from_namespace(args)


def test_serve_command_words_keep_a_good_path_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.toml").write_text("")
    assert explorer_args_from_namespace(argparse.Namespace(scenario="s.toml")) == [
        f"--scenario={(tmp_path / 's.toml').resolve()}"]
