"""Reading and writing user files without trusting them: regular files only, a size cap, atomic saves.

Every file the project reads from a user (presets, scenarios, decks, ``config.json``, measurement CSVs)
goes through :func:`read_text_capped`; every file it writes through :func:`atomic_write_text`. What they
guard against, and why:

- A FIFO blocks ``open()`` until a writer appears, and ``/dev/zero`` (or a link to it) never ends: the file
  is checked to be a regular file (a symlink is followed only to check its target), opened with
  ``O_NONBLOCK`` (so a FIFO swapped in after the check still cannot block), checked again with ``fstat``,
  and read up to a cap (:data:`MAX_FILE_BYTES`).
- Paths the OS refuses (a name over 255 bytes, ``~nouser/...``, a folder without permission, a NUL) are
  one-line errors naming the file, not tracebacks.
- A save writes an unpredictable temporary file in the target's folder, created exclusively (``O_EXCL``,
  ``O_NOFOLLOW``: a symlink planted at that name makes the attempt fail and another name is drawn, as
  ``tempfile.mkstemp`` does), fsyncs it and renames it over the target with ``os.replace``. No fixed
  name is ever used, so a user's own ``x.toml.tmp`` survives and a planted link is never written through.
  A target that is itself a symlink is replaced by the new file (the link, never the file it points to, is
  what changes); a target that is a folder or another special file is refused.

Sources: open(2) on O_NONBLOCK with FIFOs and O_EXCL/O_NOFOLLOW (https://man7.org/linux/man-pages/man2/open.2.html);
rename(2) atomicity (https://man7.org/linux/man-pages/man2/rename.2.html).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

from .errors import PresetError, PresetFileError

MAX_FILE_BYTES = 16 * 1024 * 1024  # 16 MiB: far above any real preset, scenario, deck, config.json or CSV
MAX_NAME_BYTES = 255  # NAME_MAX on Linux, macOS and Windows file systems
MAX_ECHO_CHARS = 80  # a value quoted in an error message is cut to this many characters
_TEMP_ATTEMPTS = 100

_KINDS = (
    (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
)


class FileRefusedError(PresetFileError):
    """A file that cannot be read as a user file (not a regular file, too big, not UTF-8, a path the OS
    refuses); its message is one line naming the file."""


class SaveError(OSError):
    """A save that failed or was refused; one line naming the file. An :class:`OSError`, so callers that
    already catch ``OSError`` around a save keep working."""

    def __init__(self, path: object, reason: str) -> None:
        super().__init__(f"{clip(str(path), 200)}: cannot save: {reason}")
        self.path = str(path)
        self.reason = reason

    def __str__(self) -> str:
        return str(self.args[0])


def clip(text: str, limit: int = MAX_ECHO_CHARS) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis, on one line (newlines shown as ``\\n``)."""
    one_line = text.replace("\r", "\\r").replace("\n", "\\n")
    return one_line if len(one_line) <= limit else one_line[: max(limit - 1, 1)] + "…"


def clip_repr(value: object, limit: int = MAX_ECHO_CHARS) -> str:
    """``repr(value)`` cut to ``limit`` characters; an integer too long to print says how many digits it has."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 3 * limit:
        return f"<an integer of about {int(value.bit_length() * 0.30103) + 1:,} digits>"
    return clip(repr(value), limit)


def _reason(err: OSError) -> str:
    """One line saying why the OS refused."""
    if err.errno == errno.ENAMETOOLONG:
        return f"name too long (more than {MAX_NAME_BYTES} bytes in one part, or the path too long)"
    text = err.strerror or str(err) or type(err).__name__
    return text.splitlines()[0]


def _refused(path: object, what: str, reason: str, line: int | None = None) -> FileRefusedError:
    return FileRefusedError(PresetError(clip(str(path), 300), line, None, f"cannot read {what}: {reason}"))


def _kind(mode: int) -> str | None:
    """What a non-regular file is, or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def user_path(text: str | os.PathLike[str], *, what: str = "file") -> Path:
    """A path a person typed (``~`` expanded); :class:`FileRefusedError` for ``~nouser``, a NUL or an
    over-long name, so the OS is never asked about it."""
    raw = os.fspath(text)
    if "\0" in raw:
        raise _refused(raw.replace("\0", "\\0"), what, "the name contains a NUL character")
    try:
        path = Path(raw).expanduser()
    except RuntimeError as err:  # ~nouser: "Could not determine home directory."
        raise _refused(raw, what, f"cannot expand ~ ({err})") from None
    for part in path.parts:
        if len(os.fsencode(part)) > MAX_NAME_BYTES:
            raise _refused(raw, what, f"name too long (a part of more than {MAX_NAME_BYTES} bytes)")
    return path


def is_folder(path: Path) -> bool:
    """True for a folder (or a link to one); False otherwise, including paths the OS refuses."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def list_folder(folder: Path, suffix: str, *, what: str = "folder") -> list[Path]:
    """Entries of ``folder`` whose names end in ``suffix``, sorted (special files included: reading them is
    refused one by one); :class:`FileRefusedError` if the folder cannot be listed."""
    try:
        with os.scandir(folder) as entries:
            return sorted(folder / entry.name for entry in entries if entry.name.endswith(suffix))
    except (OSError, ValueError) as err:
        reason = _reason(err) if isinstance(err, OSError) else str(err)
        raise _refused(folder, what, reason) from None


def read_bytes_capped(path: Path, *, what: str = "file", max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; :class:`FileRefusedError` otherwise.

    Never blocks on a FIFO (checked before opening, opened with ``O_NONBLOCK``, checked again with
    ``fstat``) and never reads more than ``max_bytes + 1`` bytes (``/dev/zero`` is refused before that).
    """
    try:
        if "\0" in os.fspath(path):
            raise _refused(os.fspath(path).replace("\0", "\\0"), what, "the name contains a NUL character")
        kind = _kind(os.stat(path).st_mode)  # follows a symlink: its target must be a regular file
        if kind:
            raise _refused(path, what, f"not a regular file ({kind})")
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
        fd = os.open(path, flags | getattr(os, "O_BINARY", 0))
    except OSError as err:
        raise _refused(path, what, _reason(err)) from None
    try:
        info = os.fstat(fd)
        kind = _kind(info.st_mode)  # swapped for a FIFO or device between stat and open
        if kind:
            raise _refused(path, what, f"not a regular file ({kind})")
        if info.st_size > max_bytes:
            raise _refused(path, what, f"too large ({info.st_size:,} bytes; the limit is {max_bytes:,})")
        chunks, total = [], 0
        while total <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > max_bytes:  # a file that grew while being read
            raise _refused(path, what, f"too large (more than {max_bytes:,} bytes)")
        return b"".join(chunks)
    except OSError as err:
        raise _refused(path, what, _reason(err)) from None
    finally:
        os.close(fd)


def read_text_capped(path: Path, *, what: str = "file", max_bytes: int = MAX_FILE_BYTES) -> str:
    """A regular file of at most ``max_bytes`` decoded as UTF-8; :class:`FileRefusedError` (one line, naming
    the file, and for bad UTF-8 the line and byte offset) otherwise."""
    data = read_bytes_capped(path, what=what, max_bytes=max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise _refused(path, what, f"not UTF-8 text (byte 0x{data[err.start]:02x} at offset {err.start:,})",
                       line) from None


# ---- saving ----------------------------------------------------------------------------------------------------
def _new_file_mode() -> int:
    """0o666 less the umask, read without changing it where the OS says it (Linux ``/proc``), else 0o644."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o644


def _check_target(path: Path) -> tuple[Path, int | None]:
    """The target and the mode to give the new file; :class:`SaveError` for names that cannot be a file."""
    raw = os.fspath(path)
    if "\0" in raw:
        raise SaveError(raw.replace("\0", "\\0"), "the name contains a NUL character")
    if not raw or raw.endswith(("/", os.sep)) or Path(raw).name in ("", ".", ".."):
        raise SaveError(raw or "''", "not a file name (a folder?)")
    if len(os.fsencode(Path(raw).name)) > MAX_NAME_BYTES:
        raise SaveError(raw, f"name too long (more than {MAX_NAME_BYTES} bytes)")
    try:
        info = os.lstat(raw)
    except FileNotFoundError:
        return Path(raw), None
    except OSError as err:
        raise SaveError(raw, _reason(err)) from None
    if stat.S_ISLNK(info.st_mode):
        return Path(raw), None  # the link itself is replaced; the file it points to is never written
    kind = _kind(info.st_mode)
    if kind:
        raise SaveError(raw, f"it is {kind}, not a regular file")
    return Path(raw), stat.S_IMODE(info.st_mode)


def check_save_target(path: Path) -> Path:
    """Refuse, before any work, a save :func:`atomic_write_text` would refuse: a name the OS cannot take, a folder
    or special file at the target (``/dev/full``), a missing or unwritable folder (a temporary file is created
    there and removed). :class:`SaveError` (one line) naming the file; the target is never touched."""
    target, _ = _check_target(path)
    try:
        fd, temp = _exclusive_temp(target.parent, target.name)
    except OSError as err:
        raise SaveError(target, _reason(err)) from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(temp)
    return target


def prepare_folder(folder: Path) -> Path:
    """``folder`` created (with its parents) to save files in; :class:`SaveError` (one line) for a file in the
    way, a path the OS refuses or a folder that cannot be written."""
    raw = os.fspath(folder)
    if "\0" in raw:
        raise SaveError(raw.replace("\0", "\\0"), "the name contains a NUL character")
    if any(len(os.fsencode(part)) > MAX_NAME_BYTES for part in Path(raw).parts):
        raise SaveError(raw, f"name too long (more than {MAX_NAME_BYTES} bytes in one part)")
    try:
        Path(raw).mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise SaveError(raw, "it exists and is not a folder") from None
    except OSError as err:
        raise SaveError(raw, _reason(err)) from None
    check_save_target(Path(raw) / "probe")  # writable: a temporary file is made and removed
    return Path(raw)


def _exclusive_temp(folder: Path, name: str) -> tuple[int, Path]:
    """A new, empty file with an unpredictable name in ``folder``, created exclusively (never through a link)."""
    flags = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
             | getattr(os, "O_BINARY", 0))
    stem = name[:40]
    for _ in range(_TEMP_ATTEMPTS):
        temp = folder / f".{stem}.{secrets.token_hex(8)}.tmp"
        try:
            return os.open(temp, flags, 0o600), temp
        except FileExistsError:  # taken (or a planted link): draw another name
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(folder))


def atomic_write_text(path: Path, text: str, *, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically: a new temporary file in the same folder, fsync, ``os.replace``.

    Readers see the old file or the new one, never half of either. On failure the temporary file is removed
    and :class:`SaveError` (an ``OSError``, one line) says why. A target that is a symlink is replaced by the
    new file (the link's target is untouched); a folder, ``/``, ``.`` or a name with NUL is refused.
    """
    target, old_mode = _check_target(path)
    folder = target.parent
    data = text.encode(encoding)
    try:
        fd, temp = _exclusive_temp(folder, target.name)
    except OSError as err:
        raise SaveError(target, _reason(err)) from None
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if hasattr(os, "fchmod"):
                os.fchmod(fd, _new_file_mode() if old_mode is None else old_mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, target)
    except OSError as err:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise SaveError(target, _reason(err)) from None
    _fsync_folder(folder)
    return target


def _fsync_folder(folder: Path) -> None:
    """Make the rename durable where the OS allows opening a folder (POSIX); best effort."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
