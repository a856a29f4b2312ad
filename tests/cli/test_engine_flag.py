"""``--engine`` names a profile or ``unknown``: a mistyped name exits 2 with one line naming the closest ids."""

from __future__ import annotations

import pytest

from roofline.tui.cli.main import main


def test_a_mistyped_engine_names_the_closest_profiles(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["report", "--hardware", "h100-sxm", "--engine", "vlm"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "did you mean vllm" in err[-1] and "'unknown' for a stack without one" in err[-1]


def test_unknown_is_an_engine_and_the_report_says_so(capsys):
    assert main(["report", "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--engine", "unknown"]) == 0
    out = capsys.readouterr().out
    assert "engine unknown: no profile named" in out and "geometric middle" in out
