"""`l` in the explorer: live counters (a stand-in dcgmi) become a moving point on the roofline."""

from __future__ import annotations

import asyncio
import math

from textual.widgets import Static

from roofline.tui.app import RooflineApp
from roofline.tui.explorer.charts import RooflineChart
from roofline.tui.inputs.form import ScenarioForm
from tests.probe.test_live import install_fake_dcgmi


async def _wait_for(pilot, condition, timeout_s: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not condition():
        assert loop.time() < deadline, "timed out"
        await pilot.pause(0.05)


def _status(app: RooflineApp) -> str:
    return str(app.query_one("#live-status", Static).render())


async def test_live_samples_move_a_point_with_a_trail(tmp_path, monkeypatch):
    monkeypatch.delenv("ROOFLINE_NO_DETECT", raising=False)
    install_fake_dcgmi(tmp_path, monkeypatch, "dmon_single_gpu.txt", hang=True)
    app = RooflineApp(ScenarioForm())  # H100 SXM: 3.35 TB/s, bf16 989.4 TFLOP/s
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("l")
        # 16 rows with numbers (the first is N/A); the stream ends ... 0.688/0.046, then an idle 0/0 row
        await _wait_for(pilot, lambda: app.explorer.live_trail is not None and len(app.explorer.live_trail) == 10
                        and app.explorer.live_trail.latest.achieved_bytes_per_s == 0.0
                        and math.isclose(app.explorer.live_trail.points[-2].achieved_bytes_per_s, 0.688 * 3.35e12))
        chart = app.query_one(RooflineChart)
        live = chart._last[-1]
        assert len(live) == 9  # the idle row has no place on a log-log chart
        before = app.explorer.live_trail.points[-2]
        assert live[-1] == (math.log10(before.arithmetic_intensity_flop_per_byte),
                            math.log10(before.achieved_flops_per_s))
        assert _status(app).startswith("live GPU 0 via DCGM (dcgmi dmon): DRAM 0% x 3.35 TB/s")
        await pilot.press("l")  # off: the point goes, the worker stops
        await app.workers.wait_for_complete()
        assert app.explorer.live_trail is None
        assert chart._last[-1] == []


async def test_first_sample_arithmetic_is_activity_times_spec(tmp_path, monkeypatch):
    monkeypatch.delenv("ROOFLINE_NO_DETECT", raising=False)
    install_fake_dcgmi(tmp_path, monkeypatch, None, hang=True,
                       extra_lines=("#Entity    DRAMA        TENSO", "ID", "GPU 0      0.600        0.100"))
    app = RooflineApp(ScenarioForm())
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("l")
        await _wait_for(pilot, lambda: app.explorer.live_trail is not None and len(app.explorer.live_trail) >= 1)
        point = app.explorer.live_trail.latest
        # H100 SXM spec: 0.6 x 3.35e12 B/s = 2.01e12 B/s; 0.1 x 989.4e12 FLOP/s = 98.94e12 FLOP/s
        assert math.isclose(point.achieved_bytes_per_s, 2.01e12)
        assert math.isclose(point.achieved_flops_per_s, 98.94e12)
        assert math.isclose(point.arithmetic_intensity_flop_per_byte, 98.94e12 / 2.01e12)
        assert "2.01 TB/s" in _status(app)
        await pilot.press("l")


async def test_no_counters_says_why(monkeypatch, tmp_path):
    monkeypatch.delenv("ROOFLINE_NO_DETECT", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no dcgmi
    monkeypatch.setitem(__import__("sys").modules, "pynvml", None)  # no NVML
    app = RooflineApp(ScenarioForm())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("l")
        await _wait_for(pilot, lambda: "unavailable" in _status(app))
        assert "dcgmi not on PATH" in _status(app) and "NVML (nvidia-ml-py) not installed" in _status(app)
        assert app.explorer.live_trail is None
        await pilot.press("l")
        assert _status(app) == ""
