"""Preset ids as people type them: case-insensitive lookup and ranked suggestions (pure string logic, no files).

Ids are lowercase file stems (``h100-sxm``, ``llama-3.1-8b``); model pages spell them ``Llama-3.1-8B`` and spec
sheets ``H100 SXM``, so a lookup ignores case and treats spaces and underscores as hyphens.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

_SEPARATORS = re.compile(r"[\s_]+")


def _key(text: str) -> str:
    """``H100 SXM`` and ``h100_sxm`` -> ``h100-sxm``."""
    return _SEPARATORS.sub("-", text.strip()).lower()


def match_id(ref: str, ids: Iterable[str]) -> str | None:
    """The id ``ref`` names, ignoring case and separators (space, underscore, hyphen); None if none or ambiguous."""
    known = list(ids)
    if ref in known:
        return ref
    wanted = _key(ref)
    found = [i for i in known if _key(i) == wanted]
    if len(found) == 1:
        return found[0]
    bare = wanted.replace("-", "")
    found = [i for i in known if _key(i).replace("-", "") == bare]
    if len(found) == 1:
        return found[0]
    short = short_name_matches(ref, known)
    return short[0] if len(short) == 1 else None


def short_name_matches(ref: str, ids: Iterable[str]) -> list[str]:
    """The ids ``ref`` is a short name of: ids that start with it (ignoring case and separators), where the id
    goes on with a separator or a letter, never a digit (``mi300`` -> ``mi300x``, ``h100`` -> the three H100s,
    ``a10`` not the A100s). Two characters or fewer name nothing."""
    wanted = _key(ref)
    if len(wanted.replace("-", "")) < 3:
        return []
    out = []
    for i in sorted(set(ids)):
        key = _key(i)
        if key.startswith(wanted) and len(key) > len(wanted) and not key[len(wanted)].isdigit():
            out.append(i)
    return out


def suggest_ids(ref: str, ids: Iterable[str], limit: int = 5) -> list[str]:
    """Ids close to ``ref``, best first: ids that start with it (shortest first), then ids that contain it,
    then :func:`difflib.get_close_matches` (ratio >= 0.5). ``a100`` gives the A100s before ``a10``."""
    known = sorted(set(ids))
    wanted = _key(ref)
    if not wanted:
        return []
    starts = sorted((i for i in known if _key(i).startswith(wanted)), key=lambda i: (len(i), i))
    contains = [i for i in known if wanted in _key(i) and i not in starts]
    by_key = {_key(i): i for i in known}
    close = [by_key[k] for k in difflib.get_close_matches(wanted, list(by_key), n=limit, cutoff=0.5)]
    ranked: list[str] = []
    for i in (*starts, *contains, *close):
        if i not in ranked:
            ranked.append(i)
    return ranked[:limit]
