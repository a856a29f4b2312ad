"""The uncertainty band of ``expected`` (models/band.py): what it spans, that it holds ``expected``, and the report."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roofline.models.band import (
    band_ceilings,
    band_engines,
    band_estimates,
    expected_band,
    hardware_at,
    matmul_fraction_candidates,
    mem_bw_fraction_candidates,
    sweep_span,
)
from roofline.models.estimate import ATTENTION_KERNEL_EFFICIENCY, scenario_ceilings
from roofline.models.inference import decode_step_samples, estimate, mean_decode_step_from_ops
from roofline.models.report import scenario_report
from roofline.models.validation import RowResult, generation_times, predict, with_band
from roofline.tui.views.report_text import render_markdown, render_text
from tests.conftest import scenario


def test_engines_follow_the_vendor_and_keep_the_scenario_engine():
    # engines.py: Apple runs generic, llama.cpp Metal, MLC and MLX; Google (TPU) only the generic profile in the band
    # (JetStream and MaxText are the generic factors compiled: in_band = false, in the band when named)
    assert band_engines(scenario("m3-max", "llama-3-8b")) == ("generic", "llamacpp-metal", "mlc", "mlx")
    metal = dataclasses.replace(scenario("m3-max", "llama-3-8b"), engine="llamacpp-metal")
    assert band_engines(metal) == ("llamacpp-metal", "generic", "mlc", "mlx")
    assert band_engines(scenario("tpu-v5e", "llama-3-8b")) == ("generic",)
    assert set(band_engines(scenario("mi300x", "llama-3-8b"))) == {"generic", "gpt-fast", "llamacpp-rocm", "mlc",
                                                                  "rocm-eager"}


def test_fraction_candidates_are_measured_and_the_default_range_ends():
    # h100-sxm preset: measured bandwidth 0.887, bf16 matmul 0.803; spread across presets: 0.774-0.904, 0.542-0.881
    h100 = scenario("h100-sxm", "llama-3-8b").hardware
    assert mem_bw_fraction_candidates(h100) == (0.774, 0.887, 0.904)
    assert matmul_fraction_candidates(h100, "bf16") == (0.542, 0.803, 0.881)
    # rtx-4090: no measurement, the range's ends only
    rtx = scenario("rtx-4090", "llama-3-8b").hardware
    assert mem_bw_fraction_candidates(rtx) == (0.774, 0.904)
    assert matmul_fraction_candidates(rtx, "bf16") == (0.542, 0.881)


def test_one_engine_device_band_is_the_two_corners_by_hand():
    """TPU v5e has only the generic engine and no measured fraction: the band's ends are expected at bandwidth 0.774 x
    spec with matmul 0.542 x spec (attention at 0.7 of that), and at 0.904 with 0.881. Ceilings built here by hand from
    the expected ones (only those three rates changed) give the same prefill, mean step and generation time."""
    s = scenario("tpu-v5e", "llama-3.1-8b", batch=4, prompt=512, output=128)
    c = scenario_ceilings(s, "expected")
    spec_bw, spec_peak = c.spec_mem_bw_bytes_per_s, c.spec_matmul_flops_per_s

    def by_hand(bw_fraction: float, matmul_fraction: float) -> tuple[float, float, float]:
        hand = dataclasses.replace(
            c, mem_bw_bytes_per_s=spec_bw * bw_fraction, matmul_flops_per_s=spec_peak * matmul_fraction,
            attention_flops_per_s=spec_peak * matmul_fraction * ATTENTION_KERNEL_EFFICIENCY,
            matmul_flops_per_s_by_dtype={d: spec_peak * matmul_fraction * v / c.matmul_flops_per_s
                                         for d, v in c.matmul_flops_per_s_by_dtype.items()})
        return generation_times(s, hand)

    slow, fast = by_hand(0.774, 0.542), by_hand(0.904, 0.881)
    band = expected_band(s)
    assert band.high["prefill"]["ttft_s"] == pytest.approx(slow[0], rel=1e-9)
    assert band.low["prefill"]["ttft_s"] == pytest.approx(fast[0], rel=1e-9)
    assert band.high["decode"]["step_time_s"] == pytest.approx(slow[1], rel=1e-9)
    assert band.low["decode"]["step_time_s"] == pytest.approx(fast[1], rel=1e-9)
    assert band.high["generation"]["time_s"] == pytest.approx(slow[2], rel=1e-9)
    # rates are the reciprocals: output tokens/s = B x G / generation time, lowest at the slow corner
    assert band.low["generation"]["output_tokens_per_s"] == pytest.approx(4 * 128 / slow[2], rel=1e-9)


@pytest.mark.parametrize(("hw", "model", "weights"), [("h100-sxm", "llama-3.1-8b", "int4"),
                                                      ("mi300x", "llama-3.1-70b", "bf16"),
                                                      ("m3-max", "llama-3-8b", "q4_0")])
def test_corners_are_the_extremes_of_the_full_cross(hw, model, weights):
    """Every op time is non-increasing in both fractions, so the two corners per engine reach the smallest and
    largest decode step over the whole engines x bandwidth x matmul cross (band.py's docstring)."""
    s = scenario(hw, model, weights=weights, batch=8, prompt=2048, output=64)
    steps = []
    for engine, bw, mm in itertools.product(band_engines(s), mem_bw_fraction_candidates(s.hardware),
                                            matmul_fraction_candidates(s.hardware, "bf16")):
        variant = dataclasses.replace(s, engine=engine, hardware=hardware_at(s.hardware, bw, lambda d, mm=mm: mm))
        steps.append(estimate(variant, "expected").decode.step_time_s)
    band = expected_band(s)
    assert band.low["decode"]["step_time_s"] == pytest.approx(min(steps), rel=1e-9)
    assert band.high["decode"]["step_time_s"] == pytest.approx(max(steps), rel=1e-9)
    assert len(band_estimates(s)) == 2 * len(band_engines(s))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hw=st.sampled_from(["h100-sxm", "a100-sxm4-80gb", "rtx-4090", "mi300x", "m2-ultra", "tpu-v5e", "l40s"]),
       batch=st.integers(1, 64), prompt=st.integers(1, 8192), output=st.integers(1, 512),
       weights=st.sampled_from(["bf16", "int8", "int4", "q4_0"]))
def test_band_always_holds_expected(hw, batch, prompt, output, weights):
    s = scenario(hw, "llama-3.1-8b", batch=batch, prompt=prompt, output=output, weights=weights)
    e = estimate(s, "expected")
    band = expected_band(s)
    values = {"prefill": {"ttft_s": e.ttft_s, "tokens_per_s": batch * prompt / e.prefill.time_s},
              "decode": {"step_time_s": e.decode.step_time_s, "tokens_per_s": e.decode.tokens_per_s},
              "generation": {"time_s": e.generation_time_s, "output_tokens_per_s": e.output_tokens_per_s}}
    for phase, figures in values.items():
        for key, value in figures.items():
            assert band.low[phase][key] <= value * (1 + 1e-12), (phase, key)
            assert value <= band.high[phase][key] * (1 + 1e-12), (phase, key)


def test_sweep_span_is_the_smallest_and_largest_at_each_point():
    # by hand: point 0 takes 1 and 3, point 1 takes 5 and 2, point 2 takes 4 twice
    low, high = sweep_span([np.array([1.0, 5.0, 4.0]), np.array([3.0, 2.0, 4.0])])
    assert low.tolist() == [1.0, 2.0, 4.0] and high.tolist() == [3.0, 5.0, 4.0]


def test_a_swept_band_is_expected_band_at_each_point():
    """The tpu-v5e runs the generic engine only, with no measured fraction: two band ceilings, at 0.774 and 0.904 of
    spec bandwidth. A batch sweep's mean decode step timed under them spans, at each batch, what expected_band
    gives for a scenario at that batch (the sweep and the estimate time the same decode steps)."""
    s = scenario("tpu-v5e", "llama-3.1-8b", batch=4, prompt=512, output=128)
    ceilings = band_ceilings(s)
    spec_bw = ceilings[0].spec_mem_bw_bytes_per_s
    assert [c.mem_bw_bytes_per_s / spec_bw for c in ceilings] == pytest.approx([0.774, 0.904], rel=1e-12)
    batches = np.array([1.0, 4.0, 32.0])
    samples = decode_step_samples(s, batches)
    low, high = sweep_span([mean_decode_step_from_ops(samples, c) for c in ceilings])
    for i, b in enumerate(batches):
        at = expected_band(dataclasses.replace(s, batching=dataclasses.replace(s.batching, batch_size=int(b))))
        assert low[i] == pytest.approx(at.low["decode"]["step_time_s"], rel=1e-9)
        assert high[i] == pytest.approx(at.high["decode"]["step_time_s"], rel=1e-9)


def test_report_puts_low_and_high_beside_expected():
    r = scenario_report(scenario("h100-sxm", "llama-3.1-8b"), include_ops=False)
    for phase in ("prefill", "decode", "generation"):
        for key, value in r["expected_low"][phase].items():
            assert value <= r["expected"][phase][key] <= r["expected_high"][phase][key]
    assert r["expected_band"]["engines"][0] == "generic" and "llamacpp" in r["expected_band"]["engines"]
    assert r["expected_band"]["mem_bw_fractions"] == [0.774, 0.887, 0.904]
    text = render_text(r, show_ops=False)
    assert "expected range" in text and "models/band.py" in text
    low_ttft_ms = r["expected_low"]["prefill"]["ttft_s"] * 1e3
    assert f"{low_ttft_ms:.2f} ms - " in text
    assert "| expected range |" in render_markdown(r)


def test_a_row_is_in_band_when_the_measurement_is_between_low_and_high():
    s = scenario("rtx-4090", "llama-3-8b", weights="q4_0", prompt=1, output=128)
    e = estimate(s, "expected")
    at_expected = predict(s, e, "decode_tokens_per_s_per_seq")
    row = with_band(RowResult(id="r", metric="decode_tokens_per_s_per_seq", measured=at_expected,
                              expected=at_expected, bound=2 * at_expected), s)
    assert row.in_band is True
    far = dataclasses.replace(row, measured=2 * row.expected_high)
    assert far.in_band is False
    assert RowResult(id="r", metric="itl_ms", measured=1, expected=1, bound=1).in_band is None


def test_default_fraction_ranges_are_the_spread_measured_across_the_presets():
    """The band's ranges come from the presets' measured fractions, not from a guess: bandwidth min..max, matmul
    10th..90th percentile (a few outliers, Gaudi 2 at 0.994 and MI300X fp8 at 0.487, left out)."""
    import statistics

    from roofline.models.band import DEFAULT_MATMUL_FRACTION_RANGE, DEFAULT_MEM_BW_FRACTION_RANGE
    from roofline.presets import load_catalog

    hardware = load_catalog().hardware.values()
    bw = [h.achievable_mem_bw_fraction for h in hardware if h.achievable_mem_bw_fraction]
    mm = [v for h in hardware for v in h.achievable_matmul_fraction.values()]
    assert (round(min(bw), 3), round(max(bw), 3)) == DEFAULT_MEM_BW_FRACTION_RANGE
    deciles = statistics.quantiles(mm, n=10)
    assert (round(deciles[0], 3), round(deciles[-1], 3)) == DEFAULT_MATMUL_FRACTION_RANGE
