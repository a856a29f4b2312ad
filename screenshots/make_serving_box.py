"""The README's "On the serving box" screenshot: the explorer's Serving view with a replayed vLLM engine's live point
(a real HTTP server on 127.0.0.1 answering the recorded metrics of tests/probe/test_engine_metrics.py) and the two
runs of tests/data/bench/vllm-bench-serve-append.jsonl drawn with ``--measured``.

Run: .venv/bin/python screenshots/make_serving_box.py
"""

from __future__ import annotations

import asyncio
import http.server
import json
import sys
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from roofline.presets.bench_files import read_bench_file  # noqa: E402
from roofline.tui.app import RooflineApp  # noqa: E402
from roofline.tui.explorer.engine_line import EngineLine  # noqa: E402
from roofline.tui.inputs.form import ScenarioForm  # noqa: E402
from tests.probe.test_engine_metrics import MODEL, recording  # noqa: E402

SIZE = (140, 44)
INTERVAL_S = 0.1  # ten answers a second, each one "second" of the recording: the window fills in about 1 s


class _Engine(http.server.BaseHTTPRequestHandler):
    step = 0

    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/metrics":
            _Engine.step += 1
            # 32 running, 260 output tokens and as many 11 ms gaps per answer (2,600 tok/s at ten answers a second)
            body = recording("vllm", _Engine.step, running=32, tokens_per_step=260, itl_s=0.011, ttft_s=0.09,
                             requests_per_step=1).encode()
            kind = "text/plain; version=0.0.4"
        else:
            body, kind = json.dumps({"data": [{"id": MODEL}]}).encode(), "application/json"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


async def main() -> Path:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Engine)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    EngineLine.interval_s = INTERVAL_S
    runs = tuple(read_bench_file(HERE.parent / "tests" / "data" / "bench" / "vllm-bench-serve-append.jsonl"))
    form = ScenarioForm(serving=True, concurrency=32, prompt_tokens=1024, output_tokens=256)
    app = RooflineApp(form, engine_url=f"http://127.0.0.1:{server.server_address[1]}", measured_runs=runs)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("8")
            for _ in range(60):  # about three seconds: a full trail
                await pilot.pause(0.05)
            app.save_screenshot(filename="serving-box.svg", path=str(HERE))
    finally:
        server.shutdown()
    return HERE / "serving-box.svg"


if __name__ == "__main__":
    print(asyncio.run(main()))
