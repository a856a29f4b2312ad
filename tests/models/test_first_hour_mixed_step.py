"""Issue 30 item 9: every frontier point carries the idle-core % and the bandwidth utilisation (MBU) of its mean
mixed step, as DESIGN.md defines them: idle = 100 x (1 - useful FLOP/s / spec peak), MBU = bytes/s / spec bandwidth."""

from __future__ import annotations

import math

import pytest

from roofline.models.estimate import ceilings, pass_totals
from roofline.models.serving import ServingMix, frontier, mixed_step_ops
from tests.conftest import scenario


def test_a_points_idle_cores_and_mbu_are_those_of_its_mean_step():
    """Llama-3.1-8B on one H100, ``bound``, closed loop of C = 16, P = 1000, G = 200: all 16 decode (the budget of
    8192 tokens holds them), and the mean step carries D = 16 decodes and D/G = 0.08 prompts of prefill at the mean
    context P + G/2 = 1100. Its FLOPs F and bytes M over its time t: idle = 100 (1 - F / t / 989.4e12),
    MBU = 100 M / t / 3.35e12; under ``bound`` each op takes max(compute, memory), so t >= M / bandwidth (MBU <= 100)
    and t >= F / peak (idle >= 0)."""
    s = scenario("h100-sxm", "llama-3.1-8b")
    mix = ServingMix(prompt_tokens=1000, output_tokens=200)
    point = frontier(s, mix, [16], "bound").points[0]
    assert point.decoding_requests == 16
    c = ceilings(s.hardware, s.precisions.compute_dtype, "bound")
    step = pass_totals(mixed_step_ops(s, decode_requests=16.0, context_tokens=1100.0, prefill_prompts=16 / 200,
                                      prompt_tokens=1000), c)
    assert point.step_time_s == pytest.approx(step.time_s, rel=1e-9)
    assert c.spec_matmul_flops_per_s == pytest.approx(989.4e12) and c.spec_mem_bw_bytes_per_s == pytest.approx(3.35e12)
    assert point.idle_core_pct == pytest.approx(100 * (1 - step.flops / step.time_s / 989.4e12), rel=1e-9)
    assert point.mbu_pct == pytest.approx(100 * step.memory_bytes / step.time_s / 3.35e12, rel=1e-9)
    assert 0 <= point.idle_core_pct <= 100 and 0 < point.mbu_pct <= 100 + 1e-9


@pytest.mark.parametrize("arrivals", ["closed", "poisson"])
@pytest.mark.parametrize("estimate_name", ["bound", "expected"])
def test_every_point_has_finite_utilisation_in_range(arrivals, estimate_name):
    """Over the whole frontier (both arrival models, both estimates) the figures are finite, idle in 0..100 and MBU
    in 0..100: ``expected`` runs slower than the spec ceilings, so it only lowers the utilisation."""
    from roofline.models.serving import ServingOptions

    s = scenario("h100-sxm", "llama-3.1-70b", tp=4)
    points = frontier(s, ServingMix(prompt_tokens=2000, output_tokens=300), None, estimate_name,
                      ServingOptions(arrivals=arrivals)).points
    assert points
    for p in points:
        assert math.isfinite(p.idle_core_pct) and math.isfinite(p.mbu_pct)
        assert 0 <= p.idle_core_pct <= 100 and 0 < p.mbu_pct <= 100 + 1e-9


def test_plan_puts_idle_cores_and_mbu_on_every_frontier_point(capsys, tmp_path, monkeypatch):
    """``plan``'s JSON carries both figures on every point, equal to the model's; its text table has the columns."""
    import json

    from roofline.tui.cli.main import main

    monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path / "none"))
    argv = ["plan", "--model", "llama-3.1-8b", "--prompt", "1000", "--output", "200", "--concurrency", "1,16"]
    assert main([*argv, "--format", "json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    s = scenario("h100-sxm", "llama-3.1-8b")
    for name in ("expected", "bound"):
        want = frontier(s, ServingMix(prompt_tokens=1000, output_tokens=200), [1, 16], name).points
        got = plan[name]["frontier"]
        assert [(p["idle_core_pct"], p["mbu_pct"]) for p in got] == pytest.approx(
            [(w.idle_core_pct, w.mbu_pct) for w in want], rel=1e-9)
    assert main(argv) == 0
    text = capsys.readouterr().out
    header = next(line for line in text.splitlines() if line.lstrip().startswith("concurrency"))
    assert "idle cores %" in header and "MBU %" in header
    row = next(line for line in text.splitlines() if line.split()[:1] == ["16"])
    at_16 = plan["expected"]["frontier"][1]  # the text's table is the expected frontier
    assert f"{at_16['idle_core_pct']:.1f}" in row and f"{at_16['mbu_pct']:.1f}" in row
