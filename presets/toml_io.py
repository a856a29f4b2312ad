"""The one place TOML is parsed (``tomllib`` from 3.11, the ``tomli`` backport before).

Files are read through :func:`~.safe_files.read_text_capped` (regular files only, 16 MiB at most) and every
failure a parser can raise (syntax, nesting too deep for the parser's recursion, an integer past Python's
4,300-digit conversion limit) becomes one :class:`~.errors.PresetFileError` naming the file and, where known,
the line. Every string of the document (keys too) comes back without control characters
(:func:`~.clean_text.clean_strings`): a ``\u001b`` escape in a name or a deck title never reaches a terminal.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from .clean_text import clean_strings
from .errors import PresetError, PresetFileError
from .safe_files import clip, read_text_capped

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 in CI
    import tomli as tomllib

TOMLDecodeError = tomllib.TOMLDecodeError
_LINE_IN_MESSAGE = re.compile(r"line (\d+)")
_HEADER = re.compile(r"^\s*\[+([^\]]+)\]")
_ASSIGNMENT = re.compile(r"""^\s*(?:"([^"]*)"|'([^']*)'|([A-Za-z0-9_-]+))\s*=""")
_LONG_NUMBER = re.compile(r"[0-9][0-9_]{1000,}")
_DEEP_OPENING = re.compile(r"(?:[\[{][^\[\]{}\n]{0,16}){100,}")


def parse_toml(path: Path | str, text: str) -> dict[str, Any]:
    """A TOML document; :class:`PresetFileError` (one line, file and line where known) for anything wrong."""
    try:  # every string loses its control characters where it enters (clean_text.py)
        return clean_strings(tomllib.loads(text))
    except TOMLDecodeError as err:
        raise PresetFileError(PresetError(str(path), decode_error_line(err), None,
                                          f"not valid TOML: {clip(str(err), 200)}")) from None
    except RecursionError:
        raise PresetFileError(PresetError(str(path), deep_nesting_line(text), None,
                                          "not valid TOML: nested too deeply")) from None
    except (ValueError, OverflowError, MemoryError) as err:  # int(): "Exceeds the limit (4300 digits) ..."
        line = long_number_line(text)
        what = "a number too long to read" if line is not None else clip(str(err).split(";")[0], 120)
        raise PresetFileError(PresetError(str(path), line, None, f"not valid TOML: {what}")) from None


def read_toml(path: Path, *, what: str = "TOML file") -> tuple[dict[str, Any], str]:
    """Parsed document and its text (kept to locate keys for error messages); :class:`PresetFileError` for an
    unreadable, special, oversized or invalid file."""
    text = read_text_capped(path, what=what)
    return parse_toml(path, text), text


def long_number_line(text: str) -> int | None:
    """1-based line of the first run of more than 1,000 digits (a number no parser should be asked to read)."""
    match = _LONG_NUMBER.search(text)
    return None if match is None else text.count("\n", 0, match.start()) + 1


def deep_nesting_line(text: str) -> int | None:
    """1-based line of the first run of 100 or more opening brackets, each within 16 characters of the last
    (``[[[``, ``{a={a=``): where a parser's recursion runs out."""
    match = _DEEP_OPENING.search(text)
    return None if match is None else text.count("\n", 0, match.start()) + 1


def decode_error_line(error: Exception) -> int | None:
    match = _LINE_IN_MESSAGE.search(str(error))
    return int(match.group(1)) if match else None


class KeyLines:
    """Where each ``key = ...`` and each ``[table]`` header is, found in one pass over a document's text.

    Looking a key up costs the number of places that key name is set, not the length of the file: naming the
    line of each of thousands of unknown keys stays linear in the file's size.
    """

    __slots__ = ("_headers", "_keys")

    def __init__(self, text: str) -> None:
        self._keys: dict[str, list[tuple[str, int]]] = {}
        self._headers: dict[str, int] = {}
        current_table = ""
        for number, line in enumerate(text.splitlines(), start=1):
            header = _HEADER.match(line)
            if header:
                current_table = header.group(1).strip()
                self._headers.setdefault(current_table, number)
                continue
            assignment = _ASSIGNMENT.match(line)
            if assignment:
                key = next(part for part in assignment.groups() if part is not None)
                self._keys.setdefault(key, []).append((current_table, number))

    def line(self, dotted_key: str) -> int | None:
        """1-based line where ``key = ...`` is set (the last part of a dotted key), else the table's header."""
        parts = dotted_key.split(".")
        key, table = parts[-1], ".".join(parts[:-1])
        for current_table, number in self._keys.get(key, ()):
            if not table or current_table == table or current_table.endswith(table):
                return number
        for name in (dotted_key, dotted_key.split(".", 1)[-1]):  # a key that is a table: its header
            if name in self._headers:
                return self._headers[name]
        return None

