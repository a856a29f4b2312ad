"""``roofline serve``: the explorer in a web browser, through the optional ``textual-serve`` package.

textual-serve (``pip install 'roofline-explorer[serve]'``) runs a small aiohttp web server. Each browser tab
that opens the page gets its own copy of the explorer: the server starts :func:`build_command` as a shell
command with Textual's web driver and relays the screen and the keys over a websocket. Nothing is shared
between tabs, and closing a tab ends its process.

What this module adds to textual-serve's :class:`~textual_serve.server.Server` (a subclass that overrides its
public handlers; the only private name used is ``AppService._process``, see :data:`TEXTUAL_SERVE_CHECKED`):

- Only our own page may drive the explorer. A websocket upgrade is refused (HTTP 403, one line on stderr, no
  process started) unless its ``Origin`` is one of :func:`allowed_origins` (the URL printed at start, its
  loopback aliases, ``--public-url``). An upgrade without ``Origin`` (no browser sends one: browsers always set
  it on websockets) is accepted from a loopback client only. Every request's ``Host`` must name the server too,
  so a DNS-rebound name (``evil.example`` resolving to 127.0.0.1) gets 403.
- A session's terminal is clamped to :data:`MAX_COLUMNS` x :data:`MAX_ROWS` (the query and every resize);
  a 3000 x 3000 request once held 462 MB.
- When its socket closes, a session's explorer is asked to quit, then sent SIGTERM after
  :data:`QUIT_GRACE_S`, then SIGKILL after :data:`TERM_GRACE_S`; Ctrl+C on the server does the same for every
  session at once.
- The page is ours (:func:`page_html`): it loads only textual-serve's own script, style sheet and Roboto Mono
  font files from this server (no web fonts, no CDN: GPU boxes are often offline), falls back to the system's
  monospace fonts, and its Content-Security-Policy forbids loading anything from elsewhere.
- ``--public-url`` is the address a browser uses when it is not the one served (an SSH tunnel on another local
  port, a reverse proxy): the page's URLs and the allowed ``Origin`` follow it.

The server listens on 127.0.0.1 (this machine only) unless another host is given. Any other host is allowed,
with a warning on stderr: there is no authentication, so everyone who can reach the port can start explorer
processes on this machine (and save scenario files with its permissions).

Nothing here imports Textual or textual-serve until :func:`run_serve` is called, so ``roofline --help`` stays
fast and textual-serve stays optional.

Modules: :mod:`~roofline.tui.cli.serve_command` (the command each session runs), :mod:`~roofline.tui.cli.serve_origin`
(hosts, origins, the Host/Origin checks), :mod:`~roofline.tui.cli.serve_page` (the page and its CSP); this module
holds sizes, sessions, the server and :func:`run_serve`. Their public names are importable from here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import sys

from roofline.tui.cli.serve_command import DEFAULT_MAX_SESSIONS, build_command, explorer_args_from_namespace
from roofline.tui.cli.serve_origin import (
    Origin,
    _check_host_port,
    _shown,
    allowed_origins,
    check_public_url,
    is_loopback,
    parse_origin,
    public_url,
    refusal,
)
from roofline.tui.cli.serve_page import content_security_policy, full_page_html, page_html, websocket_url

__all__ = [
    "DEFAULT_HOST", "DEFAULT_MAX_SESSIONS", "DEFAULT_PORT", "MAX_COLUMNS", "MAX_ROWS", "NOT_INSTALLED",
    "QUIT_GRACE_S", "TERM_GRACE_S",
    "TEXTUAL_SERVE_CHECKED", "Origin", "allowed_origins", "build_command", "check_public_url", "clamp_size",
    "content_security_policy", "end_process", "explorer_args_from_namespace", "is_loopback", "page_html",
    "parse_origin", "public_url", "refusal", "relay", "run_serve", "server_class", "websocket_url",
]

NOT_INSTALLED = "textual-serve is not installed: pip install 'roofline-explorer[serve]'"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000

MAX_COLUMNS = 500  # widest terminal a session may ask for (cells)
MAX_ROWS = 200  # tallest terminal a session may ask for (cells)
DEFAULT_COLUMNS, DEFAULT_ROWS = 80, 24  # when the query's size is missing or not a number (as textual-serve)
QUIT_GRACE_S = 3.0  # after the socket closes: time to quit on its own before SIGTERM
TERM_GRACE_S = 3.0  # after SIGTERM: time before SIGKILL
# The textual-serve release whose private ``AppService._process`` (the session's asyncio Process, set by
# ``AppService._open_app_process``) this module reads; tests/cli/test_serve_security.py fails when it changes.
# No public path reaches the process: AppService's public surface is start/stop/stdin and the packet senders, and
# stop() only asks the app to quit, so a session that ignores it would outlive its socket without this.
TEXTUAL_SERVE_CHECKED = "1.1.3"


# ---------------------------------------------------------------- sizes and processes


def _whole_or(value: object, default: int) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) else default
    if isinstance(value, str) and len(value) <= 20:
        with contextlib.suppress(ValueError):
            return int(value.strip())
    return default


def clamp_size(width: object, height: object) -> tuple[int, int]:
    """A terminal size a session may have: whole numbers in 1..MAX_COLUMNS x 1..MAX_ROWS.

    Anything not a number (missing, text, a 5,000-digit string) means 80 x 24, as textual-serve does.
    """
    columns = min(max(_whole_or(width, DEFAULT_COLUMNS), 1), MAX_COLUMNS)
    rows = min(max(_whole_or(height, DEFAULT_ROWS), 1), MAX_ROWS)
    return columns, rows


async def end_process(process: asyncio.subprocess.Process, *, quit_grace_s: float | None = None,
                      term_grace_s: float | None = None) -> str:
    """Wait ``quit_grace_s`` (:data:`QUIT_GRACE_S`) for ``process`` to exit, then SIGTERM, ``term_grace_s``
    (:data:`TERM_GRACE_S`) later SIGKILL. Returns how it ended: ``"exited"``, ``"terminated"`` or ``"killed"``.
    """
    quit_grace_s = QUIT_GRACE_S if quit_grace_s is None else quit_grace_s
    term_grace_s = TERM_GRACE_S if term_grace_s is None else term_grace_s

    async def exits_within(seconds: float) -> bool:
        try:
            await asyncio.wait_for(process.wait(), seconds)
        except asyncio.TimeoutError:
            return False
        return True

    if await exits_within(quit_grace_s):
        return "exited"
    with contextlib.suppress(ProcessLookupError):
        process.terminate()
    if await exits_within(term_grace_s):
        return "terminated"
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    await process.wait()
    return "killed"


# ---------------------------------------------------------------- the server


def _log(line: str) -> None:
    print(f"roofline serve: {line}", file=sys.stderr, flush=True)


async def relay(websocket, service) -> None:
    """The browser's messages (textual-serve's page protocol) to a session's AppService, until the socket closes.

    Keys (``stdin``), ``resize`` (clamped by :func:`clamp_size`), ``ping``, ``blur``, ``focus``; anything else,
    or malformed, is ignored rather than ending the session.
    """
    from aiohttp import WSMsgType

    async for message in websocket:
        if message.type != WSMsgType.TEXT:
            continue
        try:
            envelope = json.loads(message.data)
        except ValueError:
            continue
        if not isinstance(envelope, list) or not envelope:
            continue
        kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
        if kind == "stdin" and isinstance(data, str):
            await service.send_bytes(data.encode("utf-8", "replace"))
        elif kind == "resize" and isinstance(data, dict):
            await service.set_terminal_size(*clamp_size(data.get("width"), data.get("height")))
        elif kind == "ping":
            await websocket.send_json(["pong", data])
        elif kind == "blur":
            await service.blur()
        elif kind == "focus":
            await service.focus()


def server_class():
    """textual-serve's ``Server`` with roofline's checks, page and session ends (imports textual-serve)."""
    from aiohttp import web
    from textual_serve.app_service import AppService
    from textual_serve.server import Server

    class Session:
        """One browser tab: its websocket and the explorer process textual-serve's AppService runs for it."""

        def __init__(self, websocket: web.WebSocketResponse, service: AppService) -> None:
            self.websocket, self.service = websocket, service
            self.starting: asyncio.Future | None = None  # service.start(): the process is being opened
            self._ending: asyncio.Task | None = None

        def end(self) -> asyncio.Task:
            """Ask the explorer to quit, SIGTERM then SIGKILL it if it does not, close the socket (once)."""
            if self._ending is None:
                self._ending = asyncio.ensure_future(self._end())
            return self._ending

        async def _end(self) -> None:
            if self.starting is not None:  # Ctrl+C while the process is being opened: wait for its handle
                await asyncio.wait({self.starting})
            stopping = asyncio.ensure_future(self.service.stop())  # sends "quit", then waits for the relay
            process = getattr(self.service, "_process", None)  # private: see TEXTUAL_SERVE_CHECKED
            if process is not None:
                how = await end_process(process)
                if how != "exited":
                    _log(f"session process {process.pid} {how} after its socket closed")
            with contextlib.suppress(Exception):  # a timeout, or a pipe already closed
                await asyncio.wait_for(stopping, TERM_GRACE_S)
            if not self.websocket.closed:
                with contextlib.suppress(Exception):
                    await self.websocket.close()

    class RooflineServer(Server):
        def __init__(self, command: str, *, host: str, port: int, title: str, public_url: str,
                     allowed: frozenset[Origin], max_sessions: int = DEFAULT_MAX_SESSIONS) -> None:
            super().__init__(command, host=host, port=port, title=title, public_url=public_url)
            self.allowed = allowed
            self.max_sessions = max_sessions
            self.sessions: set[Session] = set()
            self.opening = 0  # upgrades accepted whose session is not in ``sessions`` yet

        def _full(self) -> web.Response | None:
            """HTTP 503 and a page that says so while :attr:`max_sessions` sessions are open, else None."""
            if len(self.sessions) + self.opening < self.max_sessions:
                return None
            return web.Response(status=503, text=full_page_html(title=self.title, max_sessions=self.max_sessions),
                                content_type="text/html", headers={"Retry-After": "30"})

        def _refuse(self, request: web.Request, websocket: bool) -> web.Response | None:
            reason = refusal(host_header=request.headers.get("Host"), origin_header=request.headers.get("Origin"),
                             client=request.remote, allowed=self.allowed, websocket=websocket)
            if reason is None:
                return None
            _log(f"refused {'a websocket' if websocket else request.method + ' ' + _shown(request.path)} "
                 f"from {request.remote}: {reason}")
            return web.Response(status=403, text=reason + "\n")

        async def on_startup(self, app: web.Application) -> None:
            """Nothing: run_serve prints the address (textual-serve prints a logo here)."""

        async def on_shutdown(self, app: web.Application) -> None:
            """Ctrl+C: end every session's process (quit, SIGTERM, SIGKILL) before aiohttp waits for handlers."""
            await asyncio.gather(*(session.end() for session in list(self.sessions)), return_exceptions=True)

        async def handle_index(self, request: web.Request) -> web.StreamResponse:
            refused = self._refuse(request, websocket=False)
            if refused is not None:
                return refused
            full = self._full()
            if full is not None:
                return full
            font_size_px = min(max(_whole_or(request.query.get("fontsize"), 16), 6), 64)
            page = page_html(title=self.title, base_url=self.public_url, font_size_px=font_size_px)
            return web.Response(text=page, content_type="text/html",
                                headers={"Content-Security-Policy": content_security_policy(self.public_url),
                                         "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff"})

        async def handle_download(self, request: web.Request) -> web.StreamResponse:
            refused = self._refuse(request, websocket=False)
            return refused if refused is not None else await super().handle_download(request)

        async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
            refused = self._refuse(request, websocket=True)
            if refused is not None:
                return refused
            full = self._full()
            if full is not None:
                _log(f"refused a websocket from {request.remote}: {self.max_sessions} sessions open "
                     "(--max-sessions)")
                return full
            columns, rows = clamp_size(request.query.get("width"), request.query.get("height"))
            websocket = web.WebSocketResponse(heartbeat=15, max_msg_size=1 << 20)
            self.opening += 1  # counted from here: a burst of upgrades cannot pass the cap while prepare() waits
            try:
                await websocket.prepare(request)
            finally:
                self.opening -= 1
            service = AppService(self.command, write_bytes=websocket.send_bytes, write_str=websocket.send_str,
                                 close=websocket.close, download_manager=self.download_manager, debug=self.debug)
            session = Session(websocket, service)
            self.sessions.add(session)
            try:
                session.starting = asyncio.ensure_future(service.start(columns, rows))
                await session.starting
                await relay(websocket, service)
            except Exception as err:  # a session's failure ends that session, never the server
                _log(f"session ended by an error: {type(err).__name__}: {err}")
            finally:
                await asyncio.shield(session.end())
                self.sessions.discard(session)
            return websocket

    return RooflineServer


def run_serve(host: str, port: int, explorer_args: list[str], present: bool, public: str | None = None,
              max_sessions: int = DEFAULT_MAX_SESSIONS) -> int:
    """Serve the explorer (or the presentation) to browsers until Ctrl+C; returns the exit status.

    ``public`` is ``--public-url``: the address browsers use, when it is not ``http://host:port``;
    ``max_sessions`` (``--max-sessions``) caps the sessions open at once.
    Raises ValueError for a bad host, port or public URL, a port that cannot be bound, or a missing
    textual-serve.
    """
    _check_host_port(host, port)
    if public is not None:
        public = check_public_url(public)
    try:
        server_cls = server_class()
    except ImportError:
        raise ValueError(NOT_INSTALLED) from None

    url = public or public_url(host, port)
    if not is_loopback(host):
        print(f"roofline serve: warning: listening on {host}:{port}: the explorer is reachable from the network, "
              "without authentication, and every visitor starts a process on this machine", file=sys.stderr)
    command = build_command(explorer_args, present)
    title = "roofline presentation" if present else "roofline explorer"
    # Server's own default public URL is http://{host}:{port}, which is wrong for IPv6 literals and wildcards.
    server = server_cls(command, host=host.strip("[]"), port=port, title=title, public_url=url,
                        allowed=allowed_origins(host, port, public), max_sessions=max_sessions)
    print(f"roofline serve: open {url}/ in a browser (Ctrl+C stops)", flush=True)
    try:
        server.serve()
    except OSError as err:  # typically EADDRINUSE / EACCES at bind time
        raise ValueError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None
    return 0
