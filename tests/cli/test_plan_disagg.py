"""``roofline plan --disagg`` (tui/cli/plan_disagg.py, tui/views/plan_disagg_text.py): the CLI contract.

The JSON carries what models/serving/disagg.py computes when called directly; text names both layouts per device;
every misuse exits 2 with one line naming the flag.
"""

from __future__ import annotations

import json

import pytest

from roofline.models.scenario import Scenario, released_precisions
from roofline.models.serving import ServingMix
from roofline.models.serving.disagg import compare_with_aggregated
from roofline.presets import load_hardware, load_model
from tests.conftest import run_cli

ASK = ["plan", "--model", "deepseek-v3", "--hardware", "h200,gb200", "--disagg", "--rate", "50", "--itl-ms", "50",
       "--ttft-ms", "2000", "--prompt", "2000", "--output", "500"]


@pytest.fixture(autouse=True)
def _no_user_presets(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path / "none"))


@pytest.fixture(scope="module")
def plan_json():
    import contextlib
    import io

    from roofline.tui.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*ASK, "--format", "json"]) == 0
    return json.loads(out.getvalue())


def test_json_carries_pools_parallelism_transfer_and_winner(plan_json):
    assert plan_json["schema_version"] == 2
    assert [d["hardware"] for d in plan_json["devices"]] == ["h200", "gb200"]
    for device in plan_json["devices"]:
        assert {"expected", "bound", "tp", "memory"} <= set(device)  # the existing fields stay
        entry = device["disaggregated"]
        for name in ("expected", "bound"):
            e = entry[name]
            assert e["winner"] in ("aggregated", "disaggregated", "tie")
            d = e["disaggregated"]
            assert d["devices"] == d["prefill"]["devices"] + d["decode"]["devices"]
            for pool in ("prefill", "decode"):
                assert d[pool]["kind"] in ("tp", "ep") and d[pool]["instances"] >= 1
                assert d[pool]["devices"] == d[pool]["instances"] * d[pool]["devices_per_instance"]
            assert d["kv_transfer"]["time_s"] > 0 and d["ttft_s"] <= 2.0 and d["itl_s"] <= 0.05
            assert d["ratio"] == f"{d['prefill']['instances']}P{d['decode']['instances']}D"
            agg = e["aggregated"]
            assert agg["devices"] == agg["devices_per_instance"] * agg["replicas"] and agg["kind"] in ("tp", "ep")
            assert e["tokens_per_device_ratio"] == pytest.approx(e["aggregated"]["devices"] / d["devices"])
    h200, gb200 = (d["disaggregated"] for d in plan_json["devices"])
    assert h200["devices_per_node"] == 8 and gb200["devices_per_node"] == 72
    assert h200["scale_out"]["bw_unidirectional_bytes_per_s"] == 50e9


def test_json_matches_the_model_called_directly(plan_json):
    model = load_model("deepseek-v3")
    s = Scenario(hardware=load_hardware("h200"), model=model, precisions=released_precisions(model))
    c = compare_with_aggregated(s, ServingMix(prompt_tokens=2000, output_tokens=500), 50.0, itl_s=0.05, ttft_s=2.0)
    d = plan_json["devices"][0]["disaggregated"]["expected"]["disaggregated"]
    assert d["devices"] == c.disaggregated.devices and d["ratio"] == c.disaggregated.ratio
    assert d["usd_per_hour"] == pytest.approx(c.disaggregated.usd_per_hour)
    assert d["kv_transfer"]["time_s"] == pytest.approx(c.disaggregated.transfer.time_s)


def test_text_shows_both_layouts_per_device(capsys):
    code, out, err = run_cli(ASK, capsys)
    assert code == 0, err
    section = out[out.index("Aggregated vs disaggregated"):]
    for hw in ("h200:", "gb200:"):
        assert hw in section
    assert section.count("aggregated:    ") == 2 and section.count("disaggregated: ") == 2
    assert "/Mtok" in section and "J/tok" in section and "KV transfer" in section
    assert "tokens per device here" in section or "loses here" in section or "same devices" in section


def test_markdown_has_a_section(capsys):
    code, out, err = run_cli([*ASK, "--format", "markdown"], capsys)
    assert code == 0, err
    assert "## Aggregated vs disaggregated" in out and "### h200" in out


@pytest.mark.parametrize(("extra", "fragment"), [
    (["--ep", "32"], "--ep: applies to the disaggregated search"),
    (["--fabric", "ib-xdr"], "--fabric: applies to the disaggregated search"),
])
def test_search_flags_need_disagg(capsys, extra, fragment):
    argv = ["plan", "--model", "deepseek-v3", "--hardware", "h200", "--rate", "5", "--itl-ms", "50",
            "--ttft-ms", "2000", *extra]
    code, _out, err = run_cli(argv, capsys)
    assert code == 2 and fragment in err and err.count("\n") == 1


@pytest.mark.parametrize(("argv", "fragment"), [
    (["plan", "--model", "deepseek-v3", "--hardware", "h200", "--disagg", "--itl-ms", "50", "--ttft-ms", "2000"],
     "--disagg: needs --rate"),
    (["plan", "--model", "llama-3.1-8b", "--hardware", "h200", "--disagg", "--rate", "5", "--itl-ms", "50",
      "--ttft-ms", "2000", "--ep", "8"], "--ep: llama-3.1-8b has no routed experts"),
    (["plan", "--model", "deepseek-v3", "--hardware", "h200", "--disagg", "--rate", "5", "--itl-ms", "50",
      "--ttft-ms", "2000", "--ep-imbalance", "0.5"], "--ep-imbalance"),
    (["plan", "--model", "deepseek-v3", "--hardware", "h200", "--disagg", "--rate", "5", "--itl-ms", "50",
      "--ttft-ms", "2000", "--fabric", "ib-qdr"], "--fabric"),
])
def test_bad_disagg_requests_exit_2_in_one_line(capsys, argv, fragment):
    code, _out, err = run_cli(argv, capsys)
    assert code == 2 and fragment in err
    assert len([line for line in err.splitlines() if line.strip()]) <= 2  # argparse: usage line + error line


def test_ep_and_fabric_narrow_the_search(capsys):
    argv = ["plan", "--model", "deepseek-v3", "--hardware", "h200", "--disagg", "--rate", "20", "--itl-ms", "50",
            "--ttft-ms", "2000", "--ep", "16", "--fabric", "ib-xdr", "--format", "json"]
    code, out, err = run_cli(argv, capsys)
    assert code == 0, err
    entry = json.loads(out)["disaggregated"]
    d = entry["expected"]["disaggregated"]
    assert d["prefill"]["layout"].startswith("EP16") and d["decode"]["layout"].startswith("EP16")
    assert entry["scale_out"]["bw_unidirectional_bytes_per_s"] == 100e9


def test_redundant_experts_reach_every_ep_pool(capsys):
    """EPLB-style redundant slots: 256 + 32 = 288 over EP32 = 9 per rank, on both pools."""
    argv = ["plan", "--model", "deepseek-v3", "--hardware", "h200", "--disagg", "--rate", "10", "--itl-ms", "50",
            "--ttft-ms", "2000", "--ep", "32", "--redundant-experts", "32", "--format", "json"]
    code, out, err = run_cli(argv, capsys)
    assert code == 0, err
    d = json.loads(out)["disaggregated"]["expected"]["disaggregated"]
    assert d["prefill"]["redundant_experts"] == 32 and d["decode"]["redundant_experts"] == 32
    code, _out, err = run_cli(argv[:-4] + ["--redundant-experts", "32"], capsys)
    assert code == 0
    code, _out, err = run_cli([a for a in argv[:-2] if a != "--disagg"], capsys)
    assert code == 2 and "applies to the disaggregated search" in err
