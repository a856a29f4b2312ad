"""``roofline serve`` (tui/cli/serve.py): the command textual-serve runs, argument checks, and a real server.

The origin, host, size and process checks are in test_serve_security.py."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import types
import urllib.error
import urllib.request

import pytest

from roofline.tui.cli import serve
from roofline.tui.cli.main import build_parser
from roofline.tui.cli.serve import NOT_INSTALLED, build_command, run_serve

# ---------------------------------------------------------------- build_command


def test_build_command_runs_the_cli_module_with_this_python():
    """``exec``: the shell becomes the explorer, so the process textual-serve holds is the one to signal."""
    assert shlex.split(build_command([], False)) == ["exec", sys.executable, "-m", "roofline.tui.cli"]


@pytest.mark.parametrize("value", ["h100 sxm", "it's", 'say "hi"', "$(touch /tmp/pwned)", "a;b", "`id`", "*", "",
                                   "--flag=x y", "tab\there", "new\nline", "ünïcode"])
def test_build_command_quotes_every_word(value):
    command = build_command([f"--model={value}"], False)
    assert shlex.split(command) == ["exec", sys.executable, "-m", "roofline.tui.cli", f"--model={value}"]


def test_build_command_quotes_an_interpreter_path_with_spaces(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/opt/my python/bin/python3")
    command = build_command(["--batch=8"], False)
    assert command.startswith("exec '/opt/my python/bin/python3' ")
    assert shlex.split(command) == ["exec", "/opt/my python/bin/python3", "-m", "roofline.tui.cli", "--batch=8"]


def test_build_command_present_puts_explorer_flags_before_the_subcommand():
    assert shlex.split(build_command([], True)) == ["exec", sys.executable, "-m", "roofline.tui.cli", "present"]
    assert shlex.split(build_command(["--hardware=h200"], True)) == [
        "exec", sys.executable, "-m", "roofline.tui.cli", "--hardware=h200", "present"]


@pytest.mark.slow
def test_build_command_runs_in_a_shell():
    """The string textual-serve hands to /bin/sh starts this package's CLI."""
    done = subprocess.run(build_command(["--help"], False), shell=True, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "roofline" in done.stdout


def test_explorer_args_from_namespace_passes_only_given_flags(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = build_parser().parse_args(["--hardware", "h200", "--batch", "8", "--scenario", "s.toml"])
    assert serve.explorer_args_from_namespace(args) == [
        "--hardware=h200", "--batch=8", f"--scenario={(tmp_path / 's.toml').resolve()}"]
    assert serve.explorer_args_from_namespace(build_parser().parse_args([])) == []


# ---------------------------------------------------------------- host, port, missing package


@pytest.mark.parametrize("host, loopback", [("127.0.0.1", True), ("127.1.2.3", True), ("localhost", True),
                                            ("::1", True), ("[::1]", True), ("0.0.0.0", False), ("::", False),
                                            ("192.168.1.10", False), ("example.org", False)])
def test_is_loopback(host, loopback):
    assert serve.is_loopback(host) is loopback


def test_public_url():
    assert serve.public_url("127.0.0.1", 8000) == "http://127.0.0.1:8000"
    assert serve.public_url("::1", 8080) == "http://[::1]:8080"
    assert serve.public_url("0.0.0.0", 8000) == f"http://{socket.gethostname()}:8000"


@pytest.mark.parametrize("port", [0, -1, 65536, 10**6, True, 80.0, "8000"])
def test_run_serve_rejects_bad_ports(port):
    with pytest.raises(ValueError, match="--port"):
        run_serve("127.0.0.1", port, [], False)


@pytest.mark.parametrize("host", ["", "   ", "local host", "no-such-host.invalid"])
def test_run_serve_rejects_bad_hosts(host):
    with pytest.raises(ValueError, match="--host"):
        run_serve(host, 8000, [], False)


def test_run_serve_without_textual_serve(monkeypatch):
    monkeypatch.setitem(sys.modules, "textual_serve", None)  # makes the import raise ImportError
    monkeypatch.setitem(sys.modules, "textual_serve.server", None)
    with pytest.raises(ValueError) as err:
        run_serve("127.0.0.1", 8000, [], False)
    assert str(err.value) == NOT_INSTALLED


class _FakeServer:
    made: list[_FakeServer] = []

    def __init__(self, command, host="localhost", port=8000, title=None, public_url=None):
        self.command, self.host, self.port, self.title, self.public_url = command, host, port, title, public_url
        self.served = False
        _FakeServer.made.append(self)

    def serve(self, debug=False):
        self.served = True


@pytest.fixture
def fake_server(monkeypatch):
    _FakeServer.made.clear()
    module = types.ModuleType("textual_serve.server")
    module.Server = _FakeServer
    monkeypatch.setitem(sys.modules, "textual_serve", types.ModuleType("textual_serve"))
    monkeypatch.setitem(sys.modules, "textual_serve.server", module)
    app_service = types.ModuleType("textual_serve.app_service")
    app_service.AppService = object  # only named by the subclass; no session runs here
    monkeypatch.setitem(sys.modules, "textual_serve.app_service", app_service)
    return _FakeServer.made


def test_run_serve_on_loopback_prints_the_url_and_no_warning(fake_server, capsys):
    assert run_serve("127.0.0.1", 8123, ["--hardware", "h200"], False) == 0
    (server,) = fake_server
    assert server.served and (server.host, server.port) == ("127.0.0.1", 8123)
    assert server.command == build_command(["--hardware", "h200"], False)
    assert server.title == "roofline explorer"
    out, err = capsys.readouterr()
    assert "http://127.0.0.1:8123/" in out
    assert err == ""


def test_run_serve_public_url_is_the_page_address_and_an_allowed_origin(fake_server, capsys):
    """Behind ``ssh -L 9000:127.0.0.1:8000``: the browser's page is http://localhost:9000."""
    run_serve("127.0.0.1", 8000, [], False, public="http://localhost:9000/")
    (server,) = fake_server
    assert server.public_url == "http://localhost:9000"
    assert ("http", "localhost", 9000) in server.allowed and ("http", "127.0.0.1", 8000) in server.allowed
    assert "open http://localhost:9000/ in a browser" in capsys.readouterr().out


def test_cli_passes_public_url_and_flags_as_one_word(fake_server, capsys):
    from roofline.tui.cli.main import main

    assert main(["--hardware=h200", "--batch", "8", "serve", "--public-url", "http://localhost:9000"]) == 0
    (server,) = fake_server
    assert server.public_url == "http://localhost:9000"
    assert shlex.split(server.command)[-2:] == ["--hardware=h200", "--batch=8"]


def test_cli_rejects_a_bad_public_url_in_one_line(fake_server, capsys):
    from roofline.tui.cli.main import main

    assert main(["serve", "--public-url", "localhost:9000"]) == 2
    assert fake_server == []
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--public-url" in err


@pytest.mark.parametrize("url", ["localhost:9000", "ftp://localhost", "http://", "http://localhost:9000/app",
                                 "http://localhost:9000/?a=1", "http://user@localhost:9000", "http://x:99999"])
def test_run_serve_rejects_a_bad_public_url(fake_server, url):
    with pytest.raises(ValueError, match="--public-url"):
        run_serve("127.0.0.1", 8000, [], False, public=url)
    assert fake_server == []


def test_run_serve_present_title(fake_server):
    run_serve("localhost", 8000, [], True)
    assert fake_server[0].title == "roofline presentation"
    assert fake_server[0].command == build_command([], True)


def test_run_serve_on_a_network_host_warns_on_one_line(fake_server, capsys):
    run_serve("0.0.0.0", 8000, [], False)
    assert fake_server[0].served and fake_server[0].host == "0.0.0.0"
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "warning" in err and "reachable from the network" in err


def test_run_serve_reports_a_port_that_cannot_be_bound(fake_server, monkeypatch):
    def refuse(self, debug=False):
        raise OSError(98, "Address already in use")

    monkeypatch.setattr(_FakeServer, "serve", refuse)
    with pytest.raises(ValueError, match="cannot listen on 127.0.0.1:8000: Address already in use"):
        run_serve("127.0.0.1", 8000, [], False)


# ---------------------------------------------------------------- a real server


# a watchdog, not a speed budget: a server and an explorer start in a second or two, even on a busy 2-core machine
WATCHDOG_S = 120


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM the server (it shuts down gracefully), then SIGKILL whatever is left of its process group."""
    if proc.poll() is None:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # the group was created for this server (start_new_session)
    proc.wait(timeout=5)


@pytest.fixture(scope="module")
def served():
    pytest.importorskip("textual_serve")
    port = _free_port()
    code = (f"from roofline.tui.cli.serve import run_serve; "
            f"run_serve('127.0.0.1', {port}, ['--hardware', 'h200'], False)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + WATCHDOG_S
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as response:
                    page = (response.status, response.read().decode("utf-8", "replace"))
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if proc.poll() is not None:
                    pytest.fail(f"server exited with {proc.returncode}: {proc.stderr.read().decode()[-2000:]}")
                if time.monotonic() > deadline:
                    pytest.fail(f"server did not answer within {WATCHDOG_S} s")
                time.sleep(0.1)
        yield port, page
    finally:
        _stop(proc)


@pytest.mark.slow
def test_serve_answers_with_the_page(served):
    _, (status, html) = served
    assert status == 200
    assert "roofline explorer" in html
    assert "textual" in html.lower()


@pytest.mark.slow
def test_serve_runs_the_explorer_over_the_websocket(served):
    """A browser session starts the explorer with the passed-through flags: its first screen names the H200."""
    aiohttp = pytest.importorskip("aiohttp")  # a dependency of textual-serve
    port, _ = served

    async def first_screen() -> bytes:
        received = b""
        async with aiohttp.ClientSession() as session, session.ws_connect(
                f"ws://127.0.0.1:{port}/ws?width=120&height=40") as ws:
            deadline = time.monotonic() + WATCHDOG_S
            while b"H200" not in received and time.monotonic() < deadline:
                try:
                    message = await asyncio.wait_for(ws.receive(), timeout=max(0.1, deadline - time.monotonic()))
                except asyncio.TimeoutError:
                    break
                if message.type == aiohttp.WSMsgType.BINARY:
                    received += message.data
                elif message.type == aiohttp.WSMsgType.TEXT:
                    received += message.data.encode()
                else:  # closed: the explorer exited
                    break
        return received

    screen = asyncio.run(first_screen())
    assert b"H200" in screen, screen[-500:]
