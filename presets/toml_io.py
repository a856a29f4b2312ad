"""The one place TOML is parsed (``tomllib`` from 3.11, the ``tomli`` backport before)."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 in CI
    import tomli as tomllib

TOMLDecodeError = tomllib.TOMLDecodeError
_LINE_IN_MESSAGE = re.compile(r"line (\d+)")


def read_toml(path: Path) -> tuple[dict[str, Any], str]:
    """Parsed document and its text (kept to locate keys for error messages)."""
    text = path.read_text(encoding="utf-8")
    return tomllib.loads(text), text


def decode_error_line(error: Exception) -> int | None:
    match = _LINE_IN_MESSAGE.search(str(error))
    return int(match.group(1)) if match else None


def line_of_key(text: str, dotted_key: str) -> int | None:
    """1-based line where ``key = ...`` is set (the last part of a dotted key), if found."""
    parts = dotted_key.split(".")
    key = parts[-1]
    table = ".".join(parts[:-1])
    current_table = ""
    pattern = re.compile(rf'^\s*"?{re.escape(key)}"?\s*=')
    for number, line in enumerate(text.splitlines(), start=1):
        header = re.match(r"^\s*\[([^\]]+)\]", line)
        if header:
            current_table = header.group(1).strip()
            continue
        if pattern.match(line) and (not table or current_table == table or current_table.endswith(table)):
            return number
    for number, line in enumerate(text.splitlines(), start=1):  # a key that is a table: its header
        header = re.match(r"^\s*\[+([^\]]+)\]+", line)
        if header and header.group(1).strip() in (dotted_key, dotted_key.split(".", 1)[-1]):
            return number
    return None
