"""`roofline validate` applies the flags' ranges (tui/inputs/limits.check_number) to every row it reads."""

from __future__ import annotations

import json
import math

from roofline.tui.cli.main import main

HEADER = "id,hardware,tp,pp,model,weights,kv,batch,prompt,output,metric,value\n"
GOOD = "A-1,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,1,128,128,itl_ms,7.5\n"


def _json(path, capsys) -> dict:
    assert main(["validate", str(path), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_row_beyond_a_flag_range_is_skipped_with_the_reason(tmp_path, capsys):
    """--output accepts at most 1,000,000 tokens: an output of 1e11 is refused as the flag would refuse it, and so
    are a tp of 2,000 (--tp: at most 1,024) and a batch of 0 (--batch: at least 1)."""
    f = tmp_path / "m.csv"
    f.write_text(HEADER + GOOD
                 + "A-2,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,1,128,100000000000,itl_ms,7.5\n"
                 + "A-3,h100-sxm,2000,1,llama-3.1-8b,bf16,bf16,1,128,128,itl_ms,7.5\n"
                 + "A-4,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,0,128,128,itl_ms,7.5\n")
    out = _json(f, capsys)
    reasons = {s["id"]: s["reason"] for s in out["skipped"]}
    assert set(reasons) == {"A-2", "A-3", "A-4"}
    assert reasons["A-2"].startswith("output: must be between 1 and 1,000,000")
    assert reasons["A-3"].startswith("tp: must be between 1 and 1,024")
    assert reasons["A-4"].startswith("batch: must be between 1 and")
    assert [r["id"] for r in out["rows"]] == ["A-1"] and out["summary"]["rows"] == 1


def test_no_infinite_value_reaches_the_summary(tmp_path, capsys):
    """A value of inf, or an output of 1e11 (which would make the predicted rate 0 and the error -100 % or the time
    infinite), is skipped, so every figure in the summary is finite."""
    f = tmp_path / "m.csv"
    f.write_text(HEADER + GOOD
                 + "A-5,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,1,128,128,itl_ms,inf\n"
                 + "A-6,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,1,128,100000000000,e2e_s,3\n")
    out = _json(f, capsys)
    assert {s["id"] for s in out["skipped"]} == {"A-5", "A-6"}
    assert all(math.isfinite(v) for v in out["summary"].values())
    assert all(math.isfinite(r["expected"]) and math.isfinite(r["bound"]) for r in out["rows"])
    assert main(["validate", str(f)]) == 0
    text = capsys.readouterr().out
    assert "skipped A-6 (line 4): output: must be between 1 and 1,000,000" in text and "inf%" not in text
