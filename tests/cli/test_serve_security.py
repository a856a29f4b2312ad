"""``roofline serve`` takes only its own page (issue 22 section 2, issue 20): Origin and Host checks, flags passed
as one word, clamped terminal sizes, session processes ended, a page that fetches nothing from the internet.

The real-server tests replace the explorer with a small stand-in process that ignores SIGTERM and SIGINT (the
worst case: it must be killed), so they start in a fraction of the explorer's time and prove the kill path.
Every wait is a watchdog far above an honest run, never a speed assertion.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import types
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline.tui.cli import serve
from roofline.tui.cli.main import build_parser
from roofline.tui.cli.serve import (
    MAX_COLUMNS,
    MAX_ROWS,
    allowed_origins,
    clamp_size,
    content_security_policy,
    end_process,
    page_html,
    parse_origin,
    refusal,
)

WATCHDOG_S = 60.0  # far above any honest run; only a hang reaches it

# ---------------------------------------------------------------- Origin and Host (pure)

LOOPBACK_8000 = allowed_origins("127.0.0.1", 8000)
TUNNEL = allowed_origins("127.0.0.1", 8000, "http://localhost:9000")


@pytest.mark.parametrize("text, origin", [
    ("http://127.0.0.1:8000", ("http", "127.0.0.1", 8000)),
    ("http://LOCALHOST:8000", ("http", "localhost", 8000)),
    ("https://example.org", ("https", "example.org", 443)),  # the scheme's port filled in
    ("http://example.org", ("http", "example.org", 80)),
    ("http://[::1]:8000", ("http", "::1", 8000)),
    ("null", None), ("file://", None), ("ws://127.0.0.1:8000", None), ("http://:8000", None),
    ("http://127.0.0.1:99999", None), ("http://user@127.0.0.1:8000", None), ("", None)])
def test_parse_origin(text, origin):
    assert parse_origin(text) == origin


def test_allowed_origins_on_loopback_are_the_loopback_names_on_the_port():
    assert {("http", "127.0.0.1", 8000), ("http", "localhost", 8000), ("http", "::1", 8000)} == LOOPBACK_8000


def test_allowed_origins_add_the_public_url():
    assert LOOPBACK_8000 | {("http", "localhost", 9000)} == TUNNEL


def test_allowed_origins_on_a_named_host():
    assert allowed_origins("example.org", 8080) == {("http", "example.org", 8080)}


def _refusal(host="127.0.0.1:8000", origin="http://127.0.0.1:8000", client="127.0.0.1", allowed=LOOPBACK_8000,
             websocket=True):
    return refusal(host_header=host, origin_header=origin, client=client, allowed=allowed, websocket=websocket)


@pytest.mark.parametrize("origin", ["http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000"])
def test_the_served_page_may_open_a_session(origin):
    assert _refusal(origin=origin) is None


@pytest.mark.parametrize("origin", ["http://evil.example", "http://evil.example:8000", "https://127.0.0.1:8000",
                                    "http://127.0.0.1:8001", "http://127.0.0.1", "null", "", "garbage",
                                    "http://127.0.0.1.evil.example:8000"])
def test_a_foreign_origin_is_refused_in_one_line(origin):
    reason = _refusal(origin=origin)
    assert reason is not None and "Origin" in reason and "\n" not in reason


def test_a_long_or_control_character_origin_is_shown_cut_and_escaped():
    reason = _refusal(origin="http://evil.example/\x1b[2J" + "a" * 10_000)
    assert "\x1b" not in reason and len(reason) < 200


@pytest.mark.parametrize("host", ["evil.example:8000", "evil.example", "127.0.0.1:8001", "127.0.0.1", "",
                                  "127.0.0.1:8000/x", "user@127.0.0.1:8000", "[::1", "127.0.0.1:http"])
def test_a_host_header_that_is_not_this_server_is_refused(host):
    """DNS rebinding: evil.example resolving to 127.0.0.1 reaches the port, but its Host says evil.example."""
    for websocket in (True, False):
        reason = _refusal(host=host, origin="http://evil.example:8000", websocket=websocket)
        assert reason is not None and "Host" in reason
    assert _refusal(host=None) == "no Host header"


def test_host_without_port_matches_the_schemes_default_port():
    behind_proxy = allowed_origins("127.0.0.1", 8000, "https://roofline.example.org")
    assert _refusal(host="roofline.example.org", origin="https://roofline.example.org", allowed=behind_proxy) is None
    assert _refusal(host="roofline.example.org:8443", origin="https://roofline.example.org",
                    allowed=behind_proxy) is not None


def test_behind_a_tunnel_the_public_origin_is_served():
    assert _refusal(host="localhost:9000", origin="http://localhost:9000", allowed=TUNNEL) is None
    assert _refusal(host="localhost:9000", origin="http://localhost:9000") is not None  # not without --public-url


@pytest.mark.parametrize("client, refused", [("127.0.0.1", False), ("::1", False), ("192.168.1.7", True),
                                             (None, True)])
def test_no_origin_is_served_to_loopback_clients_only(client, refused):
    """Browsers always send Origin on a websocket; a script on this machine (or through the tunnel) need not."""
    assert (_refusal(origin=None, client=client) is not None) is refused


def test_plain_pages_need_only_the_host():
    assert _refusal(origin="http://evil.example", websocket=False) is None


# ---------------------------------------------------------------- sizes (pure)


@pytest.mark.parametrize("width, height, size", [
    (3000, 3000, (MAX_COLUMNS, MAX_ROWS)), ("3000", "3000", (500, 200)), (120, 40, (120, 40)),
    ("120", "40", (120, 40)), (0, -5, (1, 1)), (None, None, (80, 24)), ("wide", "", (80, 24)),
    ("9" * 5000, "9" * 5000, (80, 24)), (True, False, (80, 24)), (120.7, float("nan"), (120, 24)),
    ({"a": 1}, [2], (80, 24))])
def test_clamp_size(width, height, size):
    assert clamp_size(width, height) == size


def test_the_stated_caps():
    assert (MAX_COLUMNS, MAX_ROWS) == (500, 200)


@settings(deadline=None)  # no wall-clock limit: a busy machine is not a failure (issue 30 item 20)
@given(st.one_of(st.integers(), st.text(max_size=30), st.floats(), st.none()),
       st.one_of(st.integers(), st.text(max_size=30), st.floats(), st.none()))
def test_clamp_size_is_always_a_size_a_session_may_have(width, height):
    columns, rows = clamp_size(width, height)
    assert type(columns) is int and type(rows) is int
    assert 1 <= columns <= MAX_COLUMNS and 1 <= rows <= MAX_ROWS


class _Message(types.SimpleNamespace):
    pass


class _FakeSocket:
    def __init__(self, texts):
        from aiohttp import WSMsgType

        self.messages = [_Message(type=WSMsgType.TEXT, data=text) for text in texts]
        self.messages.insert(0, _Message(type=WSMsgType.BINARY, data=b"\x00"))
        self.sent = []

    def __aiter__(self):
        return self._iterate()

    async def _iterate(self):
        for message in self.messages:
            yield message

    async def send_json(self, value):
        self.sent.append(value)


class _FakeService:
    def __init__(self):
        self.calls = []

    async def send_bytes(self, data):
        self.calls.append(("stdin", data))

    async def set_terminal_size(self, width, height):
        self.calls.append(("resize", width, height))

    async def blur(self):
        self.calls.append(("blur",))

    async def focus(self):
        self.calls.append(("focus",))


def test_relay_clamps_resizes_and_ignores_junk():
    pytest.importorskip("aiohttp")
    socket_ = _FakeSocket(['["resize", {"width": 3000, "height": 3000}]', '["stdin", "q"]', "not json", "[]",
                           '{"stdin": "x"}', '["stdin", 5]', '["resize", "big"]', '["ping", "t1"]', '["blur"]',
                           '["focus"]', '["resize", {"width": 100, "height": 30}]', '["unknown", 1]'])
    service = _FakeService()
    asyncio.run(serve.relay(socket_, service))
    assert service.calls == [("resize", 500, 200), ("stdin", b"q"), ("blur",), ("focus",), ("resize", 100, 30)]
    assert socket_.sent == [["pong", "t1"]]


# ---------------------------------------------------------------- flags as one word


def _explorer_words(argv):
    return serve.explorer_args_from_namespace(build_parser().parse_args(argv))


def test_a_model_value_starting_with_a_dash_is_passed_as_one_word():
    """``--model -x`` once became two words, and the session's argparse took ``-x`` for an unknown flag."""
    assert _explorer_words(["--model=-x"]) == ["--model=-x"]
    assert _explorer_words(["--model=--help"]) == ["--model=--help"]
    assert shlex.split(serve.build_command(["--model=-x"], False))[-1] == "--model=-x"


def test_every_explorer_flag_survives_the_trip_to_the_session():
    """Whatever the user gave is what the session's parser reads back, flag for flag (the registry's flags)."""
    from roofline.tui.inputs.registry import INPUTS

    argv = ["--hardware=-h200", "--model=-odd=name", "--batch=8", "--tp=2", "--kv=fp8", "--no-flash-attention",
            "--kv-compression=1.5"]
    given_args = build_parser().parse_args(argv)
    words = serve.explorer_args_from_namespace(given_args)
    assert all(word.startswith("--") and (" " not in word) for word in words)
    back = build_parser().parse_args(words)
    for spec in INPUTS:
        if spec.flag:
            assert getattr(back, spec.name) == getattr(given_args, spec.name), spec.flag


@settings(deadline=None)  # builds the parser per example: no wall-clock limit (issue 30 item 20)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40))
def test_any_model_text_survives_the_trip(text):
    words = _explorer_words([f"--model={text}"])
    assert words == [f"--model={text}"]
    assert build_parser().parse_args(shlex.split(serve.build_command(words, False))[4:]).model_ref == text


# ---------------------------------------------------------------- the page


BASE = "http://127.0.0.1:8000"


def test_the_page_loads_nothing_from_the_internet():
    html = page_html(title="roofline explorer", base_url=BASE, font_size_px=16)
    urls = re.findall(r"(?:https?|wss?)://[^\s\"')<>]+", html)
    assert urls and all(url.startswith(("http://127.0.0.1:8000/", "ws://127.0.0.1:8000/")) for url in urls), urls
    for remote in ("googleapis", "gstatic", "cdn", "@import", "//fonts.", "unpkg", "jsdelivr"):
        assert remote not in html.lower()
    assert 'src="http://127.0.0.1:8000/static/js/textual.js"' in html
    assert 'data-session-websocket-url="ws://127.0.0.1:8000/ws"' in html
    assert "monospace" in html  # the system's fonts when the local one cannot load


def test_textual_serves_own_template_fetches_google_fonts():
    """Why the page is ours: the template textual-serve ships links a Google Fonts style sheet."""
    textual_serve = pytest.importorskip("textual_serve")
    template = Path(textual_serve.__file__).parent / "templates" / "app_index.html"
    assert "fonts.googleapis.com" in template.read_text()


def test_the_page_font_files_are_shipped_by_textual_serve():
    textual_serve = pytest.importorskip("textual_serve")
    static = Path(textual_serve.__file__).parent / "static"
    html = page_html(title="t", base_url=BASE, font_size_px=16)
    for path in re.findall(r"http://127\.0\.0\.1:8000/static/([^\"]+)", html):
        assert (static / path).is_file(), path


def test_the_page_escapes_its_title_and_follows_the_public_url():
    html = page_html(title='<script>alert("x")</script>', base_url="https://roofline.example.org", font_size_px=20)
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    assert 'data-session-websocket-url="wss://roofline.example.org/ws"' in html
    assert 'data-font-size="20"' in html


def test_content_security_policy_allows_only_the_served_origin():
    policy = content_security_policy("http://localhost:9000")
    assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy
    sources = {word for word in policy.replace(";", " ").split() if "://" in word}
    assert sources == {"http://localhost:9000", "ws://localhost:9000"}
    assert "wss://[::1]:443" in content_security_policy("https://[::1]")


# ---------------------------------------------------------------- ending processes


_STUBBORN = ("import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
             "signal.signal(signal.SIGINT, signal.SIG_IGN); print('ready', flush=True); time.sleep(600)")
_POLITE = "import sys, time; print('ready', flush=True); time.sleep(600)"


@pytest.mark.slow
@pytest.mark.parametrize("code, how", [("print('ready', flush=True)", "exited"), (_POLITE, "terminated"),
                                       (_STUBBORN, "killed")])
def test_end_process(code, how):
    async def run() -> tuple[str, int]:
        process = await asyncio.create_subprocess_exec(sys.executable, "-c", code, stdout=asyncio.subprocess.PIPE)
        assert await asyncio.wait_for(process.stdout.readline(), WATCHDOG_S) == b"ready\n"
        ended = await asyncio.wait_for(end_process(process, quit_grace_s=0.5 if how != "exited" else WATCHDOG_S,
                                                   term_grace_s=0.5), WATCHDOG_S)
        return ended, process.returncode

    ended, returncode = asyncio.run(run())
    assert ended == how
    assert returncode == {"exited": 0, "terminated": -signal.SIGTERM, "killed": -signal.SIGKILL}[how]


def test_textual_serve_is_the_release_whose_private_name_is_used():
    """serve.py reads ``AppService._process``: re-check it (and update TEXTUAL_SERVE_CHECKED) on an upgrade."""
    pytest.importorskip("textual_serve")
    installed = importlib.metadata.version("textual-serve")
    assert installed == serve.TEXTUAL_SERVE_CHECKED, (
        f"textual-serve {installed} is installed, serve.py's AppService._process was checked with "
        f"{serve.TEXTUAL_SERVE_CHECKED}: run test_app_service_keeps_its_process_where_serve_reads_it, then update "
        "TEXTUAL_SERVE_CHECKED")


@pytest.mark.slow
def test_app_service_keeps_its_process_where_serve_reads_it():
    pytest.importorskip("textual_serve")
    from textual_serve.app_service import AppService
    from textual_serve.download_manager import DownloadManager

    async def run():
        async def ignore(*_):
            return None

        service = AppService(shlex.join(["exec", sys.executable, "-c", _POLITE]), write_bytes=ignore,
                             write_str=ignore, close=ignore, download_manager=DownloadManager())
        await service.start(80, 24)
        process = service._process  # the private name serve.py reads
        assert isinstance(process, asyncio.subprocess.Process) and process.returncode is None
        assert await end_process(process, quit_grace_s=0.1, term_grace_s=WATCHDOG_S) == "terminated"
        await asyncio.wait_for(service.stop(), WATCHDOG_S)

    asyncio.run(run())


# ---------------------------------------------------------------- a real server


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _children(pid: int) -> list[int]:
    """Live (not zombie) processes whose parent is ``pid``, from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        state, parent = stat.rsplit(")", 1)[1].split()[:2]
        if int(parent) == pid and state != "Z":
            found.append(int(entry))
    return found


def _group(pgid: int) -> list[int]:
    """Live (not zombie) processes in process group ``pgid``, from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                state, _, group = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[:3]
                if int(group) == pgid and state != "Z":
                    found.append(int(entry))
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


async def _until(predicate, what: str):
    deadline = time.monotonic() + WATCHDOG_S
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"watchdog: {what}")
        await asyncio.sleep(0.05)


class _Running(types.SimpleNamespace):
    def stderr(self) -> str:
        return self.stderr_path.read_text()


def _start(tmp_path: Path, *, public: str | None = None) -> _Running:
    """A real ``run_serve`` in its own process group; sessions run the stubborn stand-in, graces of 0.5 s."""
    port = _free_port()
    command = shlex.join(["exec", sys.executable, "-c", _STUBBORN])
    code = "\n".join(["from roofline.tui.cli import serve",
                      f"serve.build_command = lambda args, present: {command!r}",
                      "serve.QUIT_GRACE_S = serve.TERM_GRACE_S = 0.5",
                      f"serve.run_serve('127.0.0.1', {port}, ['--hardware=h200'], False, public={public!r})"])
    stderr_path = tmp_path / f"serve-{port}.err"
    with stderr_path.open("wb") as stderr:
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=stderr,
                                start_new_session=True)
    running = _Running(proc=proc, port=port, stderr_path=stderr_path, base=f"http://127.0.0.1:{port}")
    deadline = time.monotonic() + WATCHDOG_S
    while True:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return running
        if proc.poll() is not None:
            pytest.fail(f"server exited with {proc.returncode}: {running.stderr()[-2000:]}")
        if time.monotonic() > deadline:
            _stop(proc)
            pytest.fail("watchdog: the server did not listen")
        time.sleep(0.05)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=WATCHDOG_S)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=WATCHDOG_S)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    pytest.importorskip("textual_serve")
    if not Path("/proc/self/stat").exists():
        pytest.skip("needs /proc to see the server's child processes")
    running = _start(tmp_path_factory.mktemp("serve"), public="http://localhost:9")
    try:
        yield running
    finally:
        _stop(running.proc)


async def _upgrade(port: int, *, headers: dict[str, str], query: str = ""):
    """Open the websocket; returns (status, open socket or None, session). 101 means accepted."""
    import aiohttp

    session = aiohttp.ClientSession()
    try:
        ws = await session.ws_connect(f"ws://127.0.0.1:{port}/ws{query}", headers=headers, autoping=False)
    except aiohttp.WSServerHandshakeError as err:
        await session.close()
        return err.status, None, None
    return 101, ws, session


@pytest.mark.slow
async def test_a_foreign_origin_gets_403_and_starts_no_process(server):
    status, _, _ = await _upgrade(server.port, headers={"Origin": "http://evil.example"})
    assert status == 403
    assert _children(server.proc.pid) == []
    log = [line for line in server.stderr().splitlines() if "evil.example" in line]
    assert len(log) == 1 and log[0].startswith("roofline serve: refused a websocket from 127.0.0.1: Origin")


@pytest.mark.slow
async def test_a_rebound_host_gets_403(server):
    status, _, _ = await _upgrade(server.port, headers={"Host": f"evil.example:{server.port}",
                                                        "Origin": f"http://evil.example:{server.port}"})
    assert status == 403 and _children(server.proc.pid) == []
    for path in ("/", "/download/some-key"):
        request = urllib.request.Request(server.base + path, headers={"Host": f"evil.example:{server.port}"})
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(request, timeout=WATCHDOG_S)
        assert err.value.code == 403, path
        assert err.value.read().decode().count("\n") == 1


@pytest.mark.slow
async def test_a_matching_origin_opens_a_clamped_session_that_ends_with_its_socket(server):
    status, ws, session = await _upgrade(server.port, headers={"Origin": server.base},
                                         query="?width=3000&height=3000")
    assert status == 101
    try:
        await _until(lambda: _children(server.proc.pid), "no session process started")
        (child,) = _children(server.proc.pid)

        def environment() -> dict[str, str]:  # the forked server's own until the session's shell starts
            with contextlib.suppress(OSError):
                text = Path(f"/proc/{child}/environ").read_text()
                return dict(item.split("=", 1) for item in text.split("\0") if "=" in item)
            return {}

        await _until(lambda: "ROWS" in environment(), "the session's environment")
        session_environment = environment()
        assert (session_environment["COLUMNS"], session_environment["ROWS"]) == ("500", "200")
    finally:
        await ws.close()
        await session.close()
    await _until(lambda: not _alive(child), "the session process outlived its socket")
    assert f"session process {child} killed" in server.stderr()  # it ignores quit and SIGTERM


@pytest.mark.slow
async def test_the_public_url_origin_opens_a_session(server):
    status, ws, session = await _upgrade(server.port, headers={"Origin": "http://localhost:9", "Host": "localhost:9"})
    assert status == 101
    await ws.close()
    await session.close()


@pytest.mark.slow
def test_the_page_over_http_loads_nothing_from_elsewhere(server):
    request = urllib.request.Request(server.base + "/", headers={"Host": "localhost:9"})
    with urllib.request.urlopen(request, timeout=WATCHDOG_S) as response:
        html, policy = response.read().decode(), response.headers["Content-Security-Policy"]
    assert 'data-session-websocket-url="ws://localhost:9/ws"' in html  # the page follows --public-url
    assert all(url.startswith(("http://localhost:9/", "ws://localhost:9/"))
               for url in re.findall(r"(?:https?|wss?)://[^\s\"')<>]+", html))
    assert policy == content_security_policy("http://localhost:9")
    with urllib.request.urlopen(server.base + "/static/fonts/RobotoMono-VariableFont_wght.ttf",
                                timeout=WATCHDOG_S) as response:
        assert response.status == 200


@pytest.mark.slow
@pytest.mark.parametrize("started", [True, False], ids=["running", "starting"])
async def test_ctrl_c_on_the_server_ends_every_session(tmp_path, started):
    """Sessions that run, or whose process is still being opened (Ctrl+C right after the upgrade), all end.

    The server leads its own process group and sessions inherit it, so what is left of the group after the
    server exits is what it failed to end.
    """
    pytest.importorskip("textual_serve")
    running = _start(tmp_path)
    sockets = []
    try:
        for _ in range(2):
            status, ws, session = await _upgrade(running.port, headers={"Origin": running.base})
            assert status == 101
            sockets.append((ws, session))
        if started:
            await _until(lambda: len(_children(running.proc.pid)) == 2, "two session processes")
        running.proc.send_signal(signal.SIGINT)
        await _until(lambda: running.proc.poll() is not None, "the server did not stop on Ctrl+C")
        assert _group(running.proc.pid) == []
    finally:
        for ws, session in sockets:
            await ws.close()
            await session.close()
        _stop(running.proc)
