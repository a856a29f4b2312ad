"""Leave-one-family-out scoring and configurations that do not fit, on the development set."""

from __future__ import annotations

import dataclasses
from functools import cache
from pathlib import Path

import pytest

from roofline.models.estimate import scenario_ceilings
from roofline.models.inference import estimate
from roofline.models.memory import GIB, memory_footprint
from roofline.models.validation import (
    FITTED_FACTORS,
    UNFITTED_PRIOR,
    ValidationCase,
    ceilings_with_factor,
    factor_of,
    family_of,
    generation_times,
    leave_one_family_out,
    memory_flags,
    predict_under,
    solve_factor,
)
from roofline.presets.measurements import read_measurements

from ..conftest import scenario

DEV = Path(__file__).parent.parent / "data" / "measured-dev-validation.csv"

# Regression guard (not a tuning target): the held-out summary when this test was written. In-sample 7.4 % / 17.0 %;
# held out 9.7 % / 21.9 %: only gpt-fast's weight-only rows move (no other family has int8/int4 rows, so without GF
# those factors fall back to the prior 1.0). With runtime modes (kernels.py: gpt-fast compiled, its residual adds
# fused) held out 7.4 % / 22.1 %.
HELD_OUT_MEDIAN_ABS_ERROR = 0.075
HELD_OUT_P80_ABS_ERROR = 0.221


@cache
def dev_cases() -> tuple[ValidationCase, ...]:
    rows, skipped = read_measurements(DEV)
    assert not skipped
    return tuple(ValidationCase(id=r.id, family=r.family, scenario=r.scenario, metric=r.metric, measured=r.value)
                 for r in rows)


def test_family_is_the_id_prefix():
    assert family_of("GF-01") == "GF" and family_of("TR-29") == "TR" and family_of("solo") == "solo"
    assert all(c.family == family_of(c.id) for c in dev_cases())


def test_held_out_scores_each_family_with_factors_fitted_without_it():
    report = leave_one_family_out(dev_cases())
    assert report.refitted
    assert {f.name for f in report.factors} == set(FITTED_FACTORS)
    for fit in report.factors:
        # only gpt-fast rows carry weight-only formats: without GF nothing is left to fit from
        assert fit.without_family["GF"] is None
        assert fit.without_family["TR"] == fit.in_sample_fit
    for family, (in_sample, held_out) in report.by_family.items():
        if family != "GF":
            assert held_out == in_sample
    gf_in, gf_out = report.by_family["GF"]
    assert gf_out.median_abs_error > gf_in.median_abs_error
    assert report.held_out_summary.median_abs_error <= HELD_OUT_MEDIAN_ABS_ERROR
    assert report.held_out_summary.p80_abs_error <= HELD_OUT_P80_ABS_ERROR


def test_held_out_gf_int4_row_uses_the_prior():
    """GF-03 (int4 Llama-2-7B on A100) without GF: the narrow weight-only factor falls back to 1.0, i.e. the int4
    weights stream at the 16-bit rate."""
    cases = dev_cases()
    report = leave_one_family_out(cases)
    i = next(i for i, c in enumerate(cases) if c.id == "GF-03")
    case = cases[i]
    assert factor_of(case.scenario) == "weight_only_narrow"
    prior = predict_under(case.scenario, ceilings_with_factor(case.scenario, "weight_only_narrow", UNFITTED_PRIOR),
                          case.metric)
    assert report.held_out[i].expected == pytest.approx(prior, rel=1e-12)
    assert report.in_sample[i].expected < prior  # the shipped 0.617 makes it slower


def test_without_fitted_factors_held_out_equals_in_sample_and_says_so():
    bf16_only = [c for c in dev_cases() if factor_of(c.scenario) is None]
    report = leave_one_family_out(bf16_only)
    assert not report.refitted and report.factors == ()
    assert report.held_out == report.in_sample
    assert report.held_out_summary == report.in_sample_summary
    assert "equals in-sample" in report.note


def test_solved_factor_reproduces_the_measurement():
    """The per-row fit is the value at which expected equals the measurement (GF-02: int8, 155.58 tok/s)."""
    case = next(c for c in dev_cases() if c.id == "GF-02")
    value = solve_factor(case, "weight_only_8bit")
    assert value is not None and 0.3 < value < 1.5
    c = ceilings_with_factor(case.scenario, "weight_only_8bit", value)
    assert predict_under(case.scenario, c, case.metric) == pytest.approx(case.measured, rel=1e-6)


def test_generation_times_agree_with_the_estimate():
    s = scenario("h100-sxm", "llama-3.1-70b", tp=4, batch=8, prompt=512, output=100)
    e = estimate(s, "expected")
    prefill_s, step_s, generation_s = generation_times(s, scenario_ceilings(s, "expected"))
    assert (prefill_s, step_s, generation_s) == pytest.approx(
        (e.prefill.time_s, e.decode.step_time_s, e.generation_time_s), rel=1e-12)


def test_rows_that_do_not_fit_are_flagged_with_the_reason():
    """LM-06: LMDeploy, Llama-2-7B fp16, batch 64 of 128 + 2048 tokens on one A100 80GB. KV per token:
    32 layers * 2 * 4096 * 2 B = 512 KiB; 64 * 2176 * 512 KiB = 68 GiB, plus 6.74e9 * 2 B = 12.55 GiB of weights:
    80.55 GiB before activations and the 1 GiB runtime reserve, over 80 GiB. It ran in waves, not as stated."""
    flags = {f.id: f for f in memory_flags(dev_cases())}
    for case in dev_cases():
        m = memory_footprint(case.scenario)
        assert (case.id in flags) == (m.per_device_bytes > m.capacity_bytes)
    lm06 = flags["LM-06"]
    kv_and_weights_bytes = 64 * 2176 * 512 * 1024 + 6.74e9 * 2
    assert kv_and_weights_bytes / GIB == pytest.approx(80.55, abs=0.01)
    assert lm06.per_device_bytes > kv_and_weights_bytes
    assert lm06.capacity_bytes == 80 * GIB and lm06.max_batch < 64
    assert "80.0 GiB" in lm06.reason and "waves" in lm06.reason
    small = dataclasses.replace(next(c for c in dev_cases() if c.id == "GF-01"), id="X-1")
    assert memory_flags([small]) == []
