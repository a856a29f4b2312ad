"""Extreme but legal scenarios: every number in the report stays finite, non-negative and self-consistent."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from roofline.models.hf_config import architecture_from_hf_config
from roofline.models.memory import memory_footprint
from roofline.models.report import scenario_report
from roofline.models.scenario import Batching, Parallelism, Precisions, Scenario
from roofline.presets import load_catalog
from tests.conftest import hardware, scenario

TOY_CONFIG = {"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4,
              "num_key_value_heads": 2, "num_hidden_layers": 1, "vocab_size": 256, "max_position_embeddings": 2048}


def toy_model():
    """A one-layer llama: 64 wide, 4 heads, 2 KV heads, 256-token vocabulary."""
    return architecture_from_hf_config(TOY_CONFIG, model_id="toy-1-layer", name="toy")


def toy(hw_id="h100-sxm", *, batch=1, prompt=1024, output=256, tp=1, weights="bf16", kv="bf16"):
    return Scenario(hardware=hardware(hw_id), model=toy_model(),
                    precisions=Precisions(weights=weights, kv=kv),
                    batching=Batching(batch_size=batch, prompt_tokens=prompt, output_tokens=output),
                    parallelism=Parallelism(tp=tp))


# name -> (scenario factory, must it fit in memory?)
CASES = {
    "batch-65536": (lambda: scenario("h100-sxm", "llama-3.1-8b", batch=65_536), False),
    "batch-65536-moe-deepseek-fp8": (lambda: scenario("h200", "deepseek-v3", batch=65_536, weights="fp8",
                                                      activations="fp8", tp=8), False),
    "batch-65536-toy": (lambda: toy(batch=65_536, prompt=16, output=16), True),
    "batch-max-toy": (lambda: toy(batch=1 << 20, prompt=1, output=1), True),
    "prompt-1M": (lambda: scenario("h100-sxm", "llama-3.1-8b", prompt=1_000_000), False),
    "prompt-1M-sliding-window-gemma": (lambda: scenario("h100-sxm", "gemma-2-9b", prompt=1_000_000), False),
    "prompt-1M-405b-tp8-h200": (lambda: scenario("h200", "llama-3.1-405b", prompt=1_000_000, output=1, tp=8), False),
    "prompt-1M-toy": (lambda: toy(prompt=1_000_000, output=1), True),
    "prompt-1-output-1": (lambda: scenario("h100-sxm", "llama-3.1-8b", prompt=1, output=1), True),
    "toy-1-layer": (lambda: toy(), True),
    "toy-1-layer-tp4": (lambda: toy(tp=4), True),
    "toy-1-layer-int4-on-l4": (lambda: toy("l4", weights="int4", kv="int4"), True),
    "fp32-on-m1": (lambda: scenario("m1", "llama-3.1-8b", weights="fp32", activations="fp32", kv="fp32"), False),
    "fp32-small-model-on-m1": (lambda: scenario("m1", "phi-3-mini", weights="fp32", activations="fp32", kv="fp32"),
                               False),
    "fp32-toy-on-m1": (lambda: toy("m1", weights="fp32", kv="fp32"), True),
    "405b-on-one-l4": (lambda: scenario("l4", "llama-3.1-405b"), False),
    "everything-at-once": (lambda: scenario("mi300x", "mixtral-8x7b", batch=65_536, prompt=1_000_000,
                                            output=100_000), False),
}


def numbers(value, path="report"):
    """Every int/float in a nested dict/list, with its path (booleans are not numbers here)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from numbers(item, f"{path}.{key}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from numbers(item, f"{path}[{i}]")
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield path, value


@pytest.fixture(scope="module", params=list(CASES), ids=list(CASES))
def case(request):
    make, must_fit = CASES[request.param]
    s = make()
    return s, must_fit, scenario_report(s)


def test_every_number_is_finite_and_not_negative(case):
    _, _, report = case
    found = list(numbers(report))
    assert len(found) > 50
    bad = [(path, v) for path, v in found if not math.isfinite(v) or v < 0]
    assert bad == []


def test_memory_verdict(case):
    """Fits exactly when the per-device total is within capacity; the largest batch agrees with the verdict."""
    s, must_fit, report = case
    mem = report["memory"]
    assert mem["fits"] is must_fit
    parts = (mem["per_device_weights_bytes"] + mem["per_device_kv_cache_bytes"] + mem["per_device_activation_bytes"])
    assert mem["per_device_bytes"] >= parts
    assert mem["fits"] == (mem["per_device_bytes"] <= mem["capacity_bytes"])
    assert isinstance(mem["max_batch"], int)
    batch = s.batching.batch_size
    if mem["fits"]:
        assert mem["max_batch"] >= batch
    else:
        assert mem["max_batch"] < batch


def test_largest_batch_is_the_largest_that_fits(case):
    s, _, report = case
    largest = report["memory"]["max_batch"]
    if largest >= 1:
        assert memory_footprint(replace(s, batching=replace(s.batching, batch_size=largest))).fits
    assert not memory_footprint(replace(s, batching=replace(s.batching, batch_size=largest + 1))).fits


def test_percentages_and_bounds(case):
    s, _, report = case
    for name in ("bound", "expected"):
        for phase in ("prefill", "decode"):
            p = report[name][phase]
            assert 0.0 <= p["idle_core_pct"] <= 100.0, (name, phase, p["idle_core_pct"])
            assert 0.0 <= p["mbu_pct"] <= 100.0 + 1e-9, (name, phase, p["mbu_pct"])
            assert p["time_s"] > 0
            assert p["limited_by"] in ("compute", "memory", "communication", "collective", "interconnect",
                                       "overhead"), p["limited_by"]
        d = report[name]["decode"]
        assert d["tokens_per_s"] == pytest.approx(d["tokens_per_s_per_seq"] * s.batching.batch_size)
        assert d["tokens_per_s_per_seq"] > 0
    # nothing real beats the spec-sheet bound
    assert report["bound"]["decode"]["step_time_s"] <= report["expected"]["decode"]["step_time_s"]
    assert report["bound"]["prefill"]["ttft_s"] <= report["expected"]["prefill"]["ttft_s"]


def test_op_shares_add_up(case):
    _, _, report = case
    for phase in ("prefill", "decode"):
        shares = [op["share_of_phase_pct"] for op in report["ops"] if op["phase"] == phase]
        assert shares, phase
        assert sum(shares) == pytest.approx(100.0)
        assert all(0 <= share <= 100 for share in shares)


def test_405b_fits_on_no_single_device():
    """Llama-3.1-405B in bf16 (810 GB of weights) fits on no accelerator alone, so its largest batch is 0."""
    catalog = load_catalog(kinds=("hardware",))
    assert len(catalog.hardware) >= 40
    for hw_id in catalog.hardware:
        report = scenario_report(scenario(hw_id, "llama-3.1-405b"), include_ops=False)
        assert report["memory"]["fits"] is False, hw_id
        assert report["memory"]["max_batch"] == 0, hw_id
        bad = [(path, v) for path, v in numbers(report) if not math.isfinite(v) or v < 0]
        assert bad == [], hw_id
        assert 0 <= report["bound"]["decode"]["idle_core_pct"] <= 100


def test_one_layer_toy_model_has_the_expected_size():
    """2*V*H embeddings (untied) + one layer of attention and gated MLP + norms."""
    m = toy_model()
    assert m.num_layers == 1
    h, v, i, kv_width = 64, 256, 128, 2 * 16
    attention = h * h + 2 * h * kv_width + h * h
    mlp = 3 * h * i
    expected = 2 * v * h + attention + mlp + 2 * h + h
    assert m.params == pytest.approx(expected, rel=0.01)


def test_one_layer_toy_model_rejects_two_pipeline_stages():
    from roofline.models.errors import ModelInputError

    with pytest.raises(ModelInputError) as info:
        Scenario(hardware=hardware("h100-sxm"), model=toy_model(), parallelism=Parallelism(pp=2))
    assert info.value.field == "pp"
