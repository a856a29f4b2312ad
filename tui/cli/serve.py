"""``roofline serve``: the explorer in a web browser, through the optional ``textual-serve`` package.

textual-serve (``pip install 'roofline-explorer[serve]'``) runs a small aiohttp web server. Each browser tab
that opens the page gets its own copy of the explorer: the server starts :func:`build_command` as a shell
command with Textual's web driver and relays the screen and the keys over a websocket. Nothing is shared
between tabs, and closing a tab ends its process.

The server listens on 127.0.0.1 (this machine only) unless another host is given. Any other host is allowed,
with a warning on stderr: there is no authentication, so everyone who can reach the port can start explorer
processes on this machine (and save scenario files with its permissions).

Nothing here imports Textual or textual-serve until :func:`run_serve` is called, so ``roofline --help`` stays
fast and textual-serve stays optional.
"""

from __future__ import annotations

import argparse
import ipaddress
import shlex
import socket
import sys
from pathlib import Path

NOT_INSTALLED = "textual-serve is not installed: pip install 'roofline-explorer[serve]'"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
_WILDCARD_HOSTS = {"0.0.0.0", "::", ""}
# explorer flag -> attribute of the parsed top-level namespace (tui/cli.py build_parser)
_EXPLORER_FLAGS = {"--hardware": "hardware", "--model": "model", "--batch": "batch", "--prompt": "prompt",
                   "--output": "output", "--tp": "tp", "--pp": "pp", "--weights": "weights", "--kv": "kv",
                   "--scenario": "scenario"}


def build_command(explorer_args: list[str], present: bool) -> str:
    """The shell command textual-serve runs for each browser session.

    ``<python> -m roofline.tui.cli [explorer args]``, or with ``present`` the ``present`` subcommand after the
    explorer args (they are top-level options, so argparse needs them before the subcommand). Every word is
    shell-quoted: textual-serve hands the string to ``/bin/sh``.
    """
    words = [sys.executable, "-m", "roofline.tui.cli", *explorer_args]
    if present:
        words.append("present")
    return shlex.join(words)


def explorer_args_from_namespace(args: argparse.Namespace) -> list[str]:
    """The explorer flags the user gave (``roofline --hardware X serve``), as words to pass through.

    A ``--scenario`` path is made absolute so that it does not depend on the server's working directory.
    """
    words: list[str] = []
    for flag, attr in _EXPLORER_FLAGS.items():
        value = getattr(args, attr, None)
        if value is None:
            continue
        if attr == "scenario":
            value = Path(value).expanduser().resolve()
        words += [flag, str(value)]
    return words


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses (127.0.0.0/8, ::1)."""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _check_host_port(host: str, port: int) -> None:
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ValueError(f"--port: {port!r} is out of range (1 to 65,535)")
    if not isinstance(host, str) or not host.strip() or any(c.isspace() for c in host):
        raise ValueError(f"--host: {host!r} is not a host name or address")
    if host in _WILDCARD_HOSTS:
        return
    try:
        socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as err:
        raise ValueError(f"--host: cannot resolve {host!r} ({err})") from None


def public_url(host: str, port: int) -> str:
    """The URL a browser should open (it also carries the websocket address into the page).

    A wildcard bind (0.0.0.0, ::) is not an address a browser can use, so the machine's host name stands in.
    """
    shown = socket.gethostname() if host in _WILDCARD_HOSTS else host.strip("[]")
    if ":" in shown:  # IPv6 literal
        shown = f"[{shown}]"
    return f"http://{shown}:{port}"


def run_serve(host: str, port: int, explorer_args: list[str], present: bool) -> int:
    """Serve the explorer (or the presentation) to browsers until Ctrl+C; returns the exit status.

    Raises ValueError for a bad host or port, a port that cannot be bound, or a missing textual-serve.
    """
    _check_host_port(host, port)
    try:
        from textual_serve.server import Server
    except ImportError:
        raise ValueError(NOT_INSTALLED) from None

    url = public_url(host, port)
    if not is_loopback(host):
        print(f"roofline serve: warning: listening on {host}:{port}: the explorer is reachable from the network, "
              "without authentication, and every visitor starts a process on this machine", file=sys.stderr)
    command = build_command(explorer_args, present)
    title = "roofline presentation" if present else "roofline explorer"
    # Server's own default public URL is http://{host}:{port}, which is wrong for IPv6 literals and wildcards.
    server = Server(command, host=host.strip("[]"), port=port, title=title, public_url=url)
    print(f"roofline serve: open {url}/ in a browser (Ctrl+C stops)", flush=True)
    try:
        server.serve()
    except OSError as err:  # typically EADDRINUSE / EACCES at bind time
        raise ValueError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None
    return 0
