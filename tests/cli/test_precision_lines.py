"""Issue 30 item 3: ``report`` and ``plan`` say the precisions they used on their first lines, and warn when 8-bit
float weights run with 16-bit activations on a part with fp8 tensor cores (weight-only fp8: the GEMMs at the
16-bit peak, while vLLM and TensorRT-LLM run such checkpoints as W8A8 there)."""

from __future__ import annotations

import json

import pytest

from roofline.tui.views.precision_text import precision_line, weight_only_fp8_warning
from tests.conftest import run_cli


@pytest.fixture(autouse=True)
def _no_user_presets(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path / "no-user-presets"))


def _first_lines(out: str, n: int = 4) -> str:
    return "\n".join(out.splitlines()[:n])


@pytest.mark.parametrize("command", [["report", "--no-ops"], ["plan"]])
@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_the_precisions_are_on_the_first_lines(capsys, command, fmt):
    code, out, err = run_cli([*command, "--format", fmt, "--weights", "fp8", "--activations", "fp8", "--kv",
                              "fp8"], capsys)
    assert code == 0, err
    assert "weights fp8, activations fp8, kv fp8" in _first_lines(out)


@pytest.mark.parametrize("command", [["report", "--no-ops"], ["plan"]])
def test_weight_only_fp8_on_an_fp8_part_is_warned_about(capsys, command):
    code, out, err = run_cli([*command, "--hardware", "h100-sxm", "--weights", "fp8"], capsys)
    assert code == 0, err
    head = _first_lines(out, 8)
    assert "weight-only" in head and "--activations fp8" in head


@pytest.mark.parametrize("argv", [
    ["--hardware", "h100-sxm", "--weights", "fp8", "--activations", "fp8"],  # W8A8: nothing to warn about
    ["--hardware", "a100-sxm4-80gb", "--weights", "fp8"],  # no fp8 tensor cores: weight-only is all there is
    ["--hardware", "h100-sxm", "--weights", "int4"],
])
def test_no_warning_where_it_does_not_apply(capsys, argv):
    code, out, err = run_cli(["report", "--no-ops", *argv], capsys)
    assert code == 0, err
    assert "--activations fp8" not in out


def test_plan_json_carries_the_precisions_and_the_warning(capsys):
    code, out, err = run_cli(["plan", "--format", "json", "--weights", "fp8"], capsys)
    assert code == 0, err
    plan = json.loads(out)
    assert plan["precisions"] == {"weights": "fp8", "expert_weights": None, "activations": "bf16", "kv": "bf16"}
    assert any("W8A16" in warning for warning in plan["warnings"])


def test_the_formatting_functions():
    assert precision_line("bf16", "bf16", "bf16") == "weights bf16, activations bf16, kv bf16"
    assert "weight-only" in precision_line("fp8", "bf16", "bf16")
    assert precision_line("bf16", "bf16", "fp8", expert_weights="fp4").startswith("weights bf16 (experts fp4)")
    peaks = {"bf16": 989.4e12, "fp8": 1978.9e12}
    assert "2.0x" in weight_only_fp8_warning("fp8", "bf16", peaks, "H100")
    assert weight_only_fp8_warning("fp8", "bf16", {"bf16": 312e12}, "A100") is None
    assert weight_only_fp8_warning("bf16", "bf16", peaks, "H100", expert_weights="fp8") is not None
