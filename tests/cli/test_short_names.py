"""Issue 30 item 26 (CLI parts): a mistyped command suggests the right one; common short names of devices
(``mi300``, ``H100_SXM``) resolve when they name one preset and say which ones they could mean otherwise
(``h100``, ``a100``)."""

from __future__ import annotations

import json

import pytest

from roofline.presets.ids import match_id, short_name_matches
from tests.conftest import run_cli

HARDWARE = ["h100-sxm", "h100-pcie", "h100-nvl", "h200", "a10", "a10g", "a100-pcie-80gb", "a100-sxm4-40gb",
            "a100-sxm4-80gb", "mi300x", "mi325x", "l4", "l40s", "gb200", "b200"]


@pytest.fixture(autouse=True)
def _no_user_presets(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path / "no-user-presets"))


@pytest.mark.parametrize(("typed", "suggested"), [("reprot", "report"), ("presest", "presets"), ("paln", "plan"),
                                                  ("sreve", "serve")])
def test_a_mistyped_command_suggests_the_right_one(capsys, typed, suggested):
    code, out, err = run_cli([typed], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"did you mean {suggested!r}?" in err or f"did you mean '{suggested}'" in err


@pytest.mark.parametrize(("short", "full"), [("mi300", "mi300x"), ("l40", "l40s"), ("H100_SXM", "h100-sxm"),
                                             ("h200", "h200"), ("B200", "b200")])
def test_a_short_name_that_names_one_preset_resolves(short, full):
    assert match_id(short, HARDWARE) == full


@pytest.mark.parametrize(("short", "several"), [
    ("h100", ["h100-nvl", "h100-pcie", "h100-sxm"]),
    ("a100", ["a100-pcie-80gb", "a100-sxm4-40gb", "a100-sxm4-80gb"]),
])
def test_a_short_name_of_several_presets_lists_them(short, several):
    assert match_id(short, HARDWARE) is None
    assert sorted(short_name_matches(short, HARDWARE)) == several


def test_a10_is_not_a_short_name_of_the_a100s():
    assert match_id("a10", HARDWARE) == "a10" and "a100-sxm4-80gb" not in short_name_matches("a1", HARDWARE)


@pytest.mark.parametrize("command", [["report", "--format", "json", "--no-ops"], ["plan", "--format", "json"]])
def test_report_and_plan_resolve_a_short_name(capsys, command):
    code, out, err = run_cli([*command, "--hardware", "mi300"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert (data["hardware"]["id"] if isinstance(data["hardware"], dict) else data["hardware"]) == "mi300x"


@pytest.mark.parametrize("command", [["report"], ["plan"], []])
def test_an_ambiguous_short_name_says_which_ones_it_could_mean(capsys, monkeypatch, command):
    monkeypatch.setattr("roofline.tui.app.run_explorer", lambda *a, **k: pytest.fail("opened"))
    code, out, err = run_cli([*command, "--hardware", "h100"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "could mean" in err and all(i in err for i in ("h100-sxm", "h100-pcie", "h100-nvl"))
