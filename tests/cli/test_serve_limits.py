"""Issue 30 item 12: ``serve --public-url`` takes only scheme://host[:port], and ``--max-sessions`` caps the
explorer processes a server starts (a tab beyond the cap gets a page saying the server is full)."""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import signal
import socket
import subprocess
import sys
import time

import pytest

from roofline.tui.cli.serve import DEFAULT_MAX_SESSIONS, check_public_url, content_security_policy
from roofline.tui.cli.serve_page import full_page_html
from tests.conftest import run_cli

WATCHDOG_S = 60.0  # far above any honest run; only a hang reaches it


@pytest.mark.parametrize(("url", "checked"), [
    ("http://localhost:8000", "http://localhost:8000"), ("https://example.com/", "https://example.com"),
    ("http://[::1]:9000", "http://[::1]:9000"), ("http://10.0.0.1", "http://10.0.0.1"),
    ("https://gpu-box.example.org:8443", "https://gpu-box.example.org:8443"),
])
def test_a_public_url_that_is_an_origin_is_taken(url, checked):
    assert check_public_url(url) == checked


@pytest.mark.parametrize("url", [
    'http://a"onmouseover="alert(1)', "http://a'b", "http://a b", "http://a;b", "http://a<b>", "http://exa_mple.com",
    "http://-a.com", "http://a..b", "http://[zz]", "http://x/path", "http://u@x", "http://x:99999", "http://x?q",
    "ftp://x", "http://", "http://a,b", "http://" + "a" * 64 + ".com", "javascript:alert(1)",
])
def test_anything_else_is_refused(url):
    with pytest.raises(ValueError, match="--public-url"):
        check_public_url(url)


def test_a_refused_public_url_is_one_line_before_anything_listens(capsys):
    code, out, err = run_cli(["serve", "--public-url", 'http://a"onmouseover="alert(1)'], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "--public-url" in err


def test_the_csp_of_a_taken_url_has_no_quote_or_space_from_it():
    policy = content_security_policy(check_public_url("http://gpu-box:8000"))
    assert '"' not in policy and "http://gpu-box:8000" in policy


def test_max_sessions_has_a_small_default_and_a_range(capsys):
    from roofline.tui.cli.main import build_parser

    assert build_parser().parse_args(["serve"]).max_sessions == DEFAULT_MAX_SESSIONS <= 16
    for bad in ("0", "-1", "1,5", "lots"):
        code, _, err = run_cli(["serve", "--max-sessions", bad], capsys)
        assert code == 2 and "--max-sessions" in err and len(err.strip().splitlines()) == 1


def test_the_full_page_says_so_and_escapes_its_title():
    page = full_page_html(title="<b>x</b>", max_sessions=3)
    assert "full" in page and "3 sessions" in page and "<b>x</b>" not in page


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


_SESSION = "import time; print('ready', flush=True); time.sleep(600)"


@pytest.mark.slow
def test_a_session_beyond_the_cap_gets_the_full_page_and_starts_no_process(tmp_path):
    pytest.importorskip("textual_serve")
    aiohttp = pytest.importorskip("aiohttp")
    port = _free_port()
    command = shlex.join(["exec", sys.executable, "-c", _SESSION])
    code = "\n".join(["from roofline.tui.cli import serve",
                      f"serve.build_command = lambda args, present: {command!r}",
                      "serve.QUIT_GRACE_S = serve.TERM_GRACE_S = 0.5",
                      f"serve.run_serve('127.0.0.1', {port}, [], False, max_sessions=1)"])
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + WATCHDOG_S
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            assert proc.poll() is None and time.monotonic() < deadline, "the server did not listen"
            time.sleep(0.05)

        async def run():
            origin = {"Origin": f"http://127.0.0.1:{port}"}
            async with aiohttp.ClientSession() as client:
                first = await client.ws_connect(f"ws://127.0.0.1:{port}/ws", headers=origin, autoping=False)
                await asyncio.sleep(0.5)
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await client.ws_connect(f"ws://127.0.0.1:{port}/ws", headers=origin, autoping=False)
                async with client.get(f"http://127.0.0.1:{port}/") as page:
                    status, text = page.status, await page.text()
                await first.close()
                return refused.value.status, status, text

        ws_status, page_status, text = asyncio.run(asyncio.wait_for(run(), WATCHDOG_S))
        assert ws_status == 503 and page_status == 503 and "the server is full" in text
    finally:
        proc.send_signal(signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=WATCHDOG_S)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            import os

            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=WATCHDOG_S)


def test_no_hypothesis_deadline_on_the_serve_tests():
    """Issue 30 item 20: a property test that builds parsers or starts processes failed Hypothesis's 200 ms
    deadline on a busy machine; tests carry no wall-clock limit, so every @given there says deadline=None."""
    import ast
    from pathlib import Path

    for name in ("test_serve_security.py", "test_serve_limits.py", "test_serve.py"):
        tree = ast.parse((Path(__file__).parent / name).read_text())
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            calls = [d for d in node.decorator_list if isinstance(d, ast.Call) and isinstance(d.func, ast.Name)]
            if not any(call.func.id == "given" for call in calls):
                continue
            assert any(call.func.id == "settings" and any(k.arg == "deadline" and isinstance(k.value, ast.Constant)
                                                          and k.value.value is None for k in call.keywords)
                       for call in calls), f"{name}::{node.name} has a Hypothesis deadline"
