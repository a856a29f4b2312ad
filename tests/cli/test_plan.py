"""``roofline plan`` (tui/cli/plan.py, tui/views/plan_text.py): the serving planner's CLI contract.

The JSON must carry what the serving model (models/serving/) computes when called directly on the same scenario;
prices belong to each device; every bad value exits 2 with one line naming the flag.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline.models.serving import (
    ServingMix,
    ServingOptions,
    Speculation,
    devices_for_rate,
    frontier,
    kv_cache_plan,
    max_concurrency_for_targets,
)
from roofline.tui.cli.main import main
from tests.conftest import model, run_cli, scenario

POINT_FIELDS = ("concurrency", "tokens_per_s_per_user", "tokens_per_s_per_device", "ttft_s", "itl_s", "e2e_s",
                "joules_per_token", "usd_per_million_tokens", "fits")
# a preset without a published price (presets/hardware/a100-pcie-80gb.toml has no price_usd_per_hour)
UNPRICED = "a100-pcie-80gb"
BASE = ["plan", "--model", "llama-3.1-8b", "--prompt", "1024", "--output", "256"]


@pytest.fixture(autouse=True)
def _no_user_presets(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path / "none"))


def _json(argv, capsys) -> dict:
    code, out, err = run_cli([*argv, "--format", "json"], capsys)
    assert code == 0, err
    return json.loads(out)


def _same(a: float | None, b: float | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9))


# ---------------------------------------------------------------- one device: schema and the model's own numbers


def test_json_one_device_matches_the_model_called_directly(capsys):
    plan = _json([*BASE, "--hardware", "h100-sxm", "--itl-ms", "20", "--ttft-ms", "500", "--rate", "10"], capsys)
    assert plan["schema_version"] == 2 and plan["hardware"] == "h100-sxm" and "devices" not in plan
    s = scenario("h100-sxm", "llama-3.1-8b", prompt=1024, output=256)
    mix = ServingMix(prompt_tokens=1024, output_tokens=256)
    assert plan["memory"]["max_concurrency"] == kv_cache_plan(s, mix, ServingOptions()).max_concurrency
    for name in ("expected", "bound"):
        direct = frontier(s, mix, estimate_name=name)
        points = plan[name]["frontier"]
        assert [p["concurrency"] for p in points] == [p.concurrency for p in direct.points]
        for got, want in zip(points, direct.points, strict=True):
            assert set(POINT_FIELDS) <= set(got)
            for field in POINT_FIELDS:
                assert _same(got[field], getattr(want, field)) if field != "fits" else got[field] == want.fits
        targets = plan[name]["targets"]
        result = max_concurrency_for_targets(s, mix, itl_s=0.020, ttft_s=0.5, estimate_name=name)
        assert targets["max_concurrency"] == result.max_concurrency > 0
        assert _same(targets["max_concurrency_point"]["itl_s"], result.point.itl_s)
        want_plan = devices_for_rate(s, mix, 10.0, itl_s=0.020, ttft_s=0.5, estimate_name=name)
        got_plan = targets["devices_for_rate"]
        assert got_plan["found"] is True
        assert (got_plan["tp"], got_plan["replicas"], got_plan["devices"]) == (
            want_plan.tp, want_plan.replicas, want_plan.devices)
        assert _same(got_plan["usd_per_hour"], want_plan.usd_per_hour)
    # bound is a ceiling: it carries at least as many users within the same targets
    assert plan["bound"]["targets"]["max_concurrency"] >= plan["expected"]["targets"]["max_concurrency"]


def test_targets_are_null_when_not_asked(capsys):
    plan = _json([*BASE, "--concurrency", "4"], capsys)
    for name in ("expected", "bound"):
        assert plan[name]["targets"] == {"max_concurrency": None, "max_concurrency_point": None,
                                         "devices_for_rate": None}
        assert [p["concurrency"] for p in plan[name]["frontier"]] == [4.0]
    assert plan["targets_asked"] == {"itl_s": None, "ttft_s": None, "rate_per_s": None}


def test_concurrency_list_is_sorted_once_each_and_marks_points_past_the_memory_limit(capsys):
    plan = _json([*BASE, "--concurrency", "8,1,8,100000"], capsys)
    points = plan["expected"]["frontier"]
    assert [p["concurrency"] for p in points] == [1.0, 8.0, 100000.0]
    limit = plan["memory"]["max_concurrency"]
    assert [p["fits"] for p in points] == [limit >= 1, limit >= 8, limit >= 100000] == [True, True, False]


def test_cost_and_energy_arithmetic(capsys):
    """H100 SXM board power 700 W (presets/hardware/h100-sxm.toml), one device (tp 1), price given as $7.20/h:
    J/tok = 700 W / (tokens/s per device); $/Mtok = 7.20 $/h / 3600 s/h / (tokens/s per device) x 1e6
    = 2000 / (tokens/s per device)."""
    plan = _json([*BASE, "--hardware", "h100-sxm", "--price-per-hour", "7.2", "--concurrency", "1,16"], capsys)
    assert plan["price_usd_per_hour"] == 7.2 and plan["price_source"] == "--price-per-hour"
    for p in plan["expected"]["frontier"]:
        assert math.isclose(p["joules_per_token"], 700.0 / p["tokens_per_s_per_device"], rel_tol=1e-9)
        assert math.isclose(p["usd_per_million_tokens"], 2000.0 / p["tokens_per_s_per_device"], rel_tol=1e-9)


def test_tp_cost_counts_every_device_of_the_replica(capsys):
    """tp 4: per-device throughput is the replica's / 4, and $/Mtok = price x 4 / 3600 / replica tokens/s x 1e6
    = price / 3600 / per-device tokens/s x 1e6: the same expression per device (device-hours / output tokens)."""
    plan = _json(["plan", "--model", "llama-3.1-70b", "--tp", "4", "--hardware", "h200", "--concurrency", "32"], capsys)
    p = plan["expected"]["frontier"][0]
    assert plan["devices_per_replica"] == 4
    assert math.isclose(p["usd_per_million_tokens"], 5.58 / 3600 / p["tokens_per_s_per_device"] * 1e6, rel_tol=1e-9)


def test_no_price_is_null_in_json_and_said_in_text(capsys):
    plan = _json([*BASE, "--hardware", UNPRICED, "--concurrency", "1,2"], capsys)
    assert plan["price_usd_per_hour"] is None and plan["price_source"] is None
    assert all(p["usd_per_million_tokens"] is None for p in plan["expected"]["frontier"] + plan["bound"]["frontier"])
    assert all(p["joules_per_token"] is not None for p in plan["expected"]["frontier"])  # the preset has tdp_w
    code, out, _ = run_cli([*BASE, "--hardware", UNPRICED, "--concurrency", "1,2"], capsys)
    assert code == 0 and "no price" in out and re.search(r"\$\d", out) is None  # no dollar figure anywhere


def test_price_override_gives_the_unpriced_device_a_cost(capsys):
    plan = _json([*BASE, "--hardware", UNPRICED, "--price-per-hour", "1.5", "--concurrency", "1"], capsys)
    p = plan["expected"]["frontier"][0]
    assert math.isclose(p["usd_per_million_tokens"], 1.5 / 3600 / p["tokens_per_s_per_device"] * 1e6, rel_tol=1e-9)


def test_prefix_and_speculation_reach_the_model(capsys):
    plan = _json([*BASE, "--prefix-tokens", "512", "--prefix-hit", "0.5", "--draft", "llama-3.1-8b",
                  "--spec-tokens", "3", "--accept", "0.6", "--concurrency", "1,8", "--model", "llama-3.1-70b",
                  "--tp", "4"], capsys)
    # tau = (1 - 0.6^4) / (1 - 0.6) = (1 - 0.1296) / 0.4 = 2.176 tokens per verification step
    assert math.isclose(plan["speculation"]["tokens_per_step"], 2.176, rel_tol=1e-12)
    assert plan["speculation"]["draft"] == "llama-3.1-8b"
    assert plan["mix"]["computed_prompt_tokens"] == 1024 - 0.5 * 512
    s = scenario("h100-sxm", "llama-3.1-70b", prompt=1024, output=256, tp=4)
    mix = ServingMix(prompt_tokens=1024, output_tokens=256, prefix_tokens=512, prefix_hit_rate=0.5)
    options = ServingOptions(speculation=Speculation(tokens=3, acceptance=0.6, draft=model("llama-3.1-8b")))
    direct = frontier(s, mix, [1, 8], options=options)
    for got, want in zip(plan["expected"]["frontier"], direct.points, strict=True):
        assert _same(got["itl_s"], want.itl_s) and _same(got["ttft_s"], want.ttft_s)


# ---------------------------------------------------------------- several devices


def test_several_devices_each_with_its_own_price(capsys):
    argv = ["plan", "--model", "llama-3.1-70b", "--tp", "4", "--prompt", "2048", "--output", "300",
            "--itl-ms", "50", "--ttft-ms", "1000", "--rate", "20"]
    plan = _json([*argv, "--hardware", "h100-sxm,h200,mi300x"], capsys)
    assert [d["hardware"] for d in plan["devices"]] == ["h100-sxm", "h200", "mi300x"]
    # the preset prices (presets/hardware/*.toml, each with its source): not one price for every device
    assert [d["price_usd_per_hour"] for d in plan["devices"]] == [3.78, 5.58, 1.85]
    for d in plan["devices"]:
        single = _json([*argv, "--hardware", d["hardware"]], capsys)
        for name in ("expected", "bound"):
            assert d[name] == single[name]
    costs = {d["hardware"]: d["expected"]["targets"]["devices_for_rate"]["usd_per_hour"] for d in plan["devices"]}
    cheapest = plan["cheapest"]
    assert cheapest["basis"] == "usd_per_hour" and cheapest["value"] == min(costs.values())
    assert costs[cheapest["hardware"]] == cheapest["value"]
    code, out, _ = run_cli([*argv, "--hardware", "h100-sxm,h200,mi300x"], capsys)
    assert code == 0 and f"cheapest (expected, for the rate within the targets): {cheapest['hardware']}" in out


def test_several_prices_in_order_and_preset_keeps_the_preset(capsys):
    plan = _json([*BASE, "--hardware", f"h100-sxm,{UNPRICED},h200", "--price-per-hour", "preset,2,9",
                  "--concurrency", "1"], capsys)
    assert [d["price_usd_per_hour"] for d in plan["devices"]] == [3.78, 2.0, 9.0]
    assert [d["price_source"] == "--price-per-hour" for d in plan["devices"]] == [False, True, True]


def test_cheapest_leaves_out_devices_without_a_price(capsys):
    plan = _json([*BASE, "--hardware", f"h100-sxm,{UNPRICED}", "--concurrency", "1,4"], capsys)
    cheapest = plan["cheapest"]
    assert cheapest["hardware"] == "h100-sxm" and cheapest["without_price_or_plan"] == [UNPRICED]
    fits = [p for p in plan["devices"][0]["expected"]["frontier"] if p["fits"]]
    assert cheapest["value"] == fits[-1]["usd_per_million_tokens"]


def test_no_device_priced_means_no_cheapest(capsys):
    plan = _json([*BASE, "--hardware", f"{UNPRICED},a100-sxm4-40gb", "--concurrency", "1"], capsys)
    assert plan["cheapest"] is None


# ---------------------------------------------------------------- text and markdown


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_text_and_markdown_state_table_and_assumptions(fmt, capsys):
    code, out, err = run_cli([*BASE, "--itl-ms", "20", "--ttft-ms", "500", "--rate", "10", "--format", fmt], capsys)
    assert code == 0 and err == ""
    for words in ("concurrency", "tok/s/user", "tok/s/device", "TTFT", "ITL", "J/tok", "$/Mtok", "fits",
                  "max concurrency meeting the targets", "devices for 10 requests/s", "engine generic",
                  "M/D/1", "Little's law", "device-hour", "output tokens"):
        assert words in out, words


def test_text_row_count_is_the_frontier(capsys):
    plan = _json([*BASE, "--concurrency", "1,2,3"], capsys)
    code, out, _ = run_cli([*BASE, "--concurrency", "1,2,3"], capsys)
    table = out.split("expected frontier")[1].splitlines()[2:]
    rows = [line for line in table if line.strip() and line.split()[0].isdigit()]
    assert [float(r.split()[0]) for r in rows] == [p["concurrency"] for p in plan["expected"]["frontier"]]


# ---------------------------------------------------------------- bad values: one line, exit 2, naming the flag


@pytest.mark.parametrize(("extra", "flag"), [
    (["--concurrency", "0"], "--concurrency"),
    (["--concurrency", "1,,2"], "--concurrency"),
    (["--concurrency", "2.5"], "--concurrency"),
    (["--rate", "-1"], "--rate"),
    (["--rate", "nan"], "--rate"),
    (["--rate", "5"], "--rate"),  # a rate needs a TTFT target
    (["--itl-ms", "0"], "--itl-ms"),
    (["--ttft-ms", "abc"], "--ttft-ms"),
    (["--prefix-tokens", "10"], "--prefix-tokens"),
    (["--prefix-hit", "0.5"], "--prefix-hit"),
    (["--prefix-tokens", "5000", "--prefix-hit", "0.5"], "--prefix-tokens"),
    (["--prefix-tokens", "10", "--prefix-hit", "1.5"], "--prefix-hit"),
    (["--spec-tokens", "0", "--accept", "0.5"], "--spec-tokens"),
    (["--spec-tokens", "3"], "--accept"),
    (["--accept", "-0.1", "--spec-tokens", "2"], "--accept"),
    (["--draft", "no-such-model", "--spec-tokens", "2", "--accept", "0.5"], "--draft"),
    (["--draft", "llama-3.1-8b"], "--spec-tokens"),
    (["--price-per-hour", "-3"], "--price-per-hour"),
    (["--price-per-hour", "2,3"], "--price-per-hour"),
    (["--hardware", "h100-sxm,h200", "--price-per-hour", "2"], "--price-per-hour"),
    (["--hardware", "h100-sxm,no-such-gpu"], "--hardware"),
    (["--hardware", "h100-sxm,,h200"], "--hardware"),
    (["--hardware", "h200,h200"], "--hardware"),
    (["--hardware", "h100-sxm,h200", "--mem-bw-gb-per-s", "100"], "--mem-bw-gb-per-s"),
    (["--tp", "3"], "--tp"),
    (["--prompt", "0"], "--prompt"),
    (["--format", "csv"], "--format"),
])
def test_bad_values_exit_2_with_one_line_naming_the_flag(extra, flag, capsys):
    code, out, err = run_cli([*BASE, *extra], capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and flag in err, err


# ---------------------------------------------------------------- properties


@settings(max_examples=15, deadline=None)
@given(values=st.lists(st.integers(1, 512), min_size=1, max_size=6))
def test_per_user_speed_never_rises_with_concurrency_in_the_output(values):
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main([*BASE, "--concurrency", ",".join(map(str, values)), "--format", "json"])
    assert code == 0
    plan = json.loads(buffer.getvalue())
    for name in ("expected", "bound"):
        points = plan[name]["frontier"]
        assert [p["concurrency"] for p in points] == sorted(set(map(float, values)))
        speeds = [p["tokens_per_s_per_user"] for p in points]
        assert all(b <= a * (1 + 1e-12) for a, b in zip(speeds, speeds[1:], strict=False))


def test_a_model_that_does_not_fit_says_so(capsys):
    """Llama 3.1 70B in bf16 is about 141 GB of weights; an L4 holds 24 GB: no KV block is left, nothing fits."""
    argv = ["plan", "--hardware", "l4", "--model", "llama-3.1-70b", "--itl-ms", "50", "--ttft-ms", "1000"]
    plan = _json(argv, capsys)
    assert plan["memory"]["max_concurrency"] == 0 and plan["memory"]["fits"] is False
    assert [p["fits"] for p in plan["expected"]["frontier"]] == [False]
    assert plan["expected"]["targets"]["max_concurrency"] == 0
    assert plan["expected"]["targets"]["max_concurrency_point"] is None
    code, out, _ = run_cli(argv, capsys)
    assert code == 0 and "not one request fits in memory" in out and "DOES NOT FIT" in out


# ---------------------------------------------------------------- arrival models and fixed costs (issue 27)


def test_plan_says_which_arrival_model_and_fixed_cost_each_figure_uses(capsys):
    """Closed loop by default (--concurrency runs are closed loops), Poisson with --arrivals poisson; a rate is
    always Poisson. The fixed path per request is the engine profile's under expected (vLLM: 8.2 ms) and none
    under bound; the text says both."""
    argv = [*BASE, "--hardware", "h100-sxm", "--engine", "vllm", "--concurrency", "1,16"]
    closed = _json(argv, capsys)
    assert closed["arrivals"] == {"frontier": "closed", "targets": "closed", "devices_for_rate": "poisson"}
    assert {p["arrivals"] for p in closed["expected"]["frontier"]} == {"closed"}
    fixed = closed["fixed_costs"]
    assert fixed["expected"]["request_overhead_s"] == pytest.approx(8.2e-3)
    assert "tt-inference-server#340" in fixed["expected"]["source"]
    assert fixed["bound"]["request_overhead_s"] == 0.0
    assert [p["request_overhead_s"] for p in closed["bound"]["frontier"]] == [0.0, 0.0]
    s = scenario("h100-sxm", "llama-3.1-8b", prompt=1024, output=256)
    s = s.__class__(**{**{f: getattr(s, f) for f in s.__dataclass_fields__}, "engine": "vllm"})
    mix = ServingMix(prompt_tokens=1024, output_tokens=256)
    want = frontier(s, mix, [1, 16], options=ServingOptions()).points
    assert [p["ttft_s"] for p in closed["expected"]["frontier"]] == pytest.approx([p.ttft_s for p in want])
    poisson = _json([*argv, "--arrivals", "poisson"], capsys)
    assert poisson["arrivals"]["frontier"] == "poisson"
    assert {p["arrivals"] for p in poisson["expected"]["frontier"]} == {"poisson"}
    want = frontier(s, mix, [1, 16], options=ServingOptions(arrivals="poisson")).points
    assert [p["ttft_s"] for p in poisson["expected"]["frontier"]] == pytest.approx([p.ttft_s for p in want])
    code, out, _err = run_cli(argv, capsys)
    assert code == 0
    assert "arrivals: frontier and targets closed loop" in out
    assert "fixed path per request (in TTFT): 8.20 ms under expected" in out
    code, out, _err = run_cli([*argv, "--arrivals", "poisson", "--format", "markdown"], capsys)
    assert code == 0 and "arrivals: frontier and targets Poisson arrivals" in out


def test_plan_refuses_an_unknown_arrival_model(capsys):
    code, _out, err = run_cli([*BASE, "--hardware", "h100-sxm", "--arrivals", "bursty"], capsys)
    assert code == 2 and "--arrivals" in err and "bursty" in err
