"""`roofline validate`: saturated-throughput rows, `--holdout source`, rows past the model's context, markdown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from roofline.models.serving import frontier, kv_cache_plan
from roofline.models.serving.inputs import ServingMix, ServingOptions
from roofline.models.validation import (
    SATURATED_METRIC,
    ValidationCase,
    context_flag,
    leave_one_family_out,
    leave_one_source_out,
    predict_serving,
    saturated_throughput,
    source_of,
)
from roofline.presets.measurements import read_measurements
from roofline.tui.cli.main import main

DATA = Path(__file__).parents[1] / "data"
DEV = DATA / "measured-dev-validation.csv"
HEADER = "id,source,hardware,tp,pp,model,weights,kv,batch,prompt,output,metric,value,engine,family,concurrency,rate\n"


def _json(path: Path, *extra: str, capsys) -> dict:
    assert main(["validate", str(path), "--format", "json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


# --- source documents ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "document"), [
    ("github:NVIDIA/TensorRT-LLM docs/source/performance.md @138f96d (Peak Throughput)",
     "github:NVIDIA/TensorRT-LLM docs/source/performance.md"),
    ("github:pytorch-labs/gpt-fast README.md @32971d3 (section: AMD)", "github:pytorch-labs/gpt-fast README.md"),
    ("github:owner/repo @abc (no path)", "github:owner/repo"),
    ("https://buildkite.com/vllm/performance-benchmark/builds/9513 (Latency tests)",
     "https://buildkite.com/vllm/performance-benchmark/builds/9513"),
    ("A vendor whitepaper (table 3); figures as printed", "A vendor whitepaper"),
    ("", ""),
])
def test_source_of_names_the_document_without_commit_or_section(text, document):
    assert source_of(text) == document


def _dev_cases() -> list[ValidationCase]:
    rows, _ = read_measurements(DEV)
    return [ValidationCase(id=r.id, family=r.family, scenario=r.scenario, metric=r.metric, measured=r.value,
                           source=source_of(r.source)) for r in rows]


def test_leave_one_source_out_refits_without_each_document():
    """The gpt-fast README (GF's A100 int8/int4 rows) is the only document with weight-only int4 rows outside the
    Mixtral README, so without it the int4 factor has no case left to fit it: the prior (no penalty) is used, as in
    leave-one-family-out without GF. Rows of other documents move only where the refit changes their factor."""
    cases = _dev_cases()
    by_source = leave_one_source_out(cases)
    by_family = leave_one_family_out(cases)
    assert by_source.group == "source" and by_family.group == "family"
    readme = "github:pytorch-labs/gpt-fast README.md"
    assert readme in by_source.by_group and "GF" in by_family.by_family
    narrow = {f.name: f for f in by_source.factors}["weight_only_narrow"]
    assert narrow.without_group[readme] is None and narrow.without_family is narrow.without_group
    assert [r.id for r in by_source.in_sample] == [c.id for c in cases]
    assert by_source.in_sample_summary == by_family.in_sample_summary
    # a row that depends on no fitted factor scores the same in-sample and held out
    for case, a, b in zip(cases, by_source.in_sample, by_source.held_out, strict=True):
        if case.family == "TR":
            assert a.expected == b.expected


def test_holdout_both_reports_family_and_source_side_by_side(capsys):
    out = _json(DEV, "--holdout", "both", capsys=capsys)
    assert out["holdout"]["group"] == "family" and out["holdout_source"]["group"] == "source"
    assert set(out["holdout"]["by_family"]) == {"GF", "LM", "TR", "VL"}
    assert "github:pytorch-labs/gpt-fast mixtral-moe/README.md" in out["holdout_source"]["by_source"]
    assert out["holdout_source"]["in_sample"] == out["holdout"]["in_sample"]
    assert main(["validate", str(DEV), "--holdout", "source"]) == 0
    text = capsys.readouterr().out
    assert "leave-one-source-out" in text and "leave-one-family-out" not in text
    assert "source github:InternLM/lmdeploy docs/en/benchmark/a100_fp16.md" in text


# --- saturated-throughput tables -------------------------------------------------------------------------------


def _saturated_row(tmp_path: Path, prompt: int, output: int, requests: int) -> Path:
    f = tmp_path / "sat.csv"
    f.write_text(HEADER + f"T-1,a table,h100-sxm,1,1,llama-3.1-8b,fp8,fp8,,{prompt},{output},{SATURATED_METRIC},"
                 f"10000,trtllm,T,{requests},\n")
    return f


def test_a_saturated_row_is_the_frontier_at_the_memory_limit(tmp_path, capsys):
    """1000/1000 on one H100 at fp8: a request holds ceil(2000/16) = 125 KV blocks, so the engine keeps only the
    requests its blocks hold (plan.max_concurrency, well below the 3000 queued); the budget allows 8192 / (1 +
    1000/1000) = 4096 decoding, more than memory holds, so memory is the limit and the figure is the frontier's
    output tokens/s at that concurrency."""
    rows, skipped = read_measurements(_saturated_row(tmp_path, 1000, 1000, 3000))
    assert skipped == [] and rows[0].is_serving and rows[0].concurrency == 3000
    scenario = rows[0].scenario
    mix = ServingMix(prompt_tokens=1000, output_tokens=1000)
    limit = kv_cache_plan(scenario, mix, ServingOptions()).max_concurrency
    assert 1 <= limit < 3000 < 4096
    point = frontier(scenario, mix, [limit], "expected", ServingOptions()).points[0]
    assert point.decoding_requests == limit
    value, fits = saturated_throughput(scenario, mix, 3000)
    assert fits and value == pytest.approx(point.tokens_per_s_per_device)
    out = _json(tmp_path / "sat.csv", capsys=capsys)["serving"]
    (row,) = out["rows"]
    assert row["expected"] == pytest.approx(value) and row["bound"] >= row["expected"]
    assert out["by_metric"][SATURATED_METRIC]["rows"] == 1


def test_a_saturated_row_with_a_long_prompt_is_limited_by_the_token_budget(tmp_path):
    """5000/500: each decoding request brings 5000/500 = 10 prompt tokens per step on average, so the 8192-token
    budget holds 8192 / (1 + 10) = 744.7 decoding requests; with fewer requests queued than memory holds, the
    figure is the frontier at the queued count, whose decoding count the budget caps."""
    rows, _ = read_measurements(_saturated_row(tmp_path, 5000, 500, 800))
    scenario = rows[0].scenario
    mix = ServingMix(prompt_tokens=5000, output_tokens=500)
    limit = kv_cache_plan(scenario, mix, ServingOptions()).max_concurrency
    requests = min(800, limit)
    point = frontier(scenario, mix, [requests], "expected", ServingOptions()).points[0]
    assert point.decoding_requests == pytest.approx(min(requests, 8192 / 11))
    value, _ = predict_serving(scenario, SATURATED_METRIC, 800, None)
    assert value == pytest.approx(point.tokens_per_s_per_device)
    # fewer requests than the limit: the run can keep only those in flight
    small, _ = saturated_throughput(scenario, mix, 2)
    assert small == pytest.approx(frontier(scenario, mix, [2], "expected", ServingOptions()).points[0]
                                  .tokens_per_s_per_device)


def test_a_saturated_metric_without_a_request_count_is_skipped_in_one_line(tmp_path, capsys):
    f = tmp_path / "bad.csv"
    f.write_text(HEADER + f"T-1,x,h100-sxm,1,1,llama-3.1-8b,fp8,fp8,,1000,1000,{SATURATED_METRIC},10000,,T,,\n"
                 "T-2,x,h100-sxm,1,1,llama-3.1-8b,fp8,fp8,1,128,128,itl_ms,7,,T,,\n")
    out = _json(f, capsys=capsys)
    (skip,) = out["skipped"]
    assert skip["id"] == "T-1" and "metric" in skip["reason"] and "\n" not in skip["reason"]


# --- prompts past the model's maximum context ------------------------------------------------------------------


def test_rows_past_the_maximum_context_are_reported_apart(tmp_path, capsys):
    """Llama-3.1-8B's maximum context is 131,072 tokens: a 131,000-token prompt fits, with 2,000 output tokens it
    does not (133,000); a 140,000-token prompt does not on its own. Neither is scored, static or serving."""
    f = tmp_path / "ctx.csv"
    f.write_text(HEADER + "C-1,x,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,1,128,128,itl_ms,7.5,,C,,\n"
                 "C-2,x,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,1,131000,2000,itl_ms,30,,C,,\n"
                 "C-3,x,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,1,140000,10,ttft_ms,9000,,C,,\n"
                 "C-4,x,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,,131000,2000,itl_s,0.03,vllm,C,1,\n")
    rows, skipped = read_measurements(f)
    assert skipped == []
    reasons = {r.id: context_flag(r.scenario) for r in rows}
    assert reasons["C-1"] is None
    assert "prompt + output 133,000 tokens" in reasons["C-2"] and "131,072" in reasons["C-2"]
    assert reasons["C-3"].startswith("prompt 140,000 tokens")
    out = _json(f, capsys=capsys)
    assert [r["id"] for r in out["rows"]] == ["C-1"] and out["summary"]["rows"] == 1
    assert out["serving"]["rows"] == [] and out["serving"]["summary"] is None
    assert [c["id"] for c in out["context_flagged"]] == ["C-2", "C-3", "C-4"]
    assert main(["validate", str(f)]) == 0
    assert "left out (context) C-3: prompt 140,000 tokens" in capsys.readouterr().out


# --- markdown ---------------------------------------------------------------------------------------------------


def test_markdown_gives_in_sample_beside_both_holdouts_and_per_source_rows(tmp_path, capsys):
    f = tmp_path / "m.csv"
    f.write_text(HEADER + "M-1,doc one (t1),h100-sxm,1,1,llama-3.1-8b,bf16,bf16,1,128,128,itl_ms,7.5,,M,,\n"
                 "M-2,doc two (t2),h100-sxm,1,1,llama-3.1-8b,bf16,bf16,1,128,128,itl_ms,8,,M,,\n"
                 "M-3,doc | three,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,,128,128,itl_s,0.01,vllm,N,16,\n"
                 "M-4,doc one,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,1,131000,9000,itl_ms,9,,M,,\n")
    assert main(["validate", str(f), "--format", "markdown"]) == 0
    text = capsys.readouterr().out
    for label in ("| in-sample (shipped) | 2 |", "| leave-one-family-out | 2 |", "| leave-one-source-out | 2 |",
                  "| M | doc one | 1 |", "| M | doc two | 1 |", "| N | doc / three | 1 | vllm | h100-sxm |",
                  "| ITL | 1 |", "left out (context) M-4"):
        assert label in text, label


def test_a_serving_only_file_says_what_its_holdout_means(tmp_path, capsys):
    """Nothing the serving model uses is fitted to serving rows; an fp4 gpt-oss row under vLLM on an A100 uses the
    generic weight-only factor (fitted on gpt-fast's rows), and the note names it instead of pretending to refit."""
    f = tmp_path / "s.csv"
    f.write_text(HEADER + "S-1,x,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,,128,128,itl_s,0.01,vllm,S,16,\n"
                 "S-2,x,a100-sxm4-80gb,1,1,gpt-oss-120b,,bf16,,230,217,itl_s,0.012,vllm,S,4,\n")
    out = _json(f, "--holdout", "both", capsys=capsys)
    assert "S-2" in out["serving"]["holdout_note"] and "S-1" not in out["serving"]["holdout_note"]
    assert main(["validate", str(f), "--holdout", "source"]) == 0
    assert "serving holdout: 1 serving row(s) use a fitted weight-only factor (S-2)" in capsys.readouterr().out
