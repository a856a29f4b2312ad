"""The bound-to-expected gap, term by term."""

from __future__ import annotations

import pytest

from roofline.models.gap import decode_gap
from roofline.models.inference import estimate
from roofline.tui.app import RooflineApp
from roofline.tui.inputs.form import ScenarioForm
from tests.conftest import scenario


@pytest.mark.parametrize("kwargs", [{"tp": 4, "weights": "int4", "batch": 8}, {"batch": 1}, {"batch": 64, "pp": 2}])
def test_terms_add_up_to_the_gap(kwargs):
    s = scenario("h100-sxm", "llama-2-70b", prompt=512, output=129, **kwargs)
    bound_step, terms, expected_step = decode_gap(s)
    assert bound_step == pytest.approx(estimate(s, "bound").decode.step_time_s)
    assert expected_step == pytest.approx(estimate(s, "expected").decode.step_time_s)
    assert bound_step + sum(t.seconds for t in terms) == pytest.approx(expected_step)
    assert all(t.seconds >= 0 for t in terms)


def test_no_tp_means_no_collective_term():
    """One device: no all-reduce, so the collectives term is zero; bf16 weights: no dequantisation."""
    _, terms, _ = decode_gap(scenario("h100-sxm", "llama-3.1-8b"))
    by_label = {t.label: t.seconds for t in terms}
    assert by_label["collectives"] == 0 and by_label["weight-only dequantisation"] == 0
    assert by_label["kernel fixed cost"] > 0


async def test_g_explains_the_gap_in_the_explorer():
    app = RooflineApp(ScenarioForm(tp=2))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("g")
        await pilot.pause()
        assert type(app.screen).__name__ == "GapScreen"
        text = str(app.screen.query_one("#gap-text").render())
        assert "kernel fixed cost" in text and "= expected" in text
        # the assumptions behind expected, with their sources, below the terms
        assert "assumptions of expected" in text and "attention_kernel_efficiency" in text
        assert "collective_latency_s" in text and "sglang" in text
        await pilot.press("escape")
        await pilot.pause()
        assert type(app.screen).__name__ != "GapScreen"


def test_report_lists_every_assumption_of_expected(capsys):
    """The JSON and text reports name each parameter expected used, with its value and source."""
    import json

    from roofline.tui.cli.main import main

    args = ["report", "--hardware", "h100-sxm", "--model", "llama-2-70b", "--tp", "4", "--pp", "2",
            "--weights", "int4", "--no-ops"]
    assert main([*args, "--format", "json"]) == 0
    names = {a["name"]: a for a in json.loads(capsys.readouterr().out)["assumptions"]}
    assert names["compute_memory_overlap"]["value"] == 0.0
    assert names["attention_kernel_efficiency"]["value"] == pytest.approx(0.7)
    assert names["kernel_overhead_s"]["value"] == pytest.approx(4e-6)
    assert "weight_only_stream_efficiency (int4)" in names and "pipeline_schedule" in names
    assert all(a["source"] for a in names.values())
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "assumptions of expected" in text and "compute/memory overlap" in text
