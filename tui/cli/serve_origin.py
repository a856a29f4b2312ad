"""Who ``roofline serve`` answers: the served URL, the allowed origins, and the Host/Origin checks of every request.

Only our own page may drive the explorer: a websocket upgrade needs an ``Origin`` among :func:`allowed_origins` (or,
without ``Origin``, a loopback client), and every request's ``Host`` must name this server (DNS rebinding).
"""

from __future__ import annotations

import contextlib
import ipaddress
import re
import socket
from urllib.parse import urlsplit

_WILDCARD_HOSTS = {"0.0.0.0", "::", ""}
_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")

Origin = tuple[str, str, int]  # (scheme, host in lower case without IPv6 brackets, port)


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
    """The URL a browser should open when no ``--public-url`` is given (it carries the websocket address).

    A wildcard bind (0.0.0.0, ::) is not an address a browser can use, so the machine's host name stands in.
    """
    shown = socket.gethostname() if host in _WILDCARD_HOSTS else host.strip("[]")
    if ":" in shown:  # IPv6 literal
        shown = f"[{shown}]"
    return f"http://{shown}:{port}"


def _default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


def parse_origin(text: str) -> Origin | None:
    """``scheme://host[:port]`` as (scheme, host, port), the port filled in; None unless an http(s) origin."""
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError:  # a port out of range or not a number, a bad IPv6 literal
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.username or parts.password:
        return None
    return parts.scheme, parts.hostname, port or _default_port(parts.scheme)


def check_public_url(url: str) -> str:
    """``--public-url``, checked and without a trailing slash: ``http(s)://host[:port]``, no path or query.

    textual-serve builds the page's script, font and websocket URLs by appending paths to it, and the page
    asks for downloads at its own origin, so a path prefix would not survive; a proxy must serve at the root.
    The host is a DNS name (letters, digits, hyphens, dots: RFC 1123), an IPv4 address or a bracketed IPv6
    address, and nothing else: the URL lands in the page and in the Content-Security-Policy header, where a quote
    or a space (``http://a"onmouseover="alert(1)``) would be markup or a new directive.
    """
    cleaned = url.strip().rstrip("/") if isinstance(url, str) else ""
    match = _PUBLIC_URL.fullmatch(cleaned)
    if match is None or parse_origin(cleaned) is None or not _host_is_name_or_address(match.group("host")):
        raise ValueError(f"--public-url: {_shown(url if isinstance(url, str) else str(url))} is not "
                         "http(s)://HOST[:PORT] (a host name or address; no path, query or user)")
    return cleaned


_PUBLIC_URL = re.compile(r"(?i:http|https)://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::[0-9]{1,5})?", re.ASCII)
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?", re.ASCII)


def _host_is_name_or_address(host: str) -> bool:
    """An RFC 1123 host name (labels of letters, digits and inner hyphens, 63 characters at most, 253 in all), an
    IPv4 address, or an IPv6 address in brackets."""
    if host.startswith("["):
        try:
            return ipaddress.ip_address(host[1:-1]).version == 6
        except ValueError:
            return False
    name = host[:-1] if host.endswith(".") else host
    return 0 < len(name) <= 253 and all(_LABEL.fullmatch(label) for label in name.split("."))


def allowed_origins(host: str, port: int, public: str | None = None) -> frozenset[Origin]:
    """The origins whose pages may open a session, and so the names a request's ``Host`` may carry.

    The URL printed at start; for a loopback or wildcard bind also ``localhost``, ``127.0.0.1`` and ``[::1]``
    on the port (the same machine, whatever the user typed); for a wildcard bind the machine's host names and
    their addresses; and ``--public-url``. Any other name reaches the server only through DNS tricks or a proxy
    that does not say so: give it as ``--public-url``.
    """
    origins = {parse_origin(public_url(host, port))}
    if host in _WILDCARD_HOSTS or is_loopback(host):
        origins |= {("http", name, port) for name in _LOOPBACK_NAMES}
    else:
        origins.add(("http", host.strip("[]").lower(), port))
    if host in _WILDCARD_HOSTS:
        names = {socket.gethostname(), socket.getfqdn()}
        with contextlib.suppress(OSError, UnicodeError):
            names |= {info[4][0] for info in socket.getaddrinfo(socket.gethostname(), port, type=socket.SOCK_STREAM)}
        origins |= {("http", name.lower(), port) for name in names if name}
    if public is not None:
        origins.add(parse_origin(public))
    origins.discard(None)
    return frozenset(origins)


def _shown(text: str, limit: int = 80) -> str:
    """A header value for a log line or a reply: quoted, control characters escaped, cut to ``limit``."""
    return repr(text[:limit] + ("..." if len(text) > limit else ""))


def _host_allowed(value: str, allowed: frozenset[Origin]) -> bool:
    try:
        parts = urlsplit("//" + value.strip())
        name, port = parts.hostname, parts.port
    except ValueError:
        return False
    if not name or parts.path or parts.query or parts.username:
        return False
    return any(host == name and (port == origin_port or (port is None and origin_port == _default_port(scheme)))
               for scheme, host, origin_port in allowed)


def refusal(*, host_header: str | None, origin_header: str | None, client: str | None,
            allowed: frozenset[Origin], websocket: bool) -> str | None:
    """Why a request is refused (one line), or None to serve it.

    Every request: ``Host`` must name this server (DNS rebinding). A websocket upgrade also: ``Origin`` must be
    an allowed origin; without ``Origin`` (not a browser) only a loopback client is served.
    """
    if host_header is None:
        return "no Host header"
    if not _host_allowed(host_header, allowed):
        return f"Host {_shown(host_header)} is not a name this server answers to (see --public-url)"
    if not websocket:
        return None
    if origin_header is None:
        if client is not None and is_loopback(client):
            return None
        return "a websocket without Origin is served to loopback clients only"
    if parse_origin(origin_header) not in allowed:
        return f"Origin {_shown(origin_header)} is not this server's page (see --public-url)"
    return None
