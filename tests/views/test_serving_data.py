"""What the serving mode shows (tui/views/serving_data.py), checked against the model's functions called directly and
against hand-derived arithmetic."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline.models.serving import (
    at_rate,
    devices_for_rate,
    frontier,
    kv_cache_plan,
    max_concurrency_for_targets,
)
from roofline.presets import load_catalog
from roofline.tui.inputs.form import ScenarioForm, build_scenario
from roofline.tui.views.formatting import si
from roofline.tui.views.serving_data import (
    ServingMemo,
    chart_data,
    compare_cells,
    curve_concurrencies,
    headline_values,
    memory_line,
    serving_results,
    serving_settings,
    summary_line,
)

CATALOG = load_catalog()


def _setup(**form):
    f = ScenarioForm(serving=True, **form)
    s = build_scenario(f, CATALOG)
    return f, s, serving_settings(f, s)


def test_settings_come_from_the_form_in_model_units():
    f, s, st_ = _setup(itl_target_ms=50.0, ttft_target_ms=1000.0, concurrency=8, spec_tokens=3, spec_acceptance=0.8,
                       prefix_tokens=512, prefix_hit_rate=0.5)
    assert st_.itl_target_s == pytest.approx(0.05) and st_.ttft_target_s == pytest.approx(1.0)
    assert st_.concurrency == 8 and st_.rate_per_s is None
    # the mix takes the scenario's prompt and output (1024 in / 256 out by default)
    assert (st_.mix.prompt_tokens, st_.mix.output_tokens) == (s.batching.prompt_tokens, s.batching.output_tokens)
    # h*S = 0.5 * 512 = 256 cached: P - h*S = 1024 - 256 = 768 computed
    assert st_.mix.computed_prompt_tokens == pytest.approx(s.batching.prompt_tokens - 256)
    # Leviathan et al.: (1 - a^(k+1)) / (1 - a) = (1 - 0.8^4) / 0.2 = (1 - 0.4096) / 0.2 = 2.952
    assert st_.options.speculation.tokens_per_step == pytest.approx(2.952)
    assert st_.options.speculation.draft is None  # one MTP layer of the target drafts
    assert _setup(spec_tokens=0)[2].options.speculation is None


def test_a_prefix_longer_than_the_prompt_names_its_field():
    from roofline.models.errors import ModelInputError

    f = ScenarioForm(serving=True, prefix_tokens=5000)
    with pytest.raises(ModelInputError) as err:
        serving_settings(f, build_scenario(f, CATALOG))
    assert err.value.field == "prefix_tokens"


def test_curve_concurrencies_reach_twice_the_memory_limit_and_hold_the_limit():
    values = curve_concurrencies(354, 16)
    assert values[0] == 1 and values[-1] == 708 and 354 in values
    assert values == sorted(set(values)) and len(values) <= 49  # 48 geometric values and the limit
    assert curve_concurrencies(0, 16)[-1] == 16  # nothing fits: up to the chosen concurrency
    assert curve_concurrencies(10, 5000)[-1] == 5000  # a concurrency beyond twice the limit is on the curve


def test_the_operating_point_targets_and_limit_are_the_models_own():
    f, s, st_ = _setup(concurrency=32)
    r = serving_results(s, st_, "expected")
    direct = frontier(s, st_.mix, [32], "expected", st_.options).points[0]
    assert r.point == direct
    t = max_concurrency_for_targets(s, st_.mix, itl_s=0.05, ttft_s=1.0, estimate_name="expected",
                                    options=st_.options)
    assert r.targets == t
    limit = kv_cache_plan(s, st_.mix, st_.options).max_concurrency
    assert r.max_concurrency == limit and r.limit_point.concurrency == limit and r.limit_point.fits
    assert all(p.fits == (p.concurrency <= limit) for p in r.curve.points)
    assert r.devices is None  # no rate set


def test_a_rate_sets_the_operating_point_and_the_devices():
    f, s, st_ = _setup(rate_per_s=20.0)
    r = serving_results(s, st_, "bound")
    assert r.point == at_rate(s, st_.mix, 20.0, "bound", st_.options)
    assert r.devices == devices_for_rate(s, st_.mix, 20.0, itl_s=0.05, ttft_s=1.0, estimate_name="bound",
                                         options=st_.options)
    assert f"20 req/s: {r.devices.devices}" in summary_line(r)


def test_a_concurrency_change_keeps_the_curve_and_the_targets():
    f, s, st_ = _setup(concurrency=16)
    memo = ServingMemo()
    first = serving_results(s, st_, "expected", memo=memo)
    second = serving_results(s, replace(st_, concurrency=64), "expected", memo=memo)
    assert second.curve is first.curve and second.targets is first.targets
    assert second.point.concurrency == 64 and first.point.concurrency == 16


def test_headline_values_are_the_points_figures():
    f, s, st_ = _setup(concurrency=8)
    p = serving_results(s, st_, "expected").point
    values = headline_values(p)
    assert values["m-per-seq"][0] == p.tokens_per_s_per_user == pytest.approx(1.0 / p.itl_s)
    assert values["m-aggregate"][0] == p.tokens_per_s_per_device
    assert values["m-idle"][0] == pytest.approx(p.itl_s * 1e3)
    assert values["m-ttft"][0] == pytest.approx(p.ttft_s * 1e3)


def test_summary_dollars_and_joules_per_million_tokens_by_hand():
    """H100 SXM: the preset's $3.78 per device-hour and 700 W board power, one device (TP 1).
    $/Mtok = 3.78 / 3600 / (output tok/s per device) * 1e6; J/Mtok = 700 / (output tok/s per device) * 1e6."""
    f, s, st_ = _setup()
    r = serving_results(s, st_, "expected")
    t = r.targets.point
    assert s.hardware.price_usd_per_hour == 3.78 and s.hardware.tdp_w == 700.0
    usd = 3.78 / 3600 / t.tokens_per_s_per_device * 1e6
    joules = 700.0 / t.tokens_per_s_per_device * 1e6
    line = summary_line(r)
    assert f"${usd:,.2f} and {si(joules, 'J')} per Mtok" in line
    assert f"up to C={r.targets.max_concurrency:,}" in line and "ITL <= 50 ms, TTFT <= 1 s" in line
    # the form's price overrides the device's: $7.56 doubles the dollars
    f2 = replace(f, price_per_device_hour=7.56)
    r2 = serving_results(s, serving_settings(f2, s), "expected")
    assert r2.targets.point.usd_per_million_tokens == pytest.approx(2 * t.usd_per_million_tokens)


def test_compare_cells_users_per_device_price_and_no_numbers_where_nothing_fits():
    f, s, st_ = _setup(tp=2, rate_per_s=10.0)
    cells = compare_cells(s, st_, "expected")
    t = max_concurrency_for_targets(s, st_.mix, itl_s=0.05, ttft_s=1.0, options=st_.options)
    d = devices_for_rate(s, st_.mix, 10.0, itl_s=0.05, ttft_s=1.0, options=st_.options)
    assert cells[0] == f"{t.max_concurrency / 2:,.3g}"  # two devices per replica
    assert cells[1] == f"{d.devices:,} ({d.replicas:,}xTP{d.tp})"
    assert cells[2] == f"${t.point.usd_per_million_tokens:,.2f}"
    # a device without a published price: no dollars
    f3, s3, st3 = _setup(hardware_id="h100-nvl")
    assert s3.hardware.price_usd_per_hour is None and compare_cells(s3, st3, "expected")[2] == "-"
    # 405B at bf16 (~810 GB of weights) on one 48 GB L40S: not one request fits, no numbers
    f4, s4, st4 = _setup(hardware_id="l40s", model_ref="llama-3.1-405b", weights="bf16")
    assert compare_cells(s4, st4, "expected") == ("-", "-", "-", "-")


def test_chart_data_in_log10_units():
    f, s, st_ = _setup(concurrency=16)
    base = build_scenario(replace(f, hardware_id="h200"), CATALOG)
    r = serving_results(s, st_, "expected", baseline=base)
    d = chart_data(r)
    p = r.point
    assert d.point_xy == pytest.approx((math.log10(p.tokens_per_s_per_device), math.log10(p.tokens_per_s_per_user)))
    assert d.itl_target_y == pytest.approx(math.log10(20.0))  # 50 ms between tokens: 20 tok/s per user
    assert len(d.fits_xy[0]) + len(d.beyond_xy[0]) == len(r.curve.points)
    xs = d.fits_xy[0] + d.beyond_xy[0] + d.baseline_xy[0]
    assert d.x_range[0] <= min(xs) and max(xs) <= d.x_range[1]
    # the baseline's curve is the model's frontier of the baseline scenario
    assert r.baseline_curve.points[0] == frontier(base, st_.mix, [1], "expected", replace(
        st_.options, price_usd_per_hour=None)).points[0]
    assert serving_results(s, st_, "expected", baseline=s).baseline_curve is None  # the same scenario: one curve


def test_memory_line_share_of_the_blocks():
    f, s, st_ = _setup(concurrency=16)
    r = serving_results(s, st_, "expected")
    share, text = memory_line(r)
    assert share == pytest.approx(16 / r.max_concurrency)
    assert f"hold {r.max_concurrency:,} requests; fits" in text
    over = serving_results(s, replace(st_, concurrency=2 * r.max_concurrency), "expected")
    assert memory_line(over)[0] == 1.0 and "DOES NOT FIT" in memory_line(over)[1]


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=1, max_value=900))
def test_any_concurrency_the_point_is_the_frontiers_and_fits_within_the_limit(concurrency):
    f, s, st_ = _SETUP
    r = serving_results(s, replace(st_, concurrency=concurrency), "bound", memo=_MEMO)
    assert r.point == frontier(s, st_.mix, [concurrency], "bound", st_.options).points[0]
    assert r.point.fits == (concurrency <= r.max_concurrency)


_SETUP = _setup()
_MEMO = ServingMemo()


def test_the_verdict_names_the_arrival_model_and_the_fixed_path():
    """The Serving view's verdict says which arrival model its TTFT and ITL follow, and the engine's fixed path per
    request in TTFT (expected only): a closed loop at a concurrency, Poisson arrivals at a rate."""
    from roofline.models.serving import ServingMix, ServingOptions
    from roofline.tui.views.serving_data import arrivals_text
    from tests.conftest import scenario

    s = replace(scenario("h100-sxm", "llama-3.1-8b"), engine="vllm")
    mix = ServingMix(prompt_tokens=1024, output_tokens=256)
    closed = frontier(s, mix, [8]).points[0]
    assert arrivals_text(closed) == "closed loop, 8.20 ms per request in TTFT"
    assert arrivals_text(at_rate(s, mix, 1.0)).startswith("Poisson arrivals")
    assert arrivals_text(frontier(s, mix, [8], "bound").points[0]) == "closed loop"
    assert arrivals_text(frontier(s, mix, [8], options=ServingOptions(arrivals="poisson")).points[0]).startswith(
        "Poisson")
