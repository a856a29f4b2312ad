"""The live engine in the explorer (Pilot): a real HTTP server on 127.0.0.1 replays a vLLM engine whose load ramps
up; the Serving view's line gives the verdict and the live point moves along the frontier, at 160x50 and 80x24;
``m`` stops and restarts it; ``--measured`` runs are drawn beside the frontier."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from roofline.presets.bench_files import read_bench_file
from roofline.tui.app import RooflineApp
from roofline.tui.explorer.charts import ServingChart
from roofline.tui.explorer.engine_line import EngineLine
from tests.probe.test_engine_metrics import recording
from tests.probe.test_engine_metrics_http import MODELS, PROM, serving, url_of

DATA = Path(__file__).parents[1] / "data" / "bench"


def ramping() -> tuple[dict, object]:
    """Each answer one step further: running 8, 12, 16, ... and output tokens growing with it."""
    state = {"step": 0, "tokens": 0}

    def route(path: str):
        if path != "/metrics":
            return MODELS
        state["step"] += 1
        running = 8 + 4 * state["step"]
        state["tokens"] += 60 * running
        text = recording("vllm", state["step"], running=running)
        lines = [line if not line.startswith("vllm:generation_tokens_total{") else
                 f"{line.rsplit(' ', 1)[0]} {float(state['tokens'])!r}" for line in text.splitlines()]
        return 200, PROM, ("\n".join(lines) + "\n").encode()

    return state, route


async def wait_for(pilot, condition, timeout_s: float = 20.0) -> None:
    for _ in range(int(timeout_s / 0.05)):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError("condition not met in time")


@pytest.mark.slow
@pytest.mark.parametrize("size", [(160, 50), (80, 24)])
async def test_live_point_moves_along_the_frontier(monkeypatch, size):
    monkeypatch.setattr(EngineLine, "interval_s", 0.05)
    _, route = ramping()
    with serving(route) as server:
        app = RooflineApp(engine_url=url_of(server))
        async with app.run_test(size=size) as pilot:
            await pilot.press("8")
            line = app.screen.query_one(EngineLine)
            chart = app.screen.query_one(ServingChart)
            await wait_for(pilot, lambda: line.status is not None and line.status.point is not None
                           and line.status.point.output_tokens_per_s is not None
                           and chart._last is not None and chart._last[0].engine_xy is not None)
            first = chart._last[0].engine_xy
            await wait_for(pilot, lambda: chart._last[0].engine_xy is not None
                           and len(chart._last[0].engine_xy[0]) >= len(first[0]) + 5)
            later = chart._last[0].engine_xy
            assert later[0][-1] > first[0][-1]  # more tokens/s per device as the load ramps
            text = str(line.render())
            assert text.startswith("C=") and "running" in text and "ITL" in text and "target" in text
            assert line.display
            await pilot.press("m")  # stop
            await pilot.pause(0.2)
            assert not line.on and not line.display
            await pilot.press("m")  # again
            await wait_for(pilot, lambda: line.on and line.status is not None)


@pytest.mark.slow
async def test_a_dead_engine_reads_no_answer_since(monkeypatch):
    """An engine that answers and then goes away: the line turns to 'no answer since N s', the trail leaves."""
    monkeypatch.setattr(EngineLine, "interval_s", 0.05)
    monkeypatch.setattr("roofline.tui.views.live_engine.STALE_AFTER_S", 0.3)
    _, route = ramping()
    server_cm = serving(route)
    server = server_cm.__enter__()
    app = RooflineApp(engine_url=url_of(server))
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("8")
        line = app.screen.query_one(EngineLine)
        await wait_for(pilot, lambda: line.status is not None and line.status.answered_at_s is not None)
        server_cm.__exit__(None, None, None)
        await wait_for(pilot, lambda: "no answer since" in str(line.render()))
        await asyncio.sleep(0)


@pytest.mark.slow
async def test_measured_runs_beside_the_frontier():
    runs = tuple(read_bench_file(DATA / "vllm-bench-serve-append.jsonl"))
    app = RooflineApp(measured_runs=runs)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("8")
        chart = app.screen.query_one(ServingChart)
        await wait_for(pilot, lambda: chart._last is not None and chart._last[0].measured_xy is not None)
        xs, _ = chart._last[0].measured_xy
        assert len(xs) == 2 and xs[0] < xs[1]  # concurrency 1, then 64: more tokens/s per device


@pytest.mark.slow
async def test_palette_offers_the_engines_model(monkeypatch):
    """The engine serves Llama-3.1-70B while the scenario is 8B: the line says so, and the palette offers to switch."""
    import json

    from roofline.tui.explorer.engine_line import engine_commands

    monkeypatch.setattr(EngineLine, "interval_s", 0.05)
    _, metrics = ramping()
    seventy = (200, {"Content-Type": "application/json"},
               json.dumps({"data": [{"id": "meta-llama/Llama-3.1-70B-Instruct"}]}).encode())
    with serving(lambda path: seventy if path == "/v1/models" else metrics(path)) as server:
        app = RooflineApp(engine_url=url_of(server))
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.press("8")
            line = app.screen.query_one(EngineLine)
            await wait_for(pilot, lambda: "the engine serves llama-3.1-70b" in str(line.render()))
            titles = {title: callback for title, callback, _ in engine_commands(app.screen)}
            assert "live engine: start or stop polling (--engine-url)" in titles
            titles["model: the engine's, llama-3.1-70b"]()
            await pilot.pause()
            assert app.screen.form.model_ref == "llama-3.1-70b"
