"""``roofline validate --from-bench FILE... --hardware ID``: the contract (exit status, one-line errors, JSON keys),
the metric mapping worked by hand, and the same scoring as a CSV row with the same fields."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from roofline.models.validation import evaluate_serving
from roofline.presets.measurements import read_measurements
from tests.conftest import run_cli

DATA = Path(__file__).parents[1] / "data" / "bench"
CORPUS = Path(__file__).parents[1] / "corpus" / "bench"


def bench_json(capsys, *argv):
    code, out, err = run_cli(["validate", "--format", "json", *argv], capsys)
    assert code == 0, err
    return json.loads(out)


def metrics_of(run):
    return {m["metric"]: m for m in run["metrics"]}


def test_vllm_run_scored_with_what_the_file_records(capsys):
    """vllm-bench-serve.json: mean TTFT 61.42 ms -> ttft_s 0.06142; mean TPOT 11.87 ms -> itl_s 0.01187; output
    1326.309 tok/s on TP1 -> 1326.309 per device; concurrency 16 from max_concurrency; the model from model_id
    (meta-llama/Llama-3.1-8B-Instruct -> llama-3.1-8b), the engine from the tool (vllm), TP from the default."""
    out = bench_json(capsys, "--from-bench", str(DATA / "vllm-bench-serve.json"), "--hardware", "H100-SXM")
    (run,) = out["runs"]
    assert (run["model"], run["hardware"], run["engine"], run["concurrency"], run["tp"]) == (
        "llama-3.1-8b", "h100-sxm", "vllm", 16, 1)
    m = metrics_of(run)
    assert m["ttft_s"]["measured"] == pytest.approx(0.06142)
    assert m["itl_s"]["measured"] == pytest.approx(0.01187)
    assert m["output_tokens_per_s_per_device"]["measured"] == pytest.approx(1326.309)
    assert run["from"]["tp"].startswith("default 1") and run["from"]["hardware"].startswith("--hardware")
    assert run["from"]["model"].startswith("file")
    assert out["summary"]["rows"] == 3 and out["skipped"] == []


def test_tp_from_the_flag_divides_the_throughput_per_device(capsys):
    """TP 2: 1326.309 tok/s over 2 devices = 663.15 per device; the report says TP came from --tp."""
    out = bench_json(capsys, "--from-bench", str(DATA / "vllm-bench-serve.json"), "--hardware", "h100-sxm",
                     "--tp", "2")
    (run,) = out["runs"]
    assert metrics_of(run)["output_tokens_per_s_per_device"]["measured"] == pytest.approx(1326.309 / 2)
    assert run["from"]["tp"] == "--tp"


def test_same_scoring_as_a_csv_row(tmp_path, capsys):
    """The vLLM run's itl_s scored through --from-bench equals the CSV path's row with the same fields."""
    out = bench_json(capsys, "--from-bench", str(DATA / "vllm-bench-serve.json"), "--hardware", "h100-sxm")
    mine = metrics_of(out["runs"][0])["itl_s"]
    csv = tmp_path / "m.csv"
    csv.write_text("id,hardware,tp,pp,model,weights,kv,batch,prompt,output,metric,value,engine,concurrency\n"
                   "V-1,h100-sxm,1,1,llama-3.1-8b,,bf16,,1024,256,itl_s,0.01187,vllm,16\n")
    (row,), skipped = read_measurements(csv)
    assert not skipped
    result, fits = evaluate_serving(row.id, row.scenario, row.metric, row.value, 16, None)
    assert fits and mine["expected"] == pytest.approx(result.expected, rel=1e-12)
    assert mine["bound"] == pytest.approx(result.bound, rel=1e-12)


@pytest.mark.parametrize(("name", "hardware", "runs"), [
    ("vllm-bench-serve-append.jsonl", "h100-sxm", 2),
    ("sglang-bench-serving.jsonl", "h100-sxm", 2),
    ("genai-perf-profile_export_genai_perf.json", "h100-sxm", 1),
    ("genai-perf-0.0-profile_export_genai_perf.json", "h100-sxm", 1),
    ("aiperf-profile_export_aiperf.json", "h100-sxm", 1),
    ("guidellm-benchmarks.json", "h100-sxm", 3),
    ("guidellm-0.3-benchmarks.json", "h100-sxm", 2),
    ("llama-bench.json", "rtx-4090", 4),
    ("llama-bench.jsonl", "rtx-4090", 4),
    ("llama-bench.csv", "rtx-4090", 4),
])
def test_every_format_scores(capsys, name, hardware, runs):
    out = bench_json(capsys, "--from-bench", str(DATA / name), "--hardware", hardware, "--model", "llama-3.1-8b")
    assert len(out["runs"]) == runs and out["skipped"] == []
    for run in out["runs"]:
        assert run["from"]["model"] == "--model"
        for m in run["metrics"]:
            assert m["measured"] > 0 and ("expected" in m or "left_out" in m)


def test_llama_bench_mapping(capsys):
    """tg128 @ d4096: avg_ts 112.9 tok/s -> itl_ms 1000 / 112.9 = 8.857 at prompt 4096, batch 1; the weights
    (q4_k_m) and KV (fp16) from the file, the engine llamacpp from the tool."""
    out = bench_json(capsys, "--from-bench", str(DATA / "llama-bench.json"), "--hardware", "rtx-4090")
    depth = next(r for r in out["runs"] if r["label"] == "tg128 @ d4096")
    assert metrics_of(depth)["itl_ms"]["measured"] == pytest.approx(1000 / 112.9, rel=1e-3)
    assert (depth["prompt_tokens"], depth["weights"], depth["kv"], depth["engine"]) == (4096, "q4_k_m", "fp16",
                                                                                       "llamacpp")


def test_several_files_at_once(capsys):
    out = bench_json(capsys, "--from-bench", str(DATA / "vllm-bench-serve.json"),
                     str(DATA / "genai-perf-profile_export_genai_perf.json"), "--hardware", "h100-sxm")
    assert [r["id"] for r in out["runs"]] == ["B1.1", "B2.1"]
    assert set(out["by_tool"]) == {"vllm bench serve", "genai-perf"}


def test_a_run_without_a_model_name_asks_for_model(capsys):
    code, out, err = run_cli(["validate", "--from-bench", str(DATA / "sglang-bench-serving.jsonl"), "--hardware",
                              "h100-sxm"], capsys)
    assert code == 2 and err.count("\n") == 1 and "pass --model ID" in err


def test_missing_concurrency_comes_from_the_flag(tmp_path, capsys):
    """An AIPerf file that records neither a concurrency nor a rate: skipped with why, or scored at --concurrency."""
    doc = json.loads((DATA / "aiperf-profile_export_aiperf.json").read_text())
    del doc["input_config"]["loadgen"]["concurrency"]
    file = tmp_path / "profile_export_aiperf.json"
    file.write_text(json.dumps(doc))
    code, _, err = run_cli(["validate", "--from-bench", str(file), "--hardware", "h100-sxm"], capsys)
    assert code == 2 and "pass --concurrency N" in err
    out = bench_json(capsys, "--from-bench", str(file), "--hardware", "h100-sxm", "--concurrency", "16")
    assert out["runs"][0]["concurrency"] == 16 and out["runs"][0]["from"]["load"] == "--concurrency"


def test_text_report_names_the_origins(capsys):
    code, out, _ = run_cli(["validate", "--from-bench", str(DATA / "vllm-bench-serve.json"), "--hardware",
                            "h100-sxm"], capsys)
    assert code == 0
    assert "tp default 1 (not recorded)" in out and "kv default bf16 (not recorded)" in out
    assert "itl_s" in out and "all " in out


@pytest.mark.parametrize("name", ["vllm-truncated.json", "vllm-nan-tpot.json", "guidellm-nan-itl.json",
                                  "llama-bench-nan.csv", "unknown-tool.json"])
def test_a_broken_file_is_one_line_exit_2(capsys, name):
    code, out, err = run_cli(["validate", "--from-bench", str(CORPUS / name), "--hardware", "h100-sxm"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and name in err


@pytest.mark.parametrize(("argv", "fragment"), [
    (["validate"], "give a measurements CSV (FILE) or --from-bench"),
    (["validate", "x.csv", "--from-bench", "y.json"], "not both"),
    (["validate", "--from-bench", str(DATA / "vllm-bench-serve.json")], "needs --hardware"),
    (["validate", "--from-bench", str(DATA / "vllm-bench-serve.json"), "--hardware", "h100-sxn"], "did you mean"),
    (["validate", "--from-bench", str(DATA / "vllm-bench-serve.json"), "--hardware", "h100-sxm", "--format",
      "markdown"], "use text or json"),
])
def test_usage_errors(capsys, argv, fragment):
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and fragment in err and err.count("\n") == 1


@pytest.mark.parametrize(("argv", "fragment"), [
    (["--engine-url", "file:///etc/passwd"], "not http or https"),
    (["--engine-url", "http://user:pw@127.0.0.1:8000"], "no user or password"),
    (["--measured", str(CORPUS / "vllm-nan-tpot.json")], "--measured:"),
    (["--measured", str(CORPUS / "missing-file.json")], "--measured:"),
])
def test_explorer_engine_flags_fail_before_the_screen_opens(capsys, argv, fragment):
    """A bad --engine-url or --measured file is one line, exit 2, before anything full-screen starts."""
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and fragment in err and err.count("\n") == 1 and out == ""


def test_explorer_engine_flags_in_help(capsys):
    code, out, _ = run_cli(["--help"], capsys)
    assert code == 0 and "--engine-url URL" in out and "--measured FILE" in out and "ROOFLINE_ENGINE_TOKEN" in out
