"""The page every ``roofline serve`` browser tab gets, and its Content-Security-Policy.

It loads only textual-serve's own script, style sheet and Roboto Mono font files from this server (no web fonts, no
CDN: GPU boxes are often offline) and falls back to the system's monospace fonts.
"""

from __future__ import annotations

import html
from string import Template

from roofline.tui.cli.serve_origin import parse_origin

_PAGE = Template("""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>$title</title>
<link rel="stylesheet" href="${static}css/xterm.css">
<style>
/* textual-serve's terminal asks for "Roboto Mono"; the font files come from this server, never the web. */
@font-face { font-family: "Roboto Mono"; font-style: normal; font-weight: 100 700;
  src: url("${static}fonts/RobotoMono-VariableFont_wght.ttf") format("truetype"); }
@font-face { font-family: "Roboto Mono"; font-style: italic; font-weight: 100 700;
  src: url("${static}fonts/RobotoMono-Italic-VariableFont_wght.ttf") format("truetype"); }
html, body { margin: 0; height: 100%; overflow: hidden; background: #0c181f; color: #e8e8e8;
  font-family: "Roboto Mono", ui-monospace, "SF Mono", Menlo, Consolas, "DejaVu Sans Mono", monospace; }
.note { position: fixed; inset: 0; display: flex; flex-direction: column; align-items: center;
  justify-content: center; gap: 1em; background: #0c181f; z-index: 10; }
.note a { color: inherit; border: 1px solid currentColor; padding: 0.5em 1.5em; text-decoration: none; }
body.-first-byte .starting, .ended, #start { display: none; }
body.-closed .ended, #start.-delay { display: flex; }
</style>
<script src="${static}js/textual.js"></script>
</head>
<body>
<div class="note starting"><div>$title</div><a id="start" href="$start">Start</a></div>
<div class="note ended"><div>Session ended.</div><a href="$start">Restart</a></div>
<div id="terminal" class="textual-terminal" data-session-websocket-url="$websocket" data-font-size="$font_size">
</div>
</body>
</html>
""")


def websocket_url(base_url: str) -> str:
    """The session websocket under ``base_url`` (http -> ws, https -> wss)."""
    scheme, rest = base_url.split(":", 1)
    return ("wss:" if scheme == "https" else "ws:") + rest + "/ws"


def page_html(*, title: str, base_url: str, font_size_px: int) -> str:
    """The page every browser tab gets: textual-serve's terminal script, fed from ``base_url`` only."""
    values = {"title": title, "static": base_url + "/static/", "websocket": websocket_url(base_url),
              "font_size": str(font_size_px), "start": base_url + "/"}
    return _PAGE.substitute({key: html.escape(value) for key, value in values.items()})


_FULL = Template("""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>$title: full</title>
</head>
<body>
<h1>$title: the server is full</h1>
<p>This server runs at most $max_sessions sessions at once (roofline serve --max-sessions), and that many are open.
Try again when one closes.</p>
</body>
</html>
""")


def full_page_html(*, title: str, max_sessions: int) -> str:
    """The page (HTTP 503) a browser gets while :func:`~.serve.server_class`'s session cap is reached."""
    return _FULL.substitute(title=html.escape(title), max_sessions=f"{max_sessions:,}")


def content_security_policy(base_url: str) -> str:
    """Scripts, styles, fonts and images from ``base_url``'s origin only, the websocket to it, no framing."""
    scheme, host, port = parse_origin(base_url)
    shown = f"[{host}]" if ":" in host else host
    origin = f"{scheme}://{shown}:{port}"
    ws_origin = f"{'wss' if scheme == 'https' else 'ws'}://{shown}:{port}"
    return (f"default-src 'none'; script-src 'self' {origin}; style-src 'self' {origin} 'unsafe-inline'; "
            f"font-src 'self' {origin}; img-src 'self' {origin} data:; connect-src 'self' {origin} {ws_origin}; "
            "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
