"""Run a GPU listing tool without trusting it: a deadline, a cap on what it prints, and text made printable.

- The tool runs in a new session with no stdin; at the deadline it and everything it started get SIGKILL.
- stdout is read up to :data:`MAX_TOOL_OUTPUT_BYTES` (1 MiB, far above any real listing: 16 GPUs of
  ``amd-smi static --json`` are about 20 kB); one byte more ends the tool and the answer is a reason, so a runaway
  tool costs neither memory nor parsing time. stderr keeps its first :data:`MAX_STDERR_BYTES` and is drained after.
- :func:`printable` removes terminal escape sequences and control characters (ECMA-48 CSI and OSC forms, C0/C1
  controls, Unicode format characters such as bidi overrides) from anything a tool says that may be printed.

Nothing here raises to the caller: every failure is a one-line reason naming the tool.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
import time
import unicodedata
from collections.abc import Sequence

MAX_TOOL_OUTPUT_BYTES = 1024 * 1024  # 1 MiB of stdout per tool
MAX_STDERR_BYTES = 64 * 1024
# how long a killed tool may take to go away before it is abandoned (a driver hang can block even SIGKILL)
KILL_GRACE_S = 1.0
MAX_REASON_CHARS = 240
_CHUNK_BYTES = 64 * 1024
# ESC [ ... final (CSI), ESC ] ... BEL or ESC \ (OSC), other two-byte ESC sequences, and the 8-bit CSI (ECMA-48)
_ESCAPE_SEQUENCE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
                              r"|\x1b[@-Z\\-_]")
_UNPRINTABLE = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def printable(text: str) -> str:
    """``text`` on one line, without escape sequences or control/format characters; whitespace collapsed."""
    text = _ESCAPE_SEQUENCE.sub("", text)
    text = "".join(" " if char.isspace() else char for char in text
                   if char.isspace() or unicodedata.category(char) not in _UNPRINTABLE)
    return " ".join(text.split())


def short(text: str, limit: int = MAX_REASON_CHARS) -> str:
    """:func:`printable`, cut to ``limit`` characters with an ellipsis."""
    line = printable(text[: 4 * limit])  # what is cut anyway is never scanned
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _kill(process: subprocess.Popen) -> None:
    try:
        if hasattr(os, "killpg"):
            os.killpg(process.pid, signal.SIGKILL)  # the tool and anything it started
        else:
            process.kill()
    except OSError:
        pass


class _CappedReader(threading.Thread):
    """Reads a pipe into memory up to ``cap`` bytes; ``overflowed`` once more came. With ``drain`` it keeps reading
    (and dropping) past the cap, so a chatty stderr cannot block the tool."""

    def __init__(self, stream, cap: int, *, drain: bool) -> None:
        super().__init__(daemon=True, name="roofline-tool-reader")
        self.stream, self.cap, self.drain = stream, cap, drain
        self.data = bytearray()
        self.overflowed = False
        self.finished = threading.Event()

    def run(self) -> None:
        try:
            while True:
                chunk = self.stream.read1(_CHUNK_BYTES) if hasattr(self.stream, "read1") else \
                    self.stream.read(_CHUNK_BYTES)
                if not chunk:
                    break
                room = self.cap - len(self.data)
                if room > 0:
                    self.data += chunk[:room]
                if len(chunk) > room:
                    self.overflowed = True
                    if not self.drain:
                        break
        except (OSError, ValueError):  # the pipe closed under us
            pass
        finally:
            self.finished.set()

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


def run_capped(path: str, tool: str, args: Sequence[str], timeout_s: float) -> tuple[str | None, str | None]:
    """(stdout, None) when ``path`` ran and exited 0 within ``timeout_s`` printing at most
    :data:`MAX_TOOL_OUTPUT_BYTES`; else (None, reason). Never outlives the timeout by more than
    :data:`KILL_GRACE_S`."""
    deadline = time.monotonic() + timeout_s
    try:
        process = subprocess.Popen([path, *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, start_new_session=True)
    except (OSError, ValueError) as err:
        return None, f"{tool} could not start: {short(str(err))}"
    out = _CappedReader(process.stdout, MAX_TOOL_OUTPUT_BYTES, drain=False)
    err = _CappedReader(process.stderr, MAX_STDERR_BYTES, drain=True)
    out.start()
    err.start()
    try:
        if not out.finished.wait(max(0.0, deadline - time.monotonic())):
            return None, f"{tool} did not answer within {timeout_s:.3g} s"
        if out.overflowed:
            return None, (f"{tool} printed more than {MAX_TOOL_OUTPUT_BYTES // (1024 * 1024)} MiB "
                          "(no listing is that long); it was stopped")
        try:
            returncode = process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return None, f"{tool} did not answer within {timeout_s:.3g} s"
        err.finished.wait(max(0.0, deadline - time.monotonic()))
        stdout = out.text()
        if returncode != 0:
            said = short(stdout.strip() or err.text().strip()) or "no output"
            return None, f"{tool} failed (exit {returncode}): {said}"
        return stdout, None
    finally:
        if process.poll() is None:
            _kill(process)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(KILL_GRACE_S)
            out.finished.wait(KILL_GRACE_S)
        for reader, stream in ((out, process.stdout), (err, process.stderr)):
            if stream is not None and reader.finished.is_set():  # a reader still blocked keeps its pipe
                stream.close()
