"""Issue 30 items 2 and 19: one reader of typed numbers (presets/number_text.py) for every flag and field.

``--batch 1,5`` was batch 15 and ``--peak-tflops 989,5`` 9.89 PFLOP/s, while ``--itl-ms 1,5`` was refused: a
comma is a thousands separator only in well-formed groups of three, and anything else is refused in one line,
the same way everywhere. A 100,000-digit value is not echoed whole.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from roofline.presets.number_text import NumberTextError, parse_number_text
from tests.conftest import run_cli


@pytest.fixture(autouse=True)
def _no_user_presets(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path / "no-user-presets"))


@pytest.mark.parametrize(("text", "value"), [
    ("1,000", 1000.0), ("1,000,000", 1e6), ("12,345.5", 12345.5), ("-1,000", -1000.0), ("1_000", 1000.0),
    (" 42 ", 42.0), ("1.5", 1.5), ("1e3", 1000.0), ("999", 999.0),
])
def test_well_formed_numbers_are_read(text, value):
    assert parse_number_text(text) == value


@pytest.mark.parametrize("text", ["1,5", "989,5", "1,,2", "1,0000", ",100", "100,", "1,00", "1,000,00", "1.000,5",
                                  "nan", "inf", "-inf", "1e999", "", "lots", "1 000"])
def test_anything_else_is_refused(text):
    with pytest.raises(NumberTextError):
        parse_number_text(text)


@given(st.integers(min_value=0, max_value=10**15))
def test_grouped_thousands_read_back_as_the_number(n):
    assert parse_number_text(f"{n:,}") == n


@given(st.integers(min_value=1, max_value=999), st.integers(min_value=1, max_value=99))
def test_a_decimal_comma_is_never_read_as_a_thousands_separator(whole, decimals):
    with pytest.raises(NumberTextError):
        parse_number_text(f"{whole},{decimals}")


SCENARIO_FLAGS = ["--batch", "--peak-tflops", "--kv-compression", "--prompt", "--output", "--pp", "--tp",
                  "--mem-bw-gb-per-s", "--capacity-gib"]


@pytest.mark.parametrize("flag", SCENARIO_FLAGS)
@pytest.mark.parametrize("text", ["1,5", "1,,2"])
def test_report_refuses_a_decimal_comma(capsys, flag, text):
    code, out, err = run_cli(["report", flag, text], capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and flag in err and "comma" in err


@pytest.mark.parametrize("flag", ["--prompt", "--output", "--itl-ms", "--ttft-ms", "--rate", "--prefix-hit",
                                  "--accept"])
def test_plan_refuses_a_decimal_comma_the_same_way(capsys, flag):
    code, out, err = run_cli(["plan", flag, "1,5"], capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and flag in err and "comma" in err


def test_thousands_separators_are_read_on_every_command(capsys):
    code, out, err = run_cli(["report", "--format", "json", "--no-ops", "--prompt", "2,048"], capsys)
    assert code == 0, err
    assert json.loads(out)["batching"]["prompt_tokens"] == 2048
    code, out, err = run_cli(["plan", "--format", "json", "--prompt", "2,048", "--ttft-ms", "1,000", "--rate",
                              "1"], capsys)
    assert code == 0, err
    plan = json.loads(out)
    assert plan["mix"]["prompt_tokens"] == 2048 and plan["targets_asked"]["ttft_s"] == 1.0


@pytest.mark.parametrize("field", ["batch", "prompt_tokens", "kv_compression_ratio", "peak_override_tflops"])
def test_the_explorer_fields_read_numbers_the_same_way(field):
    from roofline.tui.inputs.limits import parse_number

    with pytest.raises(ValueError, match="comma"):
        parse_number(field, "1,5")
    assert parse_number(field, "1,000") == 1000 if field != "kv_compression_ratio" else True


@pytest.mark.parametrize("argv", [["report", "--batch"], ["plan", "--itl-ms"], ["history", "--width"],
                                  ["calibrate", "--measured-itl-ms"]])
def test_a_huge_value_is_not_echoed_whole(capsys, argv):
    code, out, err = run_cli([*argv, "9" * 100_000], capsys)
    assert code == 2 and len(err) < 500 and len(err.strip().splitlines()) == 1
