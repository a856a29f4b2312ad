"""Live engine metrics over real HTTP: a server on 127.0.0.1 (http.server in a thread) replays each engine's recorded
sequence, then answers the hostile ways: huge, slow, garbage, wrong content type, a redirect to another host, counts
going backwards, no answer at all. The monitor's clock is a counter, so a 10 s window takes no 10 s."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from roofline.tui.probe.engine_metrics import TOKEN_ENV, EngineMonitor, EnginePoller
from tests.probe.test_engine_metrics import ENGINE_NAMES, MODEL, recording

Answer = tuple[int, dict[str, str], bytes]


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        server = self.server
        server.requests.append((self.path, dict(self.headers)))  # type: ignore[attr-defined]
        answer = server.route(self.path)  # type: ignore[attr-defined]
        if callable(answer):
            answer(self)
            return
        status, headers, body = answer
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        if "Content-Length" not in headers:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:  # quiet
        pass


@contextmanager
def serving(route: Callable[[str], Answer | Callable]) -> Iterator[http.server.ThreadingHTTPServer]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.route = route  # type: ignore[attr-defined]
    server.requests = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def url_of(server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


PROM = {"Content-Type": "text/plain; version=0.0.4; charset=utf-8"}
MODELS = (200, {"Content-Type": "application/json"},
          json.dumps({"object": "list", "data": [{"id": MODEL, "object": "model", "root": MODEL}]}).encode())


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def replaying(engine: str, answers: dict[str, int]) -> Callable[[str], Answer]:
    """Each GET /metrics answers the next second of the engine's recording."""

    def route(path: str) -> Answer:
        if path == "/v1/models":
            return MODELS
        if path == "/metrics":
            step = answers["step"]
            answers["step"] += 1
            return 200, PROM, recording(engine, step).encode()
        return 404, {}, b"not found"

    return route


def poll_seconds(monitor: EngineMonitor, clock: Clock, seconds: int):
    status = None
    for _ in range(seconds):
        status = monitor.poll()
        clock.now += 1.0
    return status


@pytest.mark.parametrize("engine", sorted(ENGINE_NAMES))
def test_each_engine_replayed_over_http(engine):
    """Eleven polls of the recording: engine named, model from /v1/models, 2000 tok/s over the 10 s window."""
    clock = Clock()
    with serving(replaying(engine, {"step": 0})) as server:
        monitor = EngineMonitor(url_of(server), clock=clock)
        status = poll_seconds(monitor, clock, 11)
    assert status.error is None and status.engine == ENGINE_NAMES[engine]
    assert status.model == MODEL
    assert status.point.output_tokens_per_s == pytest.approx(2000)
    assert [p for p, _ in server.requests].count("/v1/models") == 1  # asked once, not every second


def test_the_live_point_moves_along_the_sequence():
    """Load doubles from the 11th second: the trail's tokens/s climbs from 2000 toward 4000 within the window."""
    clock = Clock()
    state = {"step": 0}

    def route(path: str) -> Answer:
        if path != "/metrics":
            return MODELS
        step = state["step"]
        state["step"] += 1
        tokens = 2000 * step if step <= 10 else 20000 + 4000 * (step - 10)
        text = recording("vllm", 0, running=48 if step <= 10 else 96).replace(
            "vllm:generation_tokens_total{" + f'model_name="{MODEL}",engine="0"' + "} 0.0",
            "vllm:generation_tokens_total{" + f'model_name="{MODEL}",engine="0"' + "} " + repr(float(tokens)))
        return 200, PROM, text.encode()

    with serving(route) as server:
        monitor = EngineMonitor(url_of(server), clock=clock)
        status = poll_seconds(monitor, clock, 21)
    rates = [p.output_tokens_per_s for p in status.trail if p.output_tokens_per_s is not None]
    assert rates[9] == pytest.approx(2000) and rates[-1] == pytest.approx(4000)
    assert rates == sorted(rates) and status.point.running == 96


def test_bearer_token_from_the_environment_only(monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, "s3cret")
    clock = Clock()
    with serving(replaying("vllm", {"step": 0})) as server:
        EngineMonitor(url_of(server), clock=clock).poll()
    assert all(h.get("Authorization") == "Bearer s3cret" for _, h in server.requests)
    monkeypatch.delenv(TOKEN_ENV)
    with serving(replaying("vllm", {"step": 0})) as server:
        EngineMonitor(url_of(server), clock=clock).poll()
    assert all("Authorization" not in h for _, h in server.requests)


def test_same_origin_redirect_is_followed():
    """vLLM mounts its metrics app at /metrics: a 307 to /metrics/ on the same host is followed."""

    def route(path: str) -> Answer:
        if path == "/metrics":
            return 307, {"Location": "/metrics/"}, b""
        if path == "/metrics/":
            return 200, PROM, recording("vllm", 1).encode()
        return MODELS

    with serving(route) as server:
        status = EngineMonitor(url_of(server), clock=Clock()).poll()
    assert status.error is None and status.engine == "vLLM"


def test_redirect_to_another_host_is_refused_and_never_followed(monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, "s3cret")
    with serving(lambda path: (200, PROM, recording("vllm", 1).encode())) as elsewhere:
        target = f"{url_of(elsewhere)}/metrics"
        with serving(lambda path: (302, {"Location": target}, b"")) as server:
            status = EngineMonitor(url_of(server), clock=Clock()).poll()
        assert elsewhere.requests == []  # the token never went there
    assert status.error.startswith("redirect to another host refused") and status.point is None


@pytest.mark.parametrize(("answer", "fragment"), [
    ((200, {"Content-Type": "text/html"}, b"<html>login</html>"), "wrong content type 'text/html'"),
    ((200, PROM, b"\x00\x01garbage{{{ 12\n"), "not Prometheus text"),
    ((200, PROM, b"# TYPE up gauge\nup 1\n"), "no metric of a known engine"),
    ((500, PROM, b"oops"), "HTTP 500"),
    ((401, PROM, b"no"), "HTTP 401"),
    ((200, {"Content-Type": "application/json"}, b'{"iterations": []}'), "wrong content type 'application/json'"),
])
def test_hostile_answers_are_one_line(answer, fragment):
    with serving(lambda path: answer) as server:
        status = EngineMonitor(url_of(server), clock=Clock()).poll()
    assert fragment in status.error and "\n" not in status.error and status.point is None


def test_a_huge_answer_is_cut_at_the_cap():
    """A declared 50 MB answer is refused from its header; an undeclared endless one at the cap."""
    with serving(lambda path: (200, {**PROM, "Content-Length": str(50 * 1024 * 1024)}, b"")) as server:
        status = EngineMonitor(url_of(server), clock=Clock()).poll()
    assert "answer too large (52,428,800 bytes" in status.error

    def endless(handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/plain")
        handler.end_headers()
        try:
            line = b"vllm:num_requests_running 1\n" * 4096
            for _ in range(400):  # ~46 MB if read to the end
                handler.wfile.write(line)
        except OSError:
            pass  # the client hung up at its cap

    with serving(lambda path: endless) as server:
        status = EngineMonitor(url_of(server), clock=Clock()).poll()
    assert "answer too large (more than 4,194,304 bytes)" in status.error


@pytest.mark.slow
def test_a_slow_engine_times_out_within_the_poll():
    """An engine that answers one byte every 0.1 s: the 0.4 s poll gives up within 1.5 x its timeout."""

    def trickle(handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/plain")
        handler.end_headers()
        try:
            for _ in range(100):
                handler.wfile.write(b"#")
                handler.wfile.flush()
                time.sleep(0.1)
        except OSError:
            pass

    with serving(lambda path: trickle) as server:
        monitor = EngineMonitor(url_of(server), clock=Clock(), timeout_s=0.4)
        started = time.monotonic()
        status = monitor.poll()
        took = time.monotonic() - started
    assert "timed out" in status.error
    assert took < 0.4 * 1.5 + 0.5  # bounded, whatever the machine's load (the server would go on for 10 s)


def test_a_dead_engine_reads_no_answer_since():
    """Eleven good polls, then the server goes away: the status keeps the last answer's time, the error, and the
    seconds of silence grow with the clock (12 s later: 12 s)."""
    from roofline.tui.views.live_engine import verdict

    clock = Clock()
    with serving(replaying("vllm", {"step": 0})) as server:
        monitor = EngineMonitor(url_of(server), clock=clock, timeout_s=0.5)
        poll_seconds(monitor, clock, 11)
    answered = monitor.status.answered_at_s
    clock.now = answered + 12.0
    status = monitor.poll()
    assert status.error and status.answered_at_s == answered
    assert status.silent_for_s(clock.now) == pytest.approx(12.0)
    line = verdict(status, devices=1, itl_target_s=0.05, expected_per_device=3000.0, now_s=clock.now)
    assert line.startswith("vLLM: no answer since 12 s (")


def test_an_engine_restart_over_http_restarts_the_window():
    clock = Clock()
    state = {"step": 500}

    def route(path: str) -> Answer:
        if path != "/metrics":
            return MODELS
        state["step"] = 0 if state["step"] == 505 else state["step"] + 1
        return 200, PROM, recording("vllm", state["step"]).encode()

    with serving(route) as server:
        monitor = EngineMonitor(url_of(server), clock=clock)
        points = [poll_seconds(monitor, clock, 1).point for _ in range(8)]
    assert [p.restarted for p in points].count(True) == 1
    assert points[-1].output_tokens_per_s == pytest.approx(2000)
    assert [p for p, _ in server.requests].count("/v1/models") == 2  # asked again after the restart


def test_the_poller_thread_delivers_statuses_and_stops():
    delivered = []
    got_two = threading.Event()

    def deliver(status) -> None:
        delivered.append((threading.current_thread().name, status))
        if len(delivered) >= 2:
            got_two.set()

    with serving(replaying("vllm", {"step": 0})) as server:
        poller = EnginePoller(EngineMonitor(url_of(server)), deliver, interval_s=0.05).start()
        assert got_two.wait(10)
        poller.stop(join_s=5)
    assert not poller.running and delivered[0][1].engine == "vLLM"
    # called on the polling thread: the caller hands statuses to the UI thread (never touches widgets there)
    assert {name for name, _ in delivered} == {"roofline-engine-poll"}


def test_annotate_runs_on_the_polling_thread_and_a_failure_does_not_stop_polling():
    calls = []
    got = threading.Event()
    delivered = []

    def annotate(status):
        calls.append(threading.current_thread().name)
        if len(calls) == 1:
            raise RuntimeError("model refused")
        return 1234.0

    def deliver(status) -> None:
        delivered.append(status.annotation)
        if len(delivered) >= 3:
            got.set()

    with serving(replaying("vllm", {"step": 0})) as server:
        poller = EnginePoller(EngineMonitor(url_of(server)), deliver, interval_s=0.05, annotate=annotate).start()
        assert got.wait(10)
        poller.stop(join_s=5)
    assert delivered[:3] == [None, 1234.0, 1234.0]
    assert set(calls) == {"roofline-engine-poll"}
