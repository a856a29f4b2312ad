"""Every scenario flag is declared from the input registry, with its range, on every command that takes it:
``report``, the explorer's and ``plan``'s (once plan had its own: ``--itl-ms`` (0, 1e9], ``--spec-tokens`` 1..64)."""

from __future__ import annotations

import json

import pytest

from roofline.tui.cli.main import build_parser
from roofline.tui.inputs.registry import INPUTS
from tests.conftest import run_cli

PLAN_LISTS = ("concurrency", "price_per_device_hour")
NUMBER_FLAGS = [spec for spec in INPUTS if spec.flag and spec.kind in ("int", "float")]


def _parses(argv: list[str]) -> bool:
    try:
        build_parser().parse_args(argv)
    except SystemExit:
        return False
    return True


def _outside(spec) -> tuple[float, float]:
    step = 1 if spec.whole else max(abs(spec.low) * 0.5, 1e-6)
    return spec.low - step, spec.high * 2 if spec.high else 1


@pytest.mark.parametrize("spec", NUMBER_FLAGS, ids=lambda s: s.flag)
@pytest.mark.parametrize("command", ["report", "plan"])
def test_each_number_flag_takes_the_registry_range(spec, command, capsys):
    """The ends of the range parse, a value past either end exits 2, on report and on plan alike."""
    if command == "plan" and spec.name == "batch":
        pytest.skip("plan has no static batch")
    below, above = _outside(spec)
    fmt = (lambda v: str(int(v))) if spec.whole else repr
    assert _parses([command, spec.flag, fmt(spec.low)]) and _parses([command, spec.flag, fmt(spec.high)])
    assert not _parses([command, spec.flag, fmt(below)])
    assert not _parses([command, spec.flag, fmt(above)])
    capsys.readouterr()


@pytest.mark.parametrize("name", PLAN_LISTS)
def test_plan_lists_check_each_value_with_the_registry(name, capsys):
    spec = next(s for s in INPUTS if s.name == name)
    low = str(int(spec.low)) if spec.whole else repr(spec.low)
    args = build_parser().parse_args(["plan", spec.flag, f"{low},{low}"])
    assert getattr(args, name)[0] == spec.low
    assert not _parses(["plan", spec.flag, f"{low},{spec.high * 2:g}"])
    capsys.readouterr()


def _argv(command: str, spec) -> list[str]:
    """The command with the flag and a value it takes (a bool flag alone)."""
    if spec.kind == "bool":
        return [command, spec.flag]
    value = {"dtype": lambda: spec.choices[0], "id": lambda: "anything"}.get(
        spec.kind, lambda: str(int(spec.low)) if spec.whole else repr(spec.low))()
    return [command, spec.flag, value]


def test_plan_takes_every_scenario_flag_but_the_batch_and_the_switch(capsys):
    def flags(command):
        return {spec.flag for spec in INPUTS if spec.flag and _parses(_argv(command, spec))}

    assert flags("report") == {spec.flag for spec in INPUTS if spec.flag}
    assert flags("report") - flags("plan") == {"--batch", "--serving"}
    capsys.readouterr()


def test_spec_tokens_zero_is_no_speculation_on_plan(capsys):
    """0 is off in the explorer and in scenario files, and so on plan; with --accept it means nothing."""
    code, out, err = run_cli(["plan", "--spec-tokens", "0", "--concurrency", "1", "--format", "json"], capsys)
    assert code == 0, err
    assert json.loads(out)["speculation"] is None
    code, _, err = run_cli(["plan", "--spec-tokens", "0", "--accept", "0.5", "--concurrency", "1"], capsys)
    assert code == 2 and "--spec-tokens" in err and len(err.strip().splitlines()) == 1


def test_an_itl_target_below_a_microsecond_is_a_unit_slip_everywhere(capsys):
    for argv in (["plan", "--itl-ms", "0.0005"], ["report", "--itl-ms", "0.0005"], ["--itl-ms", "0.0005"]):
        code, _, err = run_cli(argv, capsys)
        assert code == 2 and "--itl-ms" in err, argv


def test_a_list_flag_before_plan_is_a_list_of_one(capsys):
    """``roofline --concurrency 8 plan``: the top level takes one value, plan a list; the value carries over."""
    code, out, err = run_cli(["--concurrency", "8", "plan", "--format", "json"], capsys)
    assert code == 0, err
    assert [p["concurrency"] for p in json.loads(out)["expected"]["frontier"]] == [8]
    code, out, err = run_cli(["--concurrency", "8", "plan", "--concurrency", "2,4", "--format", "json"], capsys)
    assert code == 0, err
    assert [p["concurrency"] for p in json.loads(out)["expected"]["frontier"]] == [2, 4]
