"""`roofline validate` with engines, memory flags, serving rows and `--holdout family` on both published sets."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from roofline.models.estimate import scenario_ceilings
from roofline.models.inference import estimate
from roofline.models.serving import at_rate, frontier
from roofline.models.serving.inputs import ServingMix, ServingOptions
from roofline.models.validation import RowResult, ValidationCase, evaluate, memory_flags
from roofline.presets.measurements import read_measurements
from roofline.tui.cli.main import main

DATA = Path(__file__).parents[1] / "data"
DEV = DATA / "measured-dev-validation.csv"
HELDOUT = DATA / "measured-heldout.csv"
HEADER = "id,hardware,tp,pp,model,weights,kv,batch,prompt,output,metric,value,engine,family,concurrency,rate\n"

# Regression guards (not tuning targets): the figures measured when these tests were written (the assert adds 0.005).
# measured-heldout with the rows' engines was (0.633, 0.808) under the Aug-2023 llama.cpp share (0.188); with the
# current-build profiles (llamacpp from the CUDA scoreboard, llamacpp-metal for the Apple rows) it measures
# (0.138, 0.359), and the guard moved down to that. With the 96 TensorRT-LLM 0.9.0 perf-overview rows (family TP9,
# 284 rows in all) it measures (0.1278, 0.3548) with the rows' engines and (0.1481, 0.4505) with generic for all; the
# guards below are those figures rounded up to the next 0.001, and the assert adds MARGIN (0.005) on top. With the
# December-2023 llama.cpp CUDA rows under their build's profile (llamacpp-2023-12: kernels launched one by one) it
# measures (0.1150, 0.3209), and that guard moved down to it. With each llama.cpp CUDA table under its builds'
# profile (llamacpp-2023-12, llamacpp-2024-05: cuBLAS prompt GEMMs with FP16 accumulation at the pp512-derived
# fraction, the F16 copy of GGUF weights), attention unfused (flash_attention 0) and the Dec-2023 prompts at their
# logged 494 tokens it measures (0.1109, 0.2815), and (0.1397, 0.4310) with generic for all. With each build's own
# decode share on HBM devices (LLAMACPP_TG_HBM) it measures (0.1089, 0.2740). 132 rows of XD's May-2024
# professional-GPU table were then added (416 in all): scored by the model of commit b0b47a1 they measured
# (0.168, 0.385); with weights streamed once per 512-token micro-batch (llama.cpp's n_ubatch) all 416 measure
# (0.1268, 0.2927), and (0.2082, 0.7780) with generic for all (413 rows: three do not fit under generic's memory).
# With current llama.cpp's and Metal's prompt fractions from their scoreboards' pp512: (0.1267, 0.2878).
# (file, --engine or None for the rows' own engines) -> held-out (median, p80) |error| under leave-one-family-out
HELD_OUT_GUARD = {
    ("measured-dev-validation", None): (0.100, 0.220),
    ("measured-heldout", None): (0.127, 0.288),
    ("measured-heldout", "generic"): (0.209, 0.779),
}
MARGIN = 0.005

# Rows where `bound` is beaten, each with its reason (README, accuracy section). All ten XD rows are llama.cpp F16
# prefill over 2-8 GPUs in layer split: llama.cpp pipelines 512-token micro-batches over the layer-split GPUs
# (ggml-org/llama.cpp#6017) where `bound` runs the stages one after another, and on GeForce cards ggml-cuda's
# CUBLAS_COMPUTE_16F GEMMs run at twice the FP32-accumulate rate `bound` takes as their fp16 peak (the presets'
# fp16_accumulate_dense_tflops).
# TP9-060 (TensorRT-LLM 0.9.0, A100 FP16, Mixtral 8x7B, batch 32, TP 2, 2048/2048): 801 output tok/s per GPU means
# 1,602 tok/s on two GPUs, a decode step of about 20 ms, while each step must read about 47 GB of expert weights (all
# 8 experts are touched at batch 32) plus about 6 GB of KV cache per GPU: about 2.6 TB/s against the A100's spec
# 2.039 TB/s. The page's figure is not reachable as stated (its TP or batch is likely misprinted; H100's same row,
# 1,317, is consistent).
BOUND_BEATEN = {"XD-024", "XD-036", "XD-055", "XD-056", "XD-063", "XD-064", "XD-230", "XD-262", "XD-270", "XD-286",
                "TP9-060"}
BOUND_REASONS = {**{i: "llama.cpp F16 prefill over layer-split GPUs: overlapped micro-batches (and FP16-accumulate "
                       "cuBLAS on GeForce) beat the serial pipeline and the FP32-accumulate peak" for i in BOUND_BEATEN
                    if i.startswith("XD")},
                 "TP9-060": "implies 2.6 TB/s per A100 (spec 2.039): the table's TP or batch is likely misprinted"}


def _validate_json(path: Path, *extra: str, capsys) -> dict:
    assert main(["validate", str(path), "--format", "json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("name", "engine"), list(HELD_OUT_GUARD))
def test_held_out_figures_do_not_get_worse(name, engine, capsys):
    out = _validate_json(DATA / f"{name}.csv", "--holdout", "family", *(["--engine", engine] if engine else []),
                         capsys=capsys)
    held_out = out["holdout"]["held_out"]
    median, p80 = HELD_OUT_GUARD[(name, engine)]
    assert held_out["median_abs_error"] <= median + MARGIN
    assert held_out["p80_abs_error"] <= p80 + MARGIN
    # in-sample and held-out are both reported, per family and overall, over the same rows
    assert out["holdout"]["in_sample"]["rows"] == held_out["rows"] == out["summary"]["rows"]
    assert set(out["holdout"]["by_family"]) == set(out["by_family"])


def test_bound_holds_on_97_percent_of_both_files_and_every_miss_is_explained(capsys):
    rows = _validate_json(DEV, capsys=capsys)["rows"] + _validate_json(HELDOUT, capsys=capsys)["rows"]
    missed = {r["id"] for r in rows if not r["bound_held"]}
    assert len(rows) == 83 + 416
    assert 1 - len(missed) / len(rows) >= 0.97
    assert missed == BOUND_BEATEN
    assert set(BOUND_REASONS) == BOUND_BEATEN and all(BOUND_REASONS.values())


def test_heldout_rows_keep_their_engine_and_family(capsys):
    out = _validate_json(HELDOUT, capsys=capsys)
    engines = {r["id"]: r["engine"] for r in out["rows"]}
    families = {r["id"]: r["family"] for r in out["rows"]}
    assert engines["MLC-001"] == "mlc"
    assert {engines[i] for i, r in zip(engines, out["rows"], strict=True) if i.startswith("XD")} == {
        "llamacpp-2023-12", "llamacpp-2024-05", "llamacpp-metal"}
    # each CUDA table runs under its builds' profile: December 2023 (builds 1671-1691) and May 2024 (2824-2843)
    assert engines["XD-105"] == engines["XD-146"] == "llamacpp-2023-12"
    assert engines["XD-001"] == engines["XD-064"] == "llamacpp-2024-05"
    assert families["MLC-001"] == "MLC" and families["MX-001"] == "MX" and families["TP9-001"] == "TP9"
    assert {engines[i] for i in engines if i.startswith("TP9")} == {"trtllm"}
    # MLX rows run under the mlx profile (its own 4-bit figure, so no fitted factor touches them)
    assert engines["MX-001"] == "mlx" and out["engine_notes"] == []


def test_an_engine_without_a_profile_skips_the_row_with_the_closest_ids(tmp_path):
    """A name without a profile is not scored as something else: the row is skipped, naming the closest ids and
    ``unknown``; an empty cell is ``unknown`` (the widest band)."""
    f = tmp_path / "m.csv"
    f.write_text(HEADER + "U-1,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,1,128,128,itl_ms,8,vlm,U,,\n"
                 "U-2,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,1,128,128,itl_ms,8,,U,,\n")
    rows, skipped = read_measurements(f)
    assert [r.scenario.engine for r in rows] == ["unknown"]
    assert [s.id for s in skipped] == ["U-1"] and "did you mean vllm" in skipped[0].reason


def test_a_row_is_scored_with_its_engine(tmp_path):
    """Llama-3.1-8B (32 query heads, 8 KV heads: GQA group 4) at a 32k context: TensorRT-LLM 0.5 decode attention
    reads each KV head once per query head, so its step moves (4 - 1) x the KV read bytes more than generic's, at
    the expected bandwidth. The bound does not depend on the engine."""
    f = tmp_path / "m.csv"
    f.write_text(HEADER + "E-1,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,1,32768,64,itl_ms,20,trtllm-0.5,E,,\n"
                 "E-2,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,1,32768,64,itl_ms,20,generic,E,,\n")
    (old, generic), _ = read_measurements(f)
    assert old.scenario.engine == "trtllm-0.5" and generic.scenario.engine == "generic"
    r_old = evaluate(old.id, old.scenario, old.metric, old.value)
    r_generic = evaluate(generic.id, generic.scenario, generic.metric, generic.value)
    e = estimate(generic.scenario, "expected")
    kv_read_bytes_per_step = e.decode.phase.kv_read_bytes / max(e.decode.steps, 1)
    bw = scenario_ceilings(generic.scenario, "expected").mem_bw_bytes_per_s
    extra_ms = 3 * kv_read_bytes_per_step / bw * 1e3
    assert r_old.expected - r_generic.expected == pytest.approx(extra_ms, rel=1e-6)
    assert r_old.bound == r_generic.bound


def test_rows_that_do_not_fit_are_left_out_with_the_reason(tmp_path, capsys):
    """Llama-3.1-70B in bf16 is 141 GB of weights: it cannot run on one 80 GB H100 at any batch."""
    f = tmp_path / "m.csv"
    f.write_text(HEADER + "A-1,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,1,128,128,itl_ms,7.5,,,,\n"
                 "A-2,h100-sxm,1,1,llama-3.1-70b,bf16,bf16,1,128,128,itl_ms,30,,,,\n")
    out = _validate_json(f, capsys=capsys)
    assert [r["id"] for r in out["rows"]] == ["A-1"] and out["summary"]["rows"] == 1
    assert [m["id"] for m in out["memory_flagged"]] == ["A-2"]
    assert "GiB per device" in out["memory_flagged"][0]["reason"]
    assert main(["validate", str(f)]) == 0
    text = capsys.readouterr().out
    assert "left out A-2: needs" in text and "not as stated" in text


def test_dev_row_that_ran_in_waves_is_flagged():
    """LM-06: batch 64 on an A100 80GB whose memory holds 62 such sequences (memory.py), so it ran in waves."""
    rows, _ = read_measurements(DEV)
    cases = [ValidationCase(id=r.id, family=r.family, scenario=r.scenario, metric=r.metric, measured=r.value)
             for r in rows]
    flags = memory_flags(cases)
    assert [f.id for f in flags] == ["LM-06"] and flags[0].max_batch < 64


def test_serving_rows_are_scored_by_the_serving_model(tmp_path, capsys):
    """A row with a concurrency is scored by serving.frontier at that concurrency, one with a rate by
    serving.at_rate; both are reported apart from the static rows (JSON ``serving``)."""
    f = tmp_path / "m.csv"
    f.write_text(HEADER + "S-1,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,1,128,128,itl_ms,7.5,,,,\n"
                 "S-2,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,1,128,128,itl_s,0.01,vllm,S,16,\n"
                 "S-3,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,,128,128,ttft_s,0.05,vllm,S,,4.5\n")
    rows, skipped = read_measurements(f)
    assert skipped == [] and [r.concurrency for r in rows] == [None, 16, None]
    assert rows[2].rate_per_s == 4.5 and rows[1].rate_per_s is None and rows[2].is_serving
    out = _validate_json(f, capsys=capsys)
    assert [r["id"] for r in out["rows"]] == ["S-1"]
    served = {r["id"]: r for r in out["serving"]["rows"]}
    assert set(served) == {"S-2", "S-3"} and out["serving_not_scored"] == []
    mix = ServingMix(prompt_tokens=128, output_tokens=128)
    s2 = dataclasses.replace(rows[1].scenario, engine="vllm")
    assert served["S-2"]["expected"] == pytest.approx(
        frontier(s2, mix, [16], "expected", ServingOptions()).points[0].itl_s)
    assert served["S-3"]["expected"] == pytest.approx(at_rate(s2, mix, 4.5, "expected", ServingOptions()).ttft_s)
    assert out["serving"]["by_family"]["S"]["rows"] == 2
    assert main(["validate", str(f)]) == 0
    assert "serving family S" in capsys.readouterr().out


# Regression guard on the published serving rows (measured-serving.csv), figures when written (assert adds 0.005):
# DS (vLLM on 8x MI300X, bursts) is far off; NIM and SG are the steady-state ones. With the GS closed-loop rows
# (gpustack's vLLM 0.10-0.11 / SGLang 0.5 / TensorRT-LLM 1.x runs) and the saturated-throughput tables (TRT17, TRT1;
# SG's offline rows now saturated) the figures were measured twice while the serving model changed under other
# work; each guard is the larger of the two, rounded up.
SERVING_GUARD = {"all": (0.253, 0.814), "DS": (0.931, 1.755), "NIM": (0.109, 0.202), "SG": (0.268, 0.697),
                 "GS": (0.198, 0.667), "TRT17": (0.058, 0.107), "TRT1": (0.092, 0.301)}


def test_serving_figures_do_not_get_worse(capsys):
    out = _validate_json(DATA / "measured-serving.csv", capsys=capsys)["serving"]
    figures = {"all": out["summary"], **out["by_family"]}
    for key, (median, p80) in SERVING_GUARD.items():
        assert figures[key]["median_abs_error"] <= median + MARGIN, key
        assert figures[key]["p80_abs_error"] <= p80 + MARGIN, key
    assert out["summary"]["rows"] >= 160 and out["summary"]["bound_held_share"] >= 0.97


def test_serving_metric_without_concurrency_is_skipped(tmp_path, capsys):
    f = tmp_path / "m.csv"
    f.write_text(HEADER + "A-1,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,1,128,128,itl_ms,7.5,,,,\n"
                 "A-2,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,1,128,128,itl_s,0.01,,,,\n"
                 "A-3,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,1,128,128,itl_s,0.01,,,0,\n")
    out = _validate_json(f, capsys=capsys)
    reasons = {s["id"]: s["reason"] for s in out["skipped"]}
    assert "metric" in reasons["A-2"] and "concurrency" in reasons["A-3"]


# Band coverage (models/band.py): the share of rows whose measurement lies in [expected_low, expected_high], as
# measured when written, minus a margin of 0.01 (about one row in a hundred). Regression guards, not targets.
# measured with the band of models/band.py (current engines, fractions spread across the presets), minus BAND_MARGIN
# (0.614, 0.633, serving 0.192) at first; with llama.cpp's HBM share among the current NVIDIA/AMD profiles the band
# reaches lower on HBM devices and covers (0.867, 0.6995, serving 0.410); with the scoreboards' prompt fractions
# (0.867, 0.7356, serving 0.4615).
BAND_GUARD = {"measured-dev-validation": 0.867, "measured-heldout": 0.735}
SERVING_BAND_GUARD = 0.461
BAND_MARGIN = 0.01


@pytest.mark.parametrize("name", list(BAND_GUARD))
def test_band_coverage_does_not_get_worse(name, capsys):
    out = _validate_json(DATA / f"{name}.csv", capsys=capsys)
    assert out["summary"]["band_coverage"] >= BAND_GUARD[name] - BAND_MARGIN
    rows = out["rows"]
    # the share is the rows' own in_band flags, and every flag matches its row's low and high
    assert out["summary"]["band_coverage"] == pytest.approx(sum(r["in_band"] for r in rows) / len(rows))
    for r in rows:
        assert r["expected_low"] <= r["expected"] * (1 + 1e-9) and r["expected"] <= r["expected_high"] * (1 + 1e-9)
        assert r["in_band"] == (r["expected_low"] <= r["measured"] <= r["expected_high"])
    assert all(f["band_coverage"] is not None for f in out["by_family"].values())


def test_serving_band_coverage_does_not_get_worse(capsys):
    out = _validate_json(DATA / "measured-serving.csv", capsys=capsys)["serving"]
    assert out["summary"]["band_coverage"] >= SERVING_BAND_GUARD - BAND_MARGIN


def test_holdout_text_prints_in_sample_and_held_out_per_family(capsys):
    assert main(["validate", str(DEV), "--holdout", "family"]) == 0
    text = capsys.readouterr().out
    for family in ("GF", "LM", "TR", "VL"):
        assert f"family {family}" in text
    assert "in-sample median" in text and "held-out median" in text and "factor weight_only_narrow" in text


def test_row_result_bound_direction():
    # a rate bound holds when at least the measurement, a time bound when at most it
    assert RowResult(id="a", metric="itl_ms", measured=10, expected=9, bound=8).bound_held
    assert not RowResult(id="a", metric="prefill_tokens_per_s", measured=10, expected=9, bound=8).bound_held


def test_the_flash_attention_column(tmp_path):
    """Empty or 1: fused attention (the explorer's default); 0: unfused, as llama.cpp ran unless started with -fa 1;
    anything else skips the row, naming the column."""
    f = tmp_path / "fa.csv"
    f.write_text("id,hardware,tp,pp,model,weights,kv,batch,prompt,output,metric,value,flash_attention\n"
                 "F-1,rtx-4090,1,1,llama-3-8b,fp16,fp16,1,4096,1,prefill_tokens_per_s,6000,\n"
                 "F-2,rtx-4090,1,1,llama-3-8b,fp16,fp16,1,4096,1,prefill_tokens_per_s,6000,0\n"
                 "F-3,rtx-4090,1,1,llama-3-8b,fp16,fp16,1,4096,1,prefill_tokens_per_s,6000,maybe\n")
    rows, skipped = read_measurements(f)
    assert [r.scenario.batching.flash_attention for r in rows] == [True, False]
    assert [(s.id, "flash_attention" in s.reason) for s in skipped] == [("F-3", True)]
    fused, unfused = (evaluate(r.id, r.scenario, r.metric, r.value) for r in rows)
    assert unfused.expected < fused.expected  # the 4096 x 4096 scores are written and read back
