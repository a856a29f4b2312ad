"""``roofline measure --save`` where the OS refuses the path (issue 22 section 5): the user presets folder named by
``$ROOFLINE_PRESETS`` as ``~nouser/...``, a name over 255 bytes, a folder the user may not enter or write. One line on
stderr saying ``--save``, a non-zero exit, no traceback, and (for what can be known early) no time spent measuring."""

from __future__ import annotations

import argparse
import errno
import os

import pytest

from roofline.tui.cli import measure as measure_cli
from roofline.tui.cli.measure import add_measure_parser, run_measure
from roofline.tui.probe import measure as m
from tests.probe.test_measure import SETTINGS, h100_fake


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="roofline")
    add_measure_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["measure", *argv])


@pytest.fixture
def counted(monkeypatch):
    """A fake H100 whose every timed call is counted (a refusal before measuring leaves the count at 0)."""
    calls: list[object] = []
    backend = h100_fake()
    timed = backend.seconds
    backend.seconds = lambda op: calls.append(op) or timed(op)
    monkeypatch.setattr(measure_cli, "_open_backend", lambda args: backend)
    monkeypatch.setattr(m, "default_settings", lambda kind, quick=False, dtypes=None: SETTINGS)
    monkeypatch.setattr(m, "host_name", lambda: "node7")
    return calls


def one_line(capsys, code: int) -> str:
    """The error: the last line on stderr (progress lines may come before it), naming --save; no traceback."""
    out, err = capsys.readouterr()
    assert code != 0, out
    assert "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("roofline measure: error: --save: "), err
    return last


@pytest.mark.parametrize("folder", ["~nouser-roofline/presets", "/tmp/" + "p" * 300])
def test_a_presets_folder_the_os_refuses_stops_before_measuring(monkeypatch, capsys, counted, folder):
    monkeypatch.setenv("ROOFLINE_PRESETS", folder)
    one_line(capsys, run_measure(parse(["--device", "cuda", "--save"])))
    assert counted == []


def test_a_folder_that_cannot_be_searched_stops_before_measuring(monkeypatch, capsys, counted, tmp_path):
    monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path))
    real_lstat = os.lstat

    def refuse(path, *args, **kwargs):  # as root a chmod 000 folder stays open, so the OS's answer is staged
        if str(tmp_path) in os.fspath(path):
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return real_lstat(path, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", refuse)
    err = one_line(capsys, run_measure(parse(["--device", "cuda", "--save"])))
    assert "Permission denied" in err and counted == []


def test_a_write_the_os_refuses_is_one_line_after_the_result(monkeypatch, capsys, counted, tmp_path):
    monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path))

    def refuse(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", str(tmp_path / "hardware"))

    monkeypatch.setattr("roofline.presets.user_presets.save_measured_hardware", refuse)
    code = run_measure(parse(["--device", "cuda", "--save"]))
    out, err = capsys.readouterr()
    assert code == 1 and "copy bandwidth" in out  # the measurement is shown before the save fails
    assert err.strip().splitlines()[-1].startswith("roofline measure: error: --save: ") and "Traceback" not in err


def test_an_id_of_200_characters_fits_and_one_of_300_is_refused_by_the_parser(capsys):
    assert parse(["--save", "--id", "a" * 200]).preset_id == "a" * 200  # a 205-byte file name: under NAME_MAX
    with pytest.raises(SystemExit):
        parse(["--save", "--id", "a" * 300])
    assert "preset id" in capsys.readouterr().err
