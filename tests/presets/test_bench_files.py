"""Benchmark result readers (presets/bench_files.py): the golden files of tests/data/bench/ give the values each
tool recorded, in SI units; the broken ones of tests/corpus/bench/ are refused in one line naming file, field and
line; FIFOs, oversized files and folders are refused before a byte is read."""

from __future__ import annotations

import json
import math
import os
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roofline.presets.bench_files import MAX_BENCH_BYTES, read_bench_file
from roofline.presets.errors import PresetFileError

DATA = Path(__file__).parents[1] / "data" / "bench"
CORPUS = Path(__file__).parents[1] / "corpus" / "bench"


def values(run) -> dict[str, float]:
    return {v.quantity: v.value for v in run.values}


def test_vllm_save_result():
    """vllm-bench-serve.json: completed 320, total_input_tokens 327,680 -> mean prompt 1024; total_output_tokens
    81,920 -> 256; mean_ttft_ms 61.42 -> 0.06142 s; mean_tpot_ms 11.87 (TPOT preferred to ITL) -> 0.01187 s;
    max_concurrency 16 with request_rate "inf": a closed loop of 16, no rate."""
    (run,) = read_bench_file(DATA / "vllm-bench-serve.json")
    assert run.tool == "vllm bench serve" and run.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert (run.prompt_tokens, run.output_tokens, run.concurrency, run.rate_per_s) == (1024, 256, 16, None)
    v = values(run)
    assert v["ttft_s"] == pytest.approx(0.06142) and v["itl_s"] == pytest.approx(0.01187)
    assert v["output_tokens_per_s"] == pytest.approx(1326.309)
    assert run.value("itl_s").field == "mean_tpot_ms"
    assert run.is_serving


def test_vllm_append_result_is_one_run_per_line():
    runs = read_bench_file(DATA / "vllm-bench-serve-append.jsonl")
    assert [(r.concurrency, r.line) for r in runs] == [(1, 1), (64, 2)]
    assert values(runs[1])["itl_s"] == pytest.approx(0.01964)


def test_sglang_jsonl_reads_infinity_as_no_rate():
    """Line 1: request_rate Infinity (Python's json.dumps of inf), max_concurrency 32 -> concurrency 32, no rate.
    Line 2: request_rate 4.0, max_concurrency null -> an open loop at 4/s. SGLang records no model name."""
    first, second = read_bench_file(DATA / "sglang-bench-serving.jsonl")
    assert (first.concurrency, first.rate_per_s, first.model) == (32, None, None)
    assert (second.concurrency, second.rate_per_s) == (None, 4.0)
    assert first.prompt_tokens == 2048 and first.output_tokens == 512
    assert values(second)["itl_s"] == pytest.approx(0.00941)


def test_a_burst_with_no_cap_is_read_as_its_size(tmp_path):
    """request_rate inf and max_concurrency null: all 320 prompts at once, read as concurrency 320 (a burst)."""
    doc = json.loads((DATA / "vllm-bench-serve.json").read_text())
    doc["max_concurrency"] = None
    file = tmp_path / "burst.json"
    file.write_text(json.dumps(doc))
    (run,) = read_bench_file(file)
    assert run.concurrency == 320 and run.rate_per_s is None
    assert "one burst of 320 requests" in run.notes[0]


@pytest.mark.parametrize(("name", "tool", "concurrency", "ttft_s", "itl_s", "prompt"), [
    ("genai-perf-profile_export_genai_perf.json", "genai-perf", 8, 0.0831, 0.01244, 550),
    ("genai-perf-0.0-profile_export_genai_perf.json", "genai-perf", 1, 0.0257, 0.00702, 550),
    ("aiperf-profile_export_aiperf.json", "aiperf", 16, 0.0976, 0.0131, 1000),
])
def test_perf_exports(name, tool, concurrency, ttft_s, itl_s, prompt):
    """time_to_first_token.avg and inter_token_latency.avg in ms (their ``unit``) -> s; the concurrency from
    perf_analyzer.stimulus (new genai-perf), input_config.concurrency (old) or loadgen.concurrency (AIPerf)."""
    (run,) = read_bench_file(DATA / name)
    assert run.tool == tool and run.concurrency == concurrency and run.rate_per_s is None
    assert values(run)["ttft_s"] == pytest.approx(ttft_s) and values(run)["itl_s"] == pytest.approx(itl_s)
    assert run.prompt_tokens == prompt and run.model == "meta-llama/Llama-3.1-8B-Instruct"


def test_guidellm_strategies():
    """synchronous -> concurrency 1; concurrent streams 16 -> 16; constant rate 8 -> an open loop at 8/s."""
    runs = read_bench_file(DATA / "guidellm-benchmarks.json")
    assert [(r.concurrency, r.rate_per_s) for r in runs] == [(1, None), (16, None), (None, 8.0)]
    assert values(runs[1])["itl_s"] == pytest.approx(0.0117)
    assert runs[1].model == "meta-llama/Llama-3.1-8B-Instruct" and runs[1].prompt_tokens == 512


def test_guidellm_0_3_throughput_uses_the_measured_concurrency():
    """guidellm 0.3: args.strategy, worker.backend_model; a throughput sweep has no concurrency of its own, so the
    measured mean requests in flight (62.72) is used, rounded to 63, and a note says so."""
    throughput, poisson = read_bench_file(DATA / "guidellm-0.3-benchmarks.json")
    assert throughput.concurrency == 63 and "measured mean requests in flight" in throughput.notes[0]
    assert poisson.rate_per_s == 4.0 and poisson.model == "meta-llama/Llama-3.1-8B-Instruct"


@pytest.mark.parametrize("name", ["llama-bench.json", "llama-bench.jsonl", "llama-bench.csv"])
def test_llama_bench_three_outputs_read_alike(name):
    """pp512 -> prefill tokens/s (prompt 512, output 1); tg128 -> decode tokens/s per sequence (prompt 1);
    tg128 @ d4096 -> the mean decode step 1 / avg_ts (prompt 4096: the depth's prefill is not timed);
    pp512+tg128 -> e2e s = avg_ns / 1e9. ``llama 8B Q4_K - Medium`` -> q4_k_m, type_k f16 -> fp16, flash_attn 1."""
    pp, tg, tg_depth, both = read_bench_file(DATA / name)
    assert (pp.label, tg.label, tg_depth.label, both.label) == ("pp512", "tg128", "tg128 @ d4096", "pp512+tg128")
    assert (pp.prompt_tokens, pp.output_tokens, pp.batch) == (512, 1, 1)
    assert values(pp)["prefill_tokens_per_s"] == pytest.approx(11250, rel=1e-3)
    assert (tg.prompt_tokens, tg.output_tokens) == (1, 128)
    assert values(tg)["decode_tokens_per_s_per_seq"] == pytest.approx(127.4, rel=1e-3)
    assert tg_depth.prompt_tokens == 4096
    assert values(tg_depth)["decode_step_s"] == pytest.approx(1 / 112.9, rel=1e-3)
    assert values(both)["e2e_s"] == pytest.approx(512 / 11250 + 128 / 127.4, rel=1e-3)
    assert (tg.weights, tg.kv, tg.flash_attention) == ("q4_k_m", "fp16", True)
    assert not tg.is_serving


# file -> (field named, message fragment, line)
CORPUS_CASES = {
    "vllm-truncated.json": (None, "not valid JSON", 1),
    "vllm-missing-ttft.json": ("mean_ttft_ms", "missing", None),
    "vllm-nan-tpot.json": ("mean_tpot_ms", "NaN", None),
    "vllm-throughput-string.json": ("output_throughput", "'fast' is not a number", None),
    "vllm-completed-zero.json": ("completed", "must be > 0", None),
    "vllm-concurrency-fraction.json": ("max_concurrency", "whole number", None),
    "sglang-negative-ttft.jsonl": ("mean_ttft_ms", "must be > 0, got -3.0", 2),
    "sglang-truncated-line.jsonl": (None, "not valid JSON", 2),
    "genai-perf-bad-unit.json": ("time_to_first_token.unit", "not a time unit", None),
    "aiperf-missing-itl.json": ("inter_token_latency", "missing", None),
    "guidellm-unknown-strategy.json": ("benchmarks[1].config.strategy.type_", "'sweep'", None),
    "guidellm-nan-itl.json": ("benchmarks[2].metrics.inter_token_latency_ms.successful.mean", "NaN", None),
    "llama-bench-nan.csv": ("avg_ts", "NaN", 3),
    "llama-bench-no-avg-ts.csv": (None, "missing columns: avg_ts", 1),
    "llama-bench-negative-gen.json": ("[1].n_gen", "-128", None),
    "unknown-tool.json": (None, "not a result file of a known benchmark tool", None),
    "empty.json": (None, "empty file", None),
    "top-level-number.json": (None, "a JSON int", None),
    "not-utf8.jsonl": (None, "not UTF-8", 1),
    "deep-nesting.json": (None, "nested too deeply", None),
}


def test_every_corpus_file_has_a_case():
    assert sorted(p.name for p in CORPUS.iterdir()) == sorted(CORPUS_CASES)


@pytest.mark.parametrize("name", sorted(CORPUS_CASES))
def test_corpus_file_refused_in_one_line(name):
    field, fragment, line = CORPUS_CASES[name]
    with pytest.raises(PresetFileError) as info:
        read_bench_file(CORPUS / name)
    error = info.value.error
    assert (error.key, error.line) == (field, line)
    assert fragment in error.message
    assert "\n" not in str(info.value) and str(CORPUS / name) in str(info.value)


def test_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "result.json"
    os.mkfifo(fifo)
    outcome: list[BaseException | None] = []

    def read() -> None:
        try:
            read_bench_file(fifo)
        except BaseException as err:  # noqa: BLE001 - the outcome is checked below
            outcome.append(err)

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "reading a FIFO blocked"
    assert isinstance(outcome[0], PresetFileError) and "FIFO" in str(outcome[0])


def test_a_100_mb_file_is_refused_before_reading(tmp_path):
    big = tmp_path / "huge.json"
    with open(big, "wb") as f:  # sparse: no 100 MB written to disk
        f.truncate(100 * 1024 * 1024)
    assert MAX_BENCH_BYTES < 100 * 1024 * 1024
    with pytest.raises(PresetFileError, match="too large"):
        read_bench_file(big)


def test_a_folder_is_refused(tmp_path):
    with pytest.raises(PresetFileError, match="a folder"):
        read_bench_file(tmp_path)


def test_control_characters_leave_names(tmp_path):
    """A model name carrying an OSC 52 sequence (terminal clipboard write) loses its control characters."""
    doc = json.loads((DATA / "vllm-bench-serve.json").read_text())
    doc["model_id"] = "evil\x1b]52;c;aGk=\x07model"
    file = tmp_path / "r.json"
    file.write_text(json.dumps(doc))
    (run,) = read_bench_file(file)
    assert run.model is not None and "\x1b" not in run.model and "\x07" not in run.model


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.recursive(st.none() | st.booleans() | st.floats(allow_nan=True) | st.integers() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
                        st.sampled_from(["completed", "model_id", "mean_ttft_ms", "benchmarks", "input_config",
                                         "n_prompt", "avg_ts", "n_gen", "metrics", "config", "strategy"]),
                        inner, max_size=5), max_leaves=20))
def test_any_json_is_a_run_or_a_one_line_refusal(tmp_path, doc):
    file = tmp_path / "fuzz.json"
    file.write_text(json.dumps(doc))
    try:
        runs = read_bench_file(file)
    except PresetFileError as err:
        assert "\n" not in str(err)
        return
    for run in runs:
        assert all(math.isfinite(v.value) and v.value > 0 for v in run.values)


@pytest.mark.parametrize(("name", "preset"), [
    ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),
    ("meta-llama/Meta-Llama-3.1-8B-Instruct", "llama-3.1-8b"),
    ("models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", "llama-3.1-8b"),
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"),
    ("Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b"),
    ("deepseek-ai/DeepSeek-V3", "deepseek-v3"),
    ("my-finetune-13b", None),
    (None, None),
])
def test_model_names_match_presets_or_nothing(name, preset):
    from roofline.presets.bench_files import model_preset_for
    from roofline.presets.loader import preset_ids

    assert model_preset_for(name, preset_ids("models")) == preset
