"""The audience screen and the presenter's screen find each other through one small JSON state file.

The file lives in the user's runtime folder (platformdirs' ``user_runtime_dir``: ``$XDG_RUNTIME_DIR/roofline``
on Linux), the folder made 0700 and the file 0600; there is no socket and no network listener. Each screen writes
the slide it moves to (a new file renamed over the old one, so a reader sees one state or the next, never half)
and polls the file a few times a second for a newer ``seq`` written by the other. Either runs alone.
No Textual here.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from roofline.presets.safe_files import FileRefusedError, read_bytes_capped

STATE_NAME = "talk.json"
MAX_STATE_BYTES = 64 * 1024
STATE_VERSION = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class TalkState:
    deck: str  # the deck's path as given to read_deck (resolved), "" for none
    position: int  # 0-based slide shown
    seq: int  # raised by one at each write: the newest write wins
    started_at_s: float  # wall-clock seconds (time.time) when the talk started: shared by both processes
    slide_at_s: float  # wall-clock seconds when the current slide was reached
    writer_pid: int  # the process that wrote this state (alive: the talk is running)


def default_state_path() -> Path:
    """``<user runtime folder>/roofline/talk.json`` (the platform's per-user folder for sockets and the like)."""
    import platformdirs

    with warnings.catch_warnings():  # no XDG_RUNTIME_DIR: platformdirs falls back to /tmp/runtime-<uid> and says so
        warnings.simplefilter("ignore")
        return Path(platformdirs.user_runtime_dir("roofline")) / STATE_NAME


def _private_folder(folder: Path) -> None:
    """Create ``folder`` 0700 if missing; refuse one that is a link, not ours, or open to others."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode):
        raise OSError(f"{folder}: not a folder")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise OSError(f"{folder}: owned by another user")
    if os.name != "nt" and stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(folder, 0o700)


def read_state(path: Path) -> TalkState | None:
    """The state in ``path``; None when there is none or it is not one (a file being replaced is never half)."""
    try:
        data = json.loads(read_bytes_capped(path, what="talk state", max_bytes=MAX_STATE_BYTES))
    except (FileRefusedError, OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
        return None
    try:
        state = TalkState(deck=str(data["deck"]), position=int(data["position"]), seq=int(data["seq"]),
                          started_at_s=float(data["started_at_s"]), slide_at_s=float(data["slide_at_s"]),
                          writer_pid=int(data["writer_pid"]))
    except (KeyError, TypeError, ValueError):
        return None
    return state if state.position >= 0 else None


def write_state(path: Path, state: TalkState) -> None:
    """Write ``state`` atomically: a new 0600 file in the same folder, renamed over the old one."""
    _private_folder(path.parent)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)  # 0600, O_EXCL
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"version": STATE_VERSION, **asdict(state)}, out)
        os.replace(temp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    if os.name == "nt":  # os.kill there would end the process; a state file's age is the guide instead
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def live_state(path: Path) -> TalkState | None:
    """The running talk's state: the file's writer is still alive."""
    state = read_state(path)
    return state if state is not None and process_alive(state.writer_pid) else None


class TalkLink:
    """One screen's end of the link: join a running talk of the same deck or start one, publish moves, poll."""

    def __init__(self, path: Path, deck: str, clock: Callable[[], float] = time.time) -> None:
        self.path, self.deck, self.clock = path, deck, clock
        self.state: TalkState | None = None
        self.error: str | None = None  # why the link is off (the screen still works alone)
        self._seen: tuple[int, int, int] | None = None  # (inode, mtime_ns, size) of the file last read

    def open(self) -> TalkState:
        """The running talk's state when its deck is this deck, else a new talk at slide 1 (written)."""
        running = live_state(self.path)
        if running is not None and running.deck == self.deck:
            self.state = replace(running, writer_pid=os.getpid())
            self._seen = self._stamp()
            return self.state
        now = self.clock()
        fresh = TalkState(deck=self.deck, position=0, seq=(running.seq + 1) if running else 1,
                          started_at_s=now, slide_at_s=now, writer_pid=os.getpid())
        self.state = fresh
        self._write(fresh)
        return fresh

    def publish(self, position: int) -> TalkState:
        """This screen moved to ``position``: a newer state for the other screen."""
        assert self.state is not None
        if position == self.state.position:
            return self.state
        on_file = read_state(self.path)
        seq = max(self.state.seq, on_file.seq if on_file else 0) + 1
        self.state = replace(self.state, position=position, seq=seq, slide_at_s=self.clock(), writer_pid=os.getpid())
        self._write(self.state)
        return self.state

    def poll(self) -> TalkState | None:
        """A state newer than this screen's, written by the other screen; None when nothing changed."""
        if self.state is None or self.error is not None:
            return None
        stamp = self._stamp()
        if stamp is None or stamp == self._seen:
            return None
        self._seen = stamp
        newer = read_state(self.path)
        if newer is None or newer.deck != self.deck or newer.seq <= self.state.seq:
            return None
        self.state = newer
        return newer

    def _stamp(self) -> tuple[int, int, int] | None:
        try:
            info = os.stat(self.path)
        except OSError:
            return None
        return info.st_ino, info.st_mtime_ns, info.st_size

    def _write(self, state: TalkState) -> None:
        try:
            write_state(self.path, state)
            self._seen = self._stamp()
        except OSError as err:
            self.error = str(err)
