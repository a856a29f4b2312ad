"""What polling an engine's /metrics costs the explorer's main thread: the budget is < 1 ms of main-thread time per
second (one poll a second).

Three measurements, side by side:

1. **polling thread, per answer** (not the main thread: for scale): ``parse_metrics`` + ``LiveWindow.add`` on a
   recorded vLLM answer with two engines' label sets (every documented metric, the full bucket sets).
2. **main thread, per poll result, pure**: what the Serving view does with a status (``verdict``, ``live_rows``,
   ``trail_points`` over a full minute's trail), the expected frontier already computed on the polling thread
   (``EnginePoller(annotate=...)``), and, for comparison, the same with the frontier computed on the main thread
   (what the annotation saves).
3. **main thread, per poll result, in a Textual app**: a headless app whose ``Static`` shows the verdict as ``Text``,
   fed by a real :class:`EnginePoller` thread polling a real HTTP server on 127.0.0.1 through ``post_message``. The
   main thread's CPU time (``time.thread_time``) over a run with polls minus an idle run of the same length, / polls.

    .venv/bin/python benchmarks/bench_engine_poll.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import http.server
import json
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from roofline.models.scenario import Scenario  # noqa: E402
from roofline.models.serving.inputs import ServingMix  # noqa: E402
from roofline.presets import load_hardware, load_model  # noqa: E402
from roofline.tui.probe.engine_metrics import (  # noqa: E402
    EngineMonitor,
    EnginePoller,
    EngineStatus,
    LiveWindow,
    parse_metrics,
)
from roofline.tui.views.live_engine import (  # noqa: E402
    ExpectedMemo,
    expected_tokens_per_s_per_device,
    live_concurrency,
    live_rows,
    trail_points,
    verdict,
)
from tests.probe.test_engine_metrics import recording  # noqa: E402 - the recorded answers the tests replay


def two_engines(step: int) -> str:
    """A vLLM answer with two engine label sets (data parallel 2): twice every series."""
    one = recording("vllm", step)
    return one + one.replace('engine="0"', 'engine="1"').replace("# HELP", "# HELP_").replace(
        "# TYPE", "# TYPE_").replace("# HELP_", "#").replace("# TYPE_", "#")


def per_call_ms(fn, repeats: int) -> float:
    runs = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(repeats):
            fn()
        runs.append((time.perf_counter() - started) / repeats * 1e3)
    return statistics.median(runs)


def status_of(window: LiveWindow, annotation: float | None) -> EngineStatus:
    point = window.trail[-1]
    return EngineStatus(endpoint="http://127.0.0.1:8000", engine="vLLM", model="meta-llama/Llama-3.1-8B-Instruct",
                        point=point, trail=tuple(window.trail), answered_at_s=point.time_s,
                        polled_at_s=point.time_s, annotation=annotation)


def pure_costs(repeats: int) -> dict[str, float]:
    texts = [two_engines(step) for step in range(62)]
    window = LiveWindow()
    for i, text in enumerate(texts[:61]):
        window.add(parse_metrics(text, float(i)))
    clock = {"t": 61.0}

    def poll_thread_work() -> None:
        clock["t"] += 1.0
        window.add(parse_metrics(texts[61], clock["t"]))

    thread_ms = per_call_ms(poll_thread_work, max(repeats // 10, 20))
    scenario = Scenario(hardware=load_hardware("h100-sxm"), model=load_model("llama-3.1-8b"))
    mix = ServingMix(prompt_tokens=1024, output_tokens=256)
    window = LiveWindow()
    for i, text in enumerate(texts[:61]):
        window.add(parse_metrics(text, float(i)))
    status = status_of(window, ExpectedMemo()(scenario, mix, live_concurrency(status_of(window, None))))

    def main_thread_work() -> None:
        verdict(status, devices=1, itl_target_s=0.05, expected_per_device=status.annotation,
                now_s=status.polled_at_s)
        live_rows(status, devices=1, now_s=status.polled_at_s)
        trail_points(status, devices=1, now_s=status.polled_at_s)

    def main_thread_with_frontier() -> None:
        expected = expected_tokens_per_s_per_device(scenario, mix, live_concurrency(status))
        verdict(status, devices=1, itl_target_s=0.05, expected_per_device=expected, now_s=status.polled_at_s)
        live_rows(status, devices=1, now_s=status.polled_at_s)
        trail_points(status, devices=1, now_s=status.polled_at_s)

    return {"poll_thread_parse_window_ms": thread_ms,
            "main_thread_view_ms": per_call_ms(main_thread_work, repeats),
            "main_thread_view_with_frontier_ms": per_call_ms(main_thread_with_frontier, max(repeats // 20, 10)),
            "answer_bytes": float(len(texts[61].encode()))}


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/metrics":
            self.server.step += 1  # type: ignore[attr-defined]
            body = two_engines(self.server.step).encode()  # type: ignore[attr-defined]
            kind = "text/plain; version=0.0.4"
        else:
            body = json.dumps({"data": [{"id": "meta-llama/Llama-3.1-8B-Instruct"}]}).encode()
            kind = "application/json"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


async def app_cost(seconds: float, interval_s: float, *, layout: bool, one_widget: bool = False,
                   paint: bool = True) -> dict[str, float]:
    """Main-thread CPU per poll result in a headless Textual app (see the module docstring). ``layout=False``: the
    panel has a fixed size (CSS heights) and ``Static.update(..., layout=False)`` repaints without a layout pass."""
    from rich.text import Text
    from textual.app import App, ComposeResult
    from textual.message import Message
    from textual.widgets import Static

    scenario = Scenario(hardware=load_hardware("h100-sxm"), model=load_model("llama-3.1-8b"))
    mix = ServingMix(prompt_tokens=1024, output_tokens=256)
    memo = ExpectedMemo()

    class EngineUpdate(Message):
        def __init__(self, status: EngineStatus) -> None:
            super().__init__()
            self.status = status

    class LiveApp(App):
        CSS = "#verdict { height: 1; } #rows { height: 11; }"
        received = 0

        def compose(self) -> ComposeResult:
            yield Static(id="verdict")
            yield Static(id="rows")

        handler_s = 0.0

        def on_engine_update(self, message) -> None:  # the handler the explorer's view would have
            started = time.perf_counter()
            self._handle(message.status)
            self.handler_s += time.perf_counter() - started

        def _handle(self, status) -> None:
            self.received += 1
            line = verdict(status, devices=1, itl_target_s=0.05, expected_per_device=status.annotation,
                           now_s=time.monotonic())
            rows = "\n".join(f"{r.label}: {r.value}" for r in live_rows(status, devices=1, now_s=time.monotonic()))
            if not paint:  # the poll result handled (message, verdict, table, trail) but nothing new shown
                return
            if one_widget:  # the verdict and the table in one Static: one refresh per poll
                self.query_one("#rows", Static).update(Text(f"{line}\n{rows}"), layout=layout)
            else:
                self.query_one("#verdict", Static).update(Text(line), layout=layout)
                self.query_one("#rows", Static).update(Text(rows), layout=layout)
            trail_points(status, devices=1, now_s=time.monotonic())

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.step = 0  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    app = LiveApp()
    try:
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.pause()
            idle_start = time.thread_time()
            await asyncio.sleep(seconds)
            idle_cpu = time.thread_time() - idle_start
            poller = EnginePoller(EngineMonitor(url), lambda st: app.post_message(EngineUpdate(st)),
                                  interval_s=interval_s,
                                  annotate=lambda st: memo(scenario, mix, live_concurrency(st)))
            busy_start = time.thread_time()
            poller.start()
            await asyncio.sleep(seconds)
            poller.stop(join_s=5)
            await pilot.pause()
            busy_cpu = time.thread_time() - busy_start
            received = app.received
            handler_ms = app.handler_s * 1e3
    finally:
        server.shutdown()
        server.server_close()
    return {"polls": float(received), "idle_main_cpu_ms": idle_cpu * 1e3, "busy_main_cpu_ms": busy_cpu * 1e3,
            "main_thread_ms_per_poll": (busy_cpu - idle_cpu) * 1e3 / max(received, 1),
            "handler_ms_per_poll": handler_ms / max(received, 1)}


async def explorer_cost(seconds: float, interval_s: float, view_key: str) -> dict[str, float]:
    """Main-thread CPU per poll in the explorer itself (``roofline --engine-url``), on the Serving view (the chart
    redrawn with the moved point each poll) or on another view (the line only): polls counted at the server."""
    from roofline.tui.app import RooflineApp
    from roofline.tui.explorer.engine_line import EngineLine
    from roofline.tui.inputs.form import ScenarioForm

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.step = 0  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    EngineLine.interval_s = interval_s
    form = ScenarioForm(serving=True, concurrency=48)
    results = {}
    try:
        for label, url in (("idle", None), ("polling", f"http://127.0.0.1:{server.server_address[1]}")):
            app = RooflineApp(form, engine_url=url)
            async with app.run_test(size=(160, 50)) as pilot:
                await pilot.press("8")  # the Serving view (its line starts polling)
                await pilot.pause(1.0)
                await pilot.press(view_key)
                await pilot.pause(0.5)
                before_polls = server.step  # type: ignore[attr-defined]
                started = time.thread_time()
                await asyncio.sleep(seconds)
                results[label] = (time.thread_time() - started, server.step - before_polls)  # type: ignore
    finally:
        server.shutdown()
        server.server_close()
    (idle_cpu, _), (busy_cpu, polls) = results["idle"], results["polling"]
    return {"polls": float(polls), "main_thread_ms_per_poll": (busy_cpu - idle_cpu) * 1e3 / max(polls, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    pure = pure_costs(200 if args.quick else 1000)
    # polls 20 times a second so that a few seconds give enough results; the cost per result is what is budgeted
    seconds = 2.0 if args.quick else 5.0
    with_layout = asyncio.run(app_cost(seconds, 0.05, layout=True))
    two = asyncio.run(app_cost(seconds, 0.05, layout=False))
    one = asyncio.run(app_cost(seconds, 0.05, layout=False, one_widget=True))
    app = asyncio.run(app_cost(seconds, 0.05, layout=False, paint=False))
    on_serving = asyncio.run(explorer_cost(seconds, 0.05, "8"))
    elsewhere = asyncio.run(explorer_cost(seconds, 0.05, "1"))
    figures = {**pure, **{f"explorer_serving_{k}": v for k, v in on_serving.items()},
               **{f"explorer_roofline_{k}": v for k, v in elsewhere.items()},
               **{f"layout_{k}": v for k, v in with_layout.items()},
               **{f"two_widgets_{k}": v for k, v in two.items()}, **{f"one_widget_{k}": v for k, v in one.items()},
               **app}
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"answer: {pure['answer_bytes'] / 1024:.1f} KiB (vLLM, two engines' label sets)")
    print(f"polling thread, parse + window per answer:            {pure['poll_thread_parse_window_ms']:7.3f} ms")
    print(f"main thread, view text per result (frontier annotated): {pure['main_thread_view_ms']:7.3f} ms")
    print(f"main thread, view text with the frontier on it:         "
          f"{pure['main_thread_view_with_frontier_ms']:7.3f} ms")
    print(f"Textual app, per poll result, message + handler, no paint: {app['main_thread_ms_per_poll']:7.3f} ms "
          f"(the handler itself {app['handler_ms_per_poll']:.3f} ms; {app['polls']:.0f} polls)")
    for label, run in (("two Statics updated, with layout", with_layout), ("two Statics, fixed size", two),
                       ("one Static, fixed size", one)):
        print(f"Textual app, per poll result, painted, {label + ':':34} {run['main_thread_ms_per_poll']:7.3f} ms "
              f"({run['polls']:.0f} polls)")
    print("explorer (roofline --engine-url), Serving view shown, per poll: "
          f"{on_serving['main_thread_ms_per_poll']:7.3f} ms "
          f"({on_serving['polls']:.0f} polls: the line and the chart with the moved point)")
    print(f"explorer, Roofline view shown (the line only, hidden chart not drawn): "
          f"{elsewhere['main_thread_ms_per_poll']:7.3f} ms ({elsewhere['polls']:.0f} polls)")
    budget = app["main_thread_ms_per_poll"] * 1.0  # one poll a second
    print(f"=> polling: {budget:.3f} ms of main-thread time per second at one poll a second (budget < 1 ms): "
          f"{'met' if budget < 1.0 else 'MISSED'}; showing the new numbers adds the paint above")
    return 0


if __name__ == "__main__":
    sys.exit(main())
