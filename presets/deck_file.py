"""Talk decks: a TOML file with a title and slides (read here; checked against presets by the TUI).

```toml
title = "The memory wall"

[[slides]]
title = "The idle kitchen"
lines = ["up to five short lines"]
view = "roofline"          # roofline batch context memory ops compare history none
numbers = ["idle_core_pct", "decode_tokens_per_s_per_seq"]
notes = "speaker notes"
[slides.scenario]          # scenario-file keys: hardware, model, batch, prompt_tokens, ...
hardware = "h100-sxm"
```
Each slide's scenario starts from the previous slide's, so a deck only states what changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .loader import PresetError, PresetFileError, builtin_presets_dir, read_toml_file
from .safe_files import clip, clip_repr
from .scenario_file import SCENARIO_KEYS
from .toml_io import line_of_key

VIEWS = ("roofline", "batch", "context", "memory", "ops", "compare", "history", "none")
NUMBERS = ("decode_tokens_per_s_per_seq", "decode_tokens_per_s", "idle_core_pct", "ttft_ms", "ridge_flops_per_byte",
           "memory_fit", "growth_compute_x", "growth_bandwidth_x", "mbu_pct", "max_batch")
MAX_LINES = 5
MAX_NUMBERS = 4
BUILTIN_DECK = "memory-wall"


@dataclass(frozen=True, slots=True)
class Slide:
    index: int  # 1-based
    title: str
    lines: tuple[str, ...]
    view: str
    numbers: tuple[str, ...]
    notes: str
    scenario: dict[str, Any] = field(default_factory=dict)  # cumulative: this slide's full scenario values
    compare: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Deck:
    title: str
    slides: tuple[Slide, ...]
    path: str


def builtin_deck_path() -> Path:
    return builtin_presets_dir() / "decks" / f"{BUILTIN_DECK}.toml"


def _fail(path: Path, text: str, slide: int | None, key: str, message: str) -> PresetFileError:
    where = f"slide {slide}: {clip(key)}" if slide is not None else clip(key)
    line = line_of_key(text, key.split(".")[-1]) if key else None
    return PresetFileError(PresetError(str(path), line, where, message))


def read_deck(path: Path) -> Deck:
    """A deck, checked for shape; errors name the slide and key."""
    data, text = read_toml_file(path, what="deck")
    title = data.get("title")
    if not isinstance(title, str) or not title.strip():
        raise _fail(path, text, None, "title", "missing or not a string")
    raw_slides = data.get("slides")
    if not isinstance(raw_slides, list) or not raw_slides:
        raise _fail(path, text, None, "slides", "a deck needs at least one [[slides]] table")
    slides = []
    scenario: dict[str, Any] = {}
    for index, raw in enumerate(raw_slides, start=1):
        if not isinstance(raw, dict):
            raise _fail(path, text, index, "slides", "must be a table")
        unknown = set(raw) - {"title", "lines", "view", "numbers", "notes", "scenario", "compare"}
        if unknown:
            raise _fail(path, text, index, sorted(unknown)[0], "unknown key")
        slide_title = raw.get("title")
        if not isinstance(slide_title, str) or not slide_title.strip():
            raise _fail(path, text, index, "title", "missing or not a string")
        lines = raw.get("lines", [])
        if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines) or len(lines) > MAX_LINES:
            raise _fail(path, text, index, "lines", f"must be a list of at most {MAX_LINES} strings")
        view = raw.get("view", "none")
        if view not in VIEWS:
            raise _fail(path, text, index, "view", f"unknown view {clip_repr(view)} (choose from {', '.join(VIEWS)})")
        numbers = raw.get("numbers", [])
        if not isinstance(numbers, list) or len(numbers) > MAX_NUMBERS:
            raise _fail(path, text, index, "numbers", f"must be a list of at most {MAX_NUMBERS} names")
        for name in numbers:
            if name not in NUMBERS:
                raise _fail(path, text, index, "numbers",
                            f"unknown number {clip_repr(name)} (choose from {', '.join(NUMBERS)})")
        notes = raw.get("notes", "")
        if not isinstance(notes, str):
            raise _fail(path, text, index, "notes", "must be a string")
        compare = raw.get("compare", [])
        if not isinstance(compare, list) or not all(isinstance(x, str) for x in compare):
            raise _fail(path, text, index, "compare", "must be a list of hardware ids")
        changes = raw.get("scenario", {})
        if not isinstance(changes, dict):
            raise _fail(path, text, index, "scenario", "must be a table")
        for key, value in changes.items():
            expected = SCENARIO_KEYS.get(key)
            if expected is None:
                raise _fail(path, text, index, f"scenario.{key}", "unknown scenario key")
            if expected is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
                raise _fail(path, text, index, f"scenario.{key}",
                            f"must be {expected.__name__}, got {clip_repr(value)}")
            scenario[key] = value
        slides.append(Slide(index, slide_title, tuple(lines), view, tuple(numbers), notes, dict(scenario),
                            tuple(compare)))
    return Deck(title=title, slides=tuple(slides), path=str(path))
