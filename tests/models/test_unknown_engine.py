"""Unknown is honest: an engine name without a profile is refused (one line, the closest ids), ``unknown`` widens the
band to every runtime mode with ``expected`` between the modes, and the report says so in a line."""

from __future__ import annotations

import dataclasses

import pytest

from roofline.models import kernels
from roofline.models.band import band_engines, expected_band
from roofline.models.errors import ModelInputError
from roofline.models.estimate import fixed_cost_s, scenario_ceilings
from roofline.models.inference import estimate
from roofline.models.ops import build_ops
from roofline.models.report import scenario_report
from roofline.models.scenario import Batching, Scenario, released_precisions
from roofline.presets.loader import load_hardware, load_model
from roofline.presets.measurements import read_measurements


def _scenario(engine: str, hardware: str = "h100-sxm") -> Scenario:
    model = load_model("llama-3.1-8b")
    return Scenario(hardware=load_hardware(hardware), model=model,
                    precisions=released_precisions(model, weights="bf16"),
                    batching=Batching(batch_size=1, prompt_tokens=512, output_tokens=64), engine=engine)


def test_a_name_without_a_profile_is_refused_with_the_closest_ids():
    with pytest.raises(ModelInputError) as err:
        _scenario("sglng")
    assert err.value.field == "engine" and "did you mean sglang" in str(err.value) and "\n" not in str(err.value)


def test_unknown_charges_the_geometric_middle_of_the_modes():
    """On CUDA the modes cost 4.0 us (graph, compiled) to 9.6 us (eager-sync) per kernel. An RMSNorm under unknown:
    sqrt(1 kernel x 4.0 us x 8 kernels (transformers' RMSNorm) x 9.6 us) = sqrt(4.0 x 76.8) us = 17.53 us; an
    o_proj (one kernel either way): sqrt(4.0 x 9.6) = 6.20 us."""
    c = scenario_ceilings(_scenario("unknown"), "expected")
    assert (c.kernel_overhead_s, c.kernel_overhead_high_s) == (pytest.approx(4e-6), pytest.approx(9.6e-6))
    assert kernels.unknown_launch_cost("cuda") == (pytest.approx(4e-6), pytest.approx(9.6e-6))
    ops = {op.name: op for op in build_ops(_scenario("unknown"), "decode", batch=1.0, context=513.0)}
    assert fixed_cost_s(ops["norms"], c) == pytest.approx((4e-6 * 76.8e-6) ** 0.5)
    assert fixed_cost_s(ops["o_proj"], c) == pytest.approx((4e-6 * 9.6e-6) ** 0.5)


def test_unknown_lies_between_the_modes_and_its_band_spans_them():
    """The unknown step is slower than the graph-captured one and faster than transformers' eager modules; its band
    spans every current NVIDIA profile and mode (transformers, eager and compiled among them) and so holds a named
    engine's band."""
    steps = {e: estimate(_scenario(e), "expected").decode.step_time_s for e in ("generic", "unknown", "transformers")}
    assert steps["generic"] < steps["unknown"] < steps["transformers"]
    unknown, vllm = _scenario("unknown"), _scenario("vllm")
    assert {"transformers", "eager", "compiled", "generic", "vllm"} <= set(band_engines(unknown))
    assert not {"transformers", "eager", "compiled", "unknown"} & set(band_engines(vllm))
    wide, narrow = expected_band(unknown), expected_band(vllm)
    assert wide.low["decode"]["step_time_s"] <= narrow.low["decode"]["step_time_s"]
    assert wide.high["decode"]["step_time_s"] >= steps["transformers"] > narrow.high["decode"]["step_time_s"]
    assert wide.low["decode"]["step_time_s"] <= steps["unknown"] <= wide.high["decode"]["step_time_s"]


def test_the_report_says_so_in_a_line():
    note = scenario_report(_scenario("unknown"), include_ops=False)["engine"]["unknown_note"]
    assert note.startswith("engine unknown:") and "geometric middle" in note and "\n" not in note
    assert scenario_report(_scenario("vllm"), include_ops=False)["engine"]["unknown_note"] == ""


def test_validate_rows_name_a_profile_or_none(tmp_path):
    """An empty engine cell is ``unknown``; a name without a profile skips the row with the closest ids; a file
    without the column keeps the default (it predates engine profiles)."""
    head = "id,hardware,tp,pp,model,weights,kv,batch,prompt,output,metric,value"
    row = "h100-sxm,1,1,llama-3.1-8b,bf16,bf16,1,128,128,decode_tokens_per_s_per_seq,100"
    named = tmp_path / "named.csv"
    named.write_text(f"{head},engine\nX-1,{row},vlm\nX-2,{row},\nX-3,{row},vllm\n")
    rows, skipped = read_measurements(named)
    assert [r.scenario.engine for r in rows] == ["unknown", "vllm"]
    assert len(skipped) == 1 and "no engine profile 'vlm' (did you mean vllm" in skipped[0].reason
    bare = tmp_path / "bare.csv"
    bare.write_text(f"{head}\nX-1,{row}\n")
    rows, _ = read_measurements(bare)
    assert [r.scenario.engine for r in rows] == ["generic"]


def test_a_named_mode_profile_is_the_generic_factors_in_that_mode():
    generic = estimate(_scenario("generic"), "expected").ceilings
    for engine, mode in (("eager", "eager"), ("compiled", "compiled")):
        c = estimate(_scenario(engine), "expected").ceilings
        assert c.runtime_mode == mode
        assert dataclasses.replace(c, runtime_mode="graph", kernel_set="fused", engine="generic",
                                   kernel_overhead_s=generic.kernel_overhead_s) == generic
