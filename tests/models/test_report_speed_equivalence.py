"""The shared context sums (models/context_sums.py: the work terms summed once per list of ops, each op timed once)
and the shared band estimates (models/band.py: one estimate per distinct ceilings) give the report and its band the
same figures as everything worked out afresh for every band scenario.

The reference below is :func:`context_sums` as it was before the sharing: :func:`estimate.pass_totals` of the ops at
the sample contexts, every field summed over the pieces, each context-varying op's time replaced by its exact
piecewise sum. ``estimate`` is made to call it and the band to estimate every band scenario
on its own (:func:`reference_band_estimates`; both monkeypatched), the whole report built, and every number compared
with the report built by the shared path: the sharing only reorders what is computed, never how, so the figures
must be equal to the last bit (1e-12 relative allowed, none expected).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from roofline.models import band, inference
from roofline.models.band import band_ceilings, band_estimates, band_scenarios, expected_band
from roofline.models.context_sums import (
    SAMPLES_PER_PIECE,
    ContextSums,
    context_count,
    context_pieces,
    context_sums,
    op_time_sum_s,
    piece_sums,
    varies_with_context,
)
from roofline.models.estimate import PassTotals, pass_totals, scenario_ceilings, time_op
from roofline.models.report import scenario_report
from roofline.models.scenario import Batching, Parallelism, Precisions, Scenario
from roofline.presets import load_hardware, load_model

_FIELDS = tuple(f.name for f in dataclasses.fields(PassTotals))


def reference_context_sums(ops, c, pieces) -> ContextSums:
    """context_sums without sharing (the code before it): everything recomputed for these ceilings."""
    at_samples = pass_totals(ops, c)
    sums = {name: piece_sums(getattr(at_samples, name), pieces) for name in _FIELDS}
    for op in ops:
        if varies_with_context(op):
            timing = time_op(op, c)
            sampled = np.broadcast_to(timing.time_s, (len(pieces) * SAMPLES_PER_PIECE,))
            sums["time_s"] += op.count * (op_time_sum_s(op, c, pieces, timing) - piece_sums(sampled, pieces))

    def at(index: int) -> PassTotals:
        values = {name: getattr(at_samples, name) for name in _FIELDS}
        return PassTotals(**{name: float(np.ravel(v)[index]) if np.ndim(v) else float(v) for name, v in values.items()})

    return ContextSums(steps=context_count(pieces), total=PassTotals(**sums), first=at(0), last=at(-1))


def reference_band_estimates(scenario, ops=None):
    """band_estimates before the sharing: ``expected`` of every band scenario, each estimated on its own."""
    ops = inference.generation_ops(scenario) if ops is None else ops
    return tuple(inference.estimate(s, "expected", inference.GenerationOps(scenario=s, prefill=ops.prefill,
                                                                           decode_steps=ops.decode_steps))
                 for s in band_scenarios(scenario))


def _scenario(hw: str, model: str, *, batch: int = 1, prompt: int = 1024, output: int = 16384, tp: int = 1,
              weights: str = "bf16", engine: str | None = None) -> Scenario:
    s = Scenario(hardware=load_hardware(hw), model=load_model(model),
                 batching=Batching(batch_size=batch, prompt_tokens=prompt, output_tokens=output),
                 parallelism=Parallelism(tp=tp), precisions=Precisions(weights=weights))
    return s if engine is None else dataclasses.replace(s, engine=engine)


SCENARIOS = {
    "dense (the issue's: A100, Llama-2-7B, 1024 + 16,384)": lambda: _scenario("a100-sxm4-80gb", "llama-2-7b"),
    "dense, TP 4, batch 32": lambda: _scenario("h100-sxm", "llama-3.1-70b", batch=32, prompt=2048, output=4096, tp=4),
    "MoE": lambda: _scenario("h100-sxm", "mixtral-8x7b", batch=8, tp=2),
    "MLA + MoE": lambda: _scenario("h200", "deepseek-v3", batch=16, prompt=4096, output=2048, tp=8),
    "sliding window": lambda: _scenario("a100-sxm4-80gb", "gemma-2-9b", batch=4, prompt=2000, output=8000),
    "GGUF on llama.cpp": lambda: _scenario("rtx-5090", "llama-3.1-8b", weights="q4_k_m", engine="llamacpp"),
    "unknown engine": lambda: _scenario("a100-sxm4-80gb", "llama-2-7b", engine="unknown"),
    "AMD, one output token": lambda: _scenario("mi300x", "qwen2.5-7b", batch=2, prompt=512, output=1),
}


def _assert_same(new, old, where: str = "report") -> None:
    """Every number equal within 1e-12 relative, everything else equal, through dicts and lists."""
    if isinstance(old, dict):
        assert new.keys() == old.keys(), where
        for key in old:
            _assert_same(new[key], old[key], f"{where}.{key}")
    elif isinstance(old, list | tuple):
        assert len(new) == len(old), where
        for i, (a, b) in enumerate(zip(new, old, strict=True)):
            _assert_same(a, b, f"{where}[{i}]")
    elif isinstance(old, float) and not isinstance(old, bool):
        assert math.isclose(new, old, rel_tol=1e-12, abs_tol=0.0) or (math.isnan(new) and math.isnan(old)), \
            f"{where}: {new!r} != {old!r}"
    else:
        assert new == old, where


@pytest.mark.parametrize("name", SCENARIOS)
def test_report_and_band_equal_to_unshared_sums(name, monkeypatch):
    scenario = SCENARIOS[name]()
    shared = scenario_report(scenario)
    with monkeypatch.context() as patch:
        patch.setattr(inference, "context_sums", reference_context_sums)
        patch.setattr(band, "band_estimates", reference_band_estimates)
        fresh = scenario_report(scenario)
    _assert_same(shared, fresh)
    assert shared["expected_low"] == fresh["expected_low"] and shared["expected_high"] == fresh["expected_high"]


@pytest.mark.parametrize("name", ["MLA + MoE", "sliding window", "unknown engine"])
def test_context_sums_equal_under_every_band_ceilings(name):
    """The shared sums against the reference for one list of ops timed under each of the band's ceilings in turn
    (the memo is filled by the first and read by the rest): every field, the first and the last step, bit for bit."""
    scenario = SCENARIOS[name]()
    ops = inference.generation_ops(scenario).decode_steps
    pieces = context_pieces(scenario)
    for c in band_ceilings(scenario):
        assert context_sums(ops, c, pieces) == reference_context_sums(ops, c, pieces)


@pytest.mark.parametrize("name", ["dense (the issue's: A100, Llama-2-7B, 1024 + 16,384)", "unknown engine",
                                  "GGUF on llama.cpp"])
def test_band_estimates_equal_to_one_estimate_each(name):
    """Each shared band estimate equals the band scenario's own estimate, its ceilings (engine label included)
    those of its scenario."""
    scenario = SCENARIOS[name]()
    shared, fresh = band_estimates(scenario), reference_band_estimates(scenario)
    assert shared == fresh
    assert [e.ceilings for e in shared] == [scenario_ceilings(s, "expected") for s in band_scenarios(scenario)]


def test_sums_follow_the_ops_not_a_stale_memo():
    """Two lists of ops over the same pieces (batch 1 and batch 8) each get their own work terms."""
    scenario = SCENARIOS["dense, TP 4, batch 32"]()
    pieces = context_pieces(scenario)
    c = band_ceilings(scenario)[0]
    for batch in (1, 8, 1):
        s = dataclasses.replace(scenario, batching=dataclasses.replace(scenario.batching, batch_size=batch))
        ops = inference.generation_ops(s).decode_steps
        assert context_sums(ops, c, pieces) == reference_context_sums(ops, c, pieces)


def test_band_contains_expected_for_the_issue_scenario():
    """A sanity check of the figures compared above: expected lies inside its band (band.py's construction)."""
    scenario = SCENARIOS["dense (the issue's: A100, Llama-2-7B, 1024 + 16,384)"]()
    band = expected_band(scenario)
    report = scenario_report(scenario, include_ops=False)
    t = report["expected"]["generation"]["time_s"]
    assert band.low["generation"]["time_s"] <= t <= band.high["generation"]["time_s"]
