"""Run a command under a pseudo-terminal of a given size and watch what it writes to it.

The app benchmarks share this: the child's stdin, stdout and stderr are the slave side of a
pty (it is also the child's controlling terminal, in a new session), sized with TIOCSWINSZ
*before* the child starts so it never sees a default 80x24. The parent reads the master side
without blocking (select), timestamps every chunk with ``time.perf_counter()``, sends keys as
raw bytes, and kills and reaps the child at the end.

Every byte read from the master is a byte a real terminal emulator would have had to parse:
that is the terminal traffic the benchmarks count.

"Settled" means no output for ``QUIET_S`` (150 ms). An update's end time is the timestamp of
its last chunk, i.e. the moment the quiet period began, so the quiet period itself is never
part of a measured duration; it only bounds how long a benchmark waits. 150 ms is well above
the gaps between the writes of one Textual frame (a frame goes out in one write, successive
refreshes of one update follow within a few ms at 60 fps) and well below the 500 ms of
a blinking cursor, so it neither splits one update nor merges two.

Child environment: TERM=xterm-256color, COLUMNS/LINES set to the pty size, ROOFLINE_NO_DETECT=1
(so that no GPU probing can happen), and NO_COLOR / TEXTUAL_* variables from the parent removed
so that the run does not depend on the shell it was started from.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import select
import signal
import struct
import subprocess
import termios
import time
from dataclasses import dataclass, field
from pathlib import Path

QUIET_S = 0.150
ALT_SCREEN_ON = b"\x1b[?1049h"
REPO = Path(__file__).resolve().parent.parent
VENV_BIN = REPO / ".venv" / "bin"

# Textual's key names -> the bytes a terminal sends for them.
KEYS = {"plus": b"+", "minus": b"-", "right_square_bracket": b"]", "left_square_bracket": b"[",
        "escape": b"\x1b", "enter": b"\r", "tab": b"\t"}


@dataclass
class Update:
    """What the child wrote between a trigger (spawn or key) and settling."""

    start: float  # perf_counter() at the trigger
    chunks: list[tuple[float, bytes]] = field(default_factory=list)

    @property
    def nbytes(self) -> int:
        return sum(len(data) for _, data in self.chunks)

    @property
    def data(self) -> bytes:
        return b"".join(data for _, data in self.chunks)

    @property
    def seconds(self) -> float:
        """Trigger to the last byte of the update (0 when nothing was written)."""
        return self.chunks[-1][0] - self.start if self.chunks else 0.0


def child_env(cols: int, rows: int, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEXTUAL") and k != "NO_COLOR"}
    env.update({"TERM": "xterm-256color", "COLUMNS": str(cols), "LINES": str(rows), "ROOFLINE_NO_DETECT": "1",
                "PYTHONUNBUFFERED": "1"})
    env.update(extra or {})
    return env


def _set_winsize(fd: int, cols: int, rows: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def _make_controlling_tty() -> None:  # runs in the child, between fork and exec
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class PtySession:
    """One child process on a fresh pty; use as a context manager so it is always reaped."""

    def __init__(self, argv: list[str], cols: int = 160, rows: int = 50, env: dict[str, str] | None = None,
                 cwd: str | Path | None = None) -> None:
        self.argv, self.cols, self.rows = argv, cols, rows
        self.env = child_env(cols, rows, env)
        self.cwd = str(cwd or REPO)
        self.proc: subprocess.Popen | None = None
        self.master = -1
        self.spawned_at = 0.0
        self.total_bytes = 0
        self.eof = False

    # ---- life cycle --------------------------------------------------------------------------------
    def start(self) -> float:
        """Spawn the child; returns the perf_counter() time taken just before the fork."""
        master, slave = os.openpty()
        _set_winsize(slave, self.cols, self.rows)
        os.set_blocking(master, False)
        self.master = master
        self.spawned_at = time.perf_counter()
        self.proc = subprocess.Popen(self.argv, stdin=slave, stdout=slave, stderr=slave, env=self.env,
                                     cwd=self.cwd, start_new_session=True, preexec_fn=_make_controlling_tty,
                                     close_fds=True)
        os.close(slave)
        return self.spawned_at

    def close(self, quit_key: bytes | None = b"q", grace_s: float = 3.0) -> int | None:
        """Ask the child to quit (``quit_key``), then SIGTERM, then SIGKILL; reap it; close the pty."""
        proc = self.proc
        if proc is not None and proc.poll() is None:
            if quit_key:
                with contextlib.suppress(OSError):  # the child may have closed the pty already
                    self.send(quit_key)
                self._drain_until_exit(grace_s)
            for sig in (signal.SIGTERM, signal.SIGKILL):
                if proc.poll() is not None:
                    break
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                self._drain_until_exit(grace_s)
            proc.wait()
        if self.master >= 0:
            os.close(self.master)
            self.master = -1
        return proc.returncode if proc is not None else None

    def _drain_until_exit(self, timeout: float) -> None:
        deadline = time.perf_counter() + timeout
        while self.proc.poll() is None and time.perf_counter() < deadline:
            self.read_for(0.05)  # keep reading, or a child blocked on a full pty never exits

    def __enter__(self) -> PtySession:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    # ---- I/O -----------------------------------------------------------------------------------------
    def send(self, keys: bytes | str) -> float:
        """Write key bytes (or a Textual key name from KEYS, or literal text); returns the send time."""
        data = keys if isinstance(keys, bytes) else KEYS.get(keys, keys.encode())
        sent_at = time.perf_counter()
        os.write(self.master, data)
        return sent_at

    def read_for(self, timeout: float) -> list[tuple[float, bytes]]:
        """Whatever arrives within ``timeout`` seconds (returns as soon as one read succeeds)."""
        if self.eof:
            return []
        ready, _, _ = select.select([self.master], [], [], max(timeout, 0.0))
        if not ready:
            return []
        chunks = []
        while True:
            try:
                data = os.read(self.master, 65536)
            except BlockingIOError:
                break
            except OSError as err:  # EIO: the child closed its side (exited)
                if err.errno == errno.EIO:
                    self.eof = True
                    break
                raise
            if not data:
                self.eof = True
                break
            chunks.append((time.perf_counter(), data))
            self.total_bytes += len(data)
        return chunks

    def wait_settled(self, start: float, quiet_s: float = QUIET_S, timeout: float = 30.0,
                     until=None, empty_after: float | None = None) -> Update:
        """Collect output from ``start`` until ``quiet_s`` passes with none.

        The quiet clock only starts at the first byte (a slow child has not "settled" before it
        has drawn anything), so a trigger that draws nothing waits for ``timeout`` and raises
        TimeoutError, unless ``empty_after`` is given: then nothing at all for that long returns
        an empty Update. ``until(update)``, if given, must also be true before a quiet period
        counts, e.g. "the frame is complete".
        """
        update = Update(start)
        deadline = time.perf_counter() + timeout
        while True:
            now = time.perf_counter()
            if not update.chunks and empty_after is not None and now - start >= empty_after:
                return update
            if now > deadline:
                raise TimeoutError(f"{self.argv[0]}: no settled output within {timeout:.0f} s "
                                   f"({update.nbytes} bytes so far)")
            last = update.chunks[-1][0] if update.chunks else None
            if last is not None and now - last >= quiet_s and (until is None or until(update)):
                return update
            if self.eof:
                if update.chunks:
                    return update
                raise EOFError(f"{self.argv[0]} exited (status {self.proc.poll()}) before drawing anything")
            if last is not None:
                wait = quiet_s - (now - last)
                if wait <= 0:  # quiet, but ``until`` is not satisfied yet: wait for more output
                    wait = deadline - now
            else:
                wait = deadline - now if empty_after is None else min(deadline - now, start + empty_after - now)
            update.chunks.extend(self.read_for(min(max(wait, 0.001), deadline - now)))


def all_rows_drawn_at(update, rows: int) -> float | None:
    """Seconds from ``update``'s start to when every row 1..rows had been drawn on the alternate screen (the frame
    may not be settled yet then), or None when some row never was."""
    wanted, data = set(range(1, rows + 1)), b""
    for stamp, chunk in update.chunks:
        data += chunk
        start = data.find(ALT_SCREEN_ON)
        if start >= 0 and wanted <= rows_drawn(data[start:]):
            return stamp - update.start
    return None


def rows_drawn(data: bytes) -> set[int]:
    """1-based rows a Textual frame positioned the cursor on (``ESC [ row ; col H``)."""
    rows = set()
    i = data.find(b"\x1b[")
    while i >= 0:
        j = i + 2
        while j < len(data) and data[j:j + 1] in b"0123456789;":
            j += 1
        if data[j:j + 1] == b"H":
            head = data[i + 2:j].split(b";")[0]
            rows.add(int(head) if head else 1)
        i = data.find(b"\x1b[", j)
    return rows


def complete_frame(rows: int):
    """An ``until`` for wait_settled: the alternate screen is on and every row has been drawn."""
    wanted = set(range(1, rows + 1))

    def check(update: Update) -> bool:
        data = update.data
        start = data.find(ALT_SCREEN_ON)
        return start >= 0 and wanted <= rows_drawn(data[start:])

    return check


def rss_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process in KiB, from /proc/PID/status: current and peak resident set."""
    values = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(("VmRSS:", "VmHWM:")):
                key, value = line.split(":", 1)
                values[key] = int(value.split()[0])
    return values.get("VmRSS", 0), values.get("VmHWM", 0)


def explorer_argv() -> list[str]:
    """The installed ``roofline`` entry point (what a user runs), falling back to ``-m``."""
    entry = VENV_BIN / "roofline"
    if entry.exists():
        return [str(entry)]
    return [str(VENV_BIN / "python"), "-m", "roofline.tui.cli"]


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..1) of a non-empty list."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]
