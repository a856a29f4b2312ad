"""The audience screen and the presenter's screen find each other through one small JSON state file.

The file lives in the user's runtime folder (platformdirs' ``user_runtime_dir``: ``$XDG_RUNTIME_DIR/roofline``
on Linux), the folder made 0700 and the file 0600; there is no socket and no network listener. Each screen writes
the slide it moves to (a new file renamed over the old one, so a reader sees one state or the next, never half)
and polls the file a few times a second for a newer ``seq`` written by the other. Either runs alone.
No Textual here.

Each talk has its own file, ``talk-<pid>.json`` (the audience screen's process id): two talks of one user (two
checkouts, two decks, a rehearsal beside a talk) never share a link. The presenter's screen lists the running
talks (:func:`running_talks`), joins the one there is, and asks when there are several (:func:`choose_talk`).
The runtime folder is refused in one line (:class:`TalkFolderError`) when it is not a folder of this user's that
no one else may write: without ``XDG_RUNTIME_DIR``, platformdirs falls back to ``/tmp/runtime-<uid>``, which
another local user can create first.
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
TALK_PREFIX, TALK_SUFFIX = "talk-", ".json"  # talk-<audience pid>.json
MAX_TALK_FILES = 100  # a folder with more is not one this program filled
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
        try:
            return Path(platformdirs.user_runtime_dir("roofline")) / STATE_NAME
        except OSError as err:  # the /tmp fallback is another user's, a link, not a folder: platformdirs refuses
            raise TalkFolderError(f"talk link: the runtime folder: {err.strerror or err}; set XDG_RUNTIME_DIR to "
                                  "a folder of yours (mode 0700)") from None


class TalkFolderError(OSError):
    """The runtime folder cannot hold a private link: one line naming it and what to do."""


def talk_folder(folder: Path | None = None) -> Path:
    """The checked folder that holds the talks' state files (``<runtime folder>/roofline`` unless given; created
    0700 if missing); :class:`TalkFolderError` when it, or the folder above it, is not this user's or is writable
    by others."""
    folder = folder if folder is not None else default_state_path().parent
    check_private_folder(folder.parent, create=True)
    check_private_folder(folder, create=True)
    return folder


def check_private_folder(folder: Path, *, create: bool = False) -> None:
    """``folder`` is a real folder (not a link), owned by this user, not writable by group or others;
    :class:`TalkFolderError` (one line) otherwise. ``create``: make it 0700 when it does not exist."""
    hint = "; set XDG_RUNTIME_DIR to a folder of yours (mode 0700)"
    try:
        if create and not os.path.lexists(folder):
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(folder)
    except OSError as err:
        raise TalkFolderError(f"talk link: {folder}: {err.strerror or err}{hint}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise TalkFolderError(f"talk link: {folder}: not a folder (a link or a file){hint}")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise TalkFolderError(f"talk link: {folder}: owned by another user (uid {info.st_uid}){hint}")
    if os.name != "nt" and stat.S_IMODE(info.st_mode) & 0o022:
        raise TalkFolderError(f"talk link: {folder}: writable by others (mode {stat.S_IMODE(info.st_mode):o})"
                              f"{hint}")


def talk_state_path(folder: Path, pid: int | None = None) -> Path:
    """The state file of the talk whose audience screen is process ``pid`` (this process by default)."""
    return folder / f"{TALK_PREFIX}{os.getpid() if pid is None else pid}{TALK_SUFFIX}"


def _talk_pid(path: Path) -> int | None:
    middle = path.name.removeprefix(TALK_PREFIX).removesuffix(TALK_SUFFIX)
    return int(middle) if middle.isdigit() and len(middle) <= 10 else None


def running_talks(folder: Path, deck: str | None = None) -> list[tuple[Path, TalkState]]:
    """The talks whose audience screen is still running (of ``deck`` when given), oldest first; the files of
    talks that ended are removed."""
    found = []
    try:
        names = sorted(os.listdir(folder))[:MAX_TALK_FILES * 10]
    except OSError:
        return []
    for name in names:
        path = folder / name
        pid = _talk_pid(path) if name.startswith(TALK_PREFIX) and name.endswith(TALK_SUFFIX) else None
        if pid is None:
            continue
        state = read_state(path)
        if state is None or not process_alive(pid):
            with contextlib.suppress(OSError):
                os.unlink(path)  # our own folder: a talk that ended leaves no file behind
            continue
        if deck is None or state.deck == deck:
            found.append((path, state))
        if len(found) >= MAX_TALK_FILES:
            break
    return sorted(found, key=lambda talk: talk[1].started_at_s)


def talk_label(path: Path, state: TalkState, clock: Callable[[], float] = time.time) -> str:
    """``memory-wall.toml, slide 3, started 12 min ago (pid 4242)``: how the presenter tells talks apart."""
    minutes = max(0, int((clock() - state.started_at_s) // 60))
    deck = Path(state.deck).name if state.deck else "(no deck)"
    return f"{deck}, slide {state.position + 1}, started {minutes} min ago (pid {_talk_pid(path)})"


def choose_talk(talks: list[tuple[Path, TalkState]], ask: Callable[[str], str] | None,
                out: Callable[[str], None] = print) -> Path | None:
    """The talk to join: None when there is none, the one there is, else the one the user picks (``ask`` is
    ``input``; None when there is no terminal to ask on, which raises :class:`ValueError` naming the talks)."""
    if not talks:
        return None
    if len(talks) == 1:
        return talks[0][0]
    labels = [talk_label(path, state) for path, state in talks]
    if ask is None:
        raise ValueError(f"{len(talks)} talks are running ({'; '.join(labels)}): give the deck to choose, or run "
                         "the presenter in a terminal to be asked")
    out(f"{len(talks)} talks are running:")
    for number, label in enumerate(labels, start=1):
        out(f"  {number}. {label}")
    for _ in range(3):
        try:
            answer = ask(f"join which one (1-{len(talks)})? ").strip()
        except EOFError:
            break
        if answer.isdigit() and 1 <= int(answer) <= len(talks):
            return talks[int(answer) - 1][0]
        out(f"  give a number from 1 to {len(talks)}")
    raise ValueError("no talk chosen")


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
