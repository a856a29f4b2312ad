"""Hostile strings for every output that shows outside text (issue 30 item 11): terminal escape sequences a deck
title, a preset name, a config file or a tool's output could carry. Each must reach no terminal and no file with
a control byte left in it. Shared by tests/cli (report, plan, presets, present exports, serve) and the explorer's
and the live talk's tests.

Sources for what each does: xterm control sequences (https://invisible-island.net/xterm/ctlseqs/ctlseqs.html):
OSC 52 sets the selection (clipboard), OSC 0/2 the window title, OSC 8 a hyperlink (egmontkob's "Hyperlinks in
terminal emulators" gist), CSI the cursor and colours, 0x9b the 8-bit CSI; U+202E/U+2066 the Unicode
bidirectional overrides and isolates (UAX #9; CVE-2021-42574, "Trojan Source").
"""

from __future__ import annotations

import unicodedata

HOSTILE = {
    "osc52_clipboard": "deck \x1b]52;c;cm0gLXJmIH4=\x07 title",
    "osc52_st": "deck \x1b]52;c;cm0gLXJmIH4=\x1b\\ title",
    "osc0_title": "\x1b]0;pwned\x07name",
    "osc8_link": "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "csi_clear": "name\x1b[2J\x1b[H\x1b[31mred",
    "bel": "ding\x07dong",
    "c1_csi": "eight\x9b2Jbit",
    "c1_osc": "eight\x9d0;title\x9cbit",
    "nul": "nul\x00byte",
    "cr_overwrite": "safe\rEVIL",
    "backspace": "abc\x08\x08\x08xyz",
    "del": "del\x7fete",
    "bidi_override": "user\u202etxt.exe",
    "bidi_isolate": "a\u2066b\u2069c",
}

# control characters that must never be left: C0 except newline and tab, DEL, C1, bidi controls
_ALLOWED_CONTROLS = frozenset("\n\t")


def control_characters(text: str) -> list[str]:
    """The control and format characters (Unicode Cc, Cf) in ``text`` other than newline and tab, as ``repr``s."""
    return [repr(c) for c in text if c not in _ALLOWED_CONTROLS and unicodedata.category(c) in ("Cc", "Cf")]


def assert_clean(text: str, where: str = "output") -> None:
    found = control_characters(text)
    assert not found, f"{where} carries control characters: {found[:8]}"


def toml_string(value: str) -> str:
    """``value`` as a TOML basic string: every control character written as a ``\\uXXXX`` escape, so the TOML
    is valid and the parsed string carries the raw character."""
    out = []
    for char in value:
        if char in '"\\' or unicodedata.category(char) in ("Cc", "Cf"):
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'
