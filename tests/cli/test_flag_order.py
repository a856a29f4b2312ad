"""Issue 30 item 1: a scenario flag (or ``--scenario``) before the command applies to that command, or is refused
in one line; it is never silently ignored. ``report`` and ``plan`` take ``--scenario``."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli


@pytest.fixture(autouse=True)
def _no_user_presets(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path / "no-user-presets"))


def _report(capsys, argv):
    code, out, err = run_cli(argv, capsys)
    assert code == 0, err
    return json.loads(out)


def test_flags_before_report_apply_to_it(capsys):
    """``roofline --hardware h200 --model llama-3.1-70b report`` printed Llama 3.1 8B on one H100 (exit 0)."""
    report = _report(capsys, ["--hardware", "h200", "--model", "llama-3.1-70b", "--batch", "4", "report",
                              "--format", "json"])
    assert report["hardware"]["id"] == "h200" and report["model"]["id"] == "llama-3.1-70b"
    assert report["batching"]["batch"] == 4


def test_a_flag_after_the_command_wins_over_one_before(capsys):
    report = _report(capsys, ["--hardware", "h200", "report", "--hardware", "mi300x", "--format", "json"])
    assert report["hardware"]["id"] == "mi300x"


def _scenario_file(tmp_path, body: str):
    path = tmp_path / "s.toml"
    path.write_text(f"[scenario]\n{body}\n")
    return str(path)


@pytest.mark.parametrize("where", ["before", "after"])
def test_report_reads_a_scenario_file_before_or_after_the_command(tmp_path, capsys, where):
    path = _scenario_file(tmp_path, 'hardware = "h200"\nmodel = "llama-3.1-70b"\nbatch = 8')
    argv = ["--scenario", path, "report", "--format", "json"] if where == "before" else \
        ["report", "--scenario", path, "--format", "json"]
    report = _report(capsys, argv)
    assert report["hardware"]["id"] == "h200" and report["model"]["id"] == "llama-3.1-70b"


def test_a_flag_overrides_the_scenario_files_value(tmp_path, capsys):
    path = _scenario_file(tmp_path, 'hardware = "h200"')
    report = _report(capsys, ["report", "--scenario", path, "--hardware", "mi300x", "--format", "json"])
    assert report["hardware"]["id"] == "mi300x"


@pytest.mark.parametrize("where", ["before", "after"])
def test_a_broken_scenario_file_is_refused_for_report(tmp_path, capsys, where):
    """``roofline --scenario s.toml report`` with ``batch = "lots"`` exited 0."""
    path = _scenario_file(tmp_path, 'batch = "lots"')
    argv = ["--scenario", path, "report"] if where == "before" else ["report", "--scenario", path]
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "batch" in err and "s.toml" in err


def test_plan_reads_a_scenario_file(tmp_path, capsys):
    path = _scenario_file(tmp_path, 'hardware = "h200"\nmodel = "llama-3.1-8b"')
    for argv in (["plan", "--scenario", path, "--format", "json"], ["--scenario", path, "plan", "--format", "json"]):
        plan = _report(capsys, argv)
        assert plan["hardware"] == "h200" and plan["model"] == "llama-3.1-8b"


def test_flags_before_plan_apply_to_it(capsys):
    plan = _report(capsys, ["--hardware", "h200", "--model", "llama-3.1-8b", "plan", "--format", "json"])
    assert plan["hardware"] == "h200"


@pytest.mark.parametrize("argv", [
    ["--batch", "4", "presets"],
    ["--hardware", "h200", "history"],
    ["--batch", "4", "plan"],  # plan has no static batch
    ["--engine", "vllm", "calibrate", "--measured-itl-ms", "10"],
    ["--scenario", "s.toml", "presets"],
])
def test_a_flag_before_a_command_that_does_not_take_it_is_refused(capsys, argv):
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and argv[0] in err and argv[2] in err


def test_serve_present_refuses_explorer_flags(capsys):
    """The talk's scenarios come from its deck: ``--hardware h200 serve --present`` would have been ignored."""
    code, out, err = run_cli(["--hardware", "h200", "serve", "--present"], capsys)
    assert code == 2 and "--present" in err and len(err.strip().splitlines()) == 1


def test_the_parser_still_hands_explorer_flags_to_serve():
    from roofline.tui.cli.main import build_parser

    args = build_parser().parse_args(["--hardware", "h200", "--batch", "8", "serve"])
    assert args.hardware_id == "h200" and args.batch == 8 and args.command == "serve"
