"""Talk decks: a TOML or a Markdown file with a title and slides (read here; checked against presets by the TUI).

TOML (``*.toml``)::

    title = "The memory wall"

    [[slides]]
    title = "The idle kitchen"
    lines = ["up to five short lines"]
    view = "roofline"          # roofline batch context memory ops compare history none
    numbers = ["idle_core_pct", "decode_tokens_per_s_per_seq"]
    notes = "speaker notes"
    [slides.scenario]          # scenario-file keys: hardware, model, batch, prompt_tokens, ...
    hardware = "h100-sxm"

Markdown (``*.md``, ``*.markdown``): an optional front matter (a first line ``---``, ``title: ...``, ``---``) names
the deck (else the first slide's title does); slides are separated by lines that are exactly ``---``. In a slide
the first ``# `` line is the title, the following non-empty lines are its lines (a leading ``- `` or ``* `` is
dropped), everything after a line ``???`` or ``<!-- notes -->`` is the speaker notes, and one fenced block
opened by ```` ```roofline ```` holds TOML: ``view``, ``numbers``, ``compare`` and a ``[scenario]`` table.

Each slide's scenario starts from the previous slide's, so a deck only states what changes. Errors name the
file, the line (of the slide the key belongs to) and the key.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .clean_text import without_controls
from .errors import PresetError, PresetFileError
from .loader import builtin_presets_dir, read_toml_file
from .safe_files import clip, clip_repr, read_text_capped
from .scenario_file import ScenarioKeys, expected_type
from .toml_io import KeyLines, parse_toml

# the view registry's ids (tui/views/registry.py; presets/ does not import tui/) and "none";
# tests/views/test_registry.py checks them
VIEWS = ("roofline", "batch", "context", "memory", "ops", "compare", "history", "serving", "none")
NUMBERS = ("decode_tokens_per_s_per_seq", "decode_tokens_per_s", "idle_core_pct", "ttft_ms", "ridge_flops_per_byte",
           "memory_fit", "growth_compute_x", "growth_bandwidth_x", "mbu_pct", "max_batch",
           "decode_tokens_per_s_per_seq_expected", "ttft_ms_no_flash", "mem_bw_tb_per_s",
           "weight_gemm_flops_per_byte", "attention_flops_per_byte", "serving_tokens_per_s_per_user",
           "serving_tokens_per_s_per_device", "serving_itl_ms", "serving_users_at_targets")
MAX_LINES = 5
MAX_NUMBERS = 4
BUILTIN_DECK = "memory-wall"
MARKDOWN_SUFFIXES = (".md", ".markdown")
NOTES_MARKERS = ("???", "<!-- notes -->")
SLIDE_KEYS = {"title", "lines", "view", "numbers", "notes", "scenario", "compare"}
BLOCK_KEYS = {"view", "numbers", "compare", "scenario"}  # a Markdown slide's ```roofline block

_SLIDES_HEADER = re.compile(r"^\s*\[\[\s*slides\s*\]\]")
_FENCE = re.compile(r"^\s*(```+|~~~+)\s*([A-Za-z0-9_-]*)")


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


def read_deck(path: Path, *, keys: ScenarioKeys | None = None) -> Deck:
    """A deck, checked for shape, from TOML or (by its suffix) Markdown; errors name the slide, line and key."""
    if path.suffix.lower() in MARKDOWN_SUFFIXES:
        return read_markdown_deck(path, keys=keys)
    return read_toml_deck(path, keys=keys)


# ---- one slide's checks, whatever the file's form -----------------------------------------------------------
Fail = Callable[[str, str], PresetFileError]  # (key, message) -> the error, placed at this slide's line of key


def _slide(index: int, raw: dict[str, Any], scenario: dict[str, Any], fail: Fail, keys: ScenarioKeys | None = None
           ) -> Slide:
    """One slide from its raw table; ``scenario`` (the running scenario) takes this slide's changes."""
    unknown = set(raw) - SLIDE_KEYS
    if unknown:
        key = sorted(unknown)[0]
        raise fail(key, "unknown key")
    slide_title = raw.get("title")
    if not isinstance(slide_title, str) or not slide_title.strip():
        raise fail("title", "missing or not a string")
    lines = raw.get("lines", [])
    if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines) or len(lines) > MAX_LINES:
        raise fail("lines", f"must be a list of at most {MAX_LINES} strings")
    view = raw.get("view", "none")
    if view not in VIEWS:
        raise fail("view", f"unknown view {clip_repr(view)} (choose from {', '.join(VIEWS)})")
    numbers = raw.get("numbers", [])
    if not isinstance(numbers, list) or len(numbers) > MAX_NUMBERS:
        raise fail("numbers", f"must be a list of at most {MAX_NUMBERS} names")
    for name in numbers:
        if name not in NUMBERS:
            raise fail("numbers", f"unknown number {clip_repr(name)} (choose from {', '.join(NUMBERS)})")
    notes = raw.get("notes", "")
    if not isinstance(notes, str):
        raise fail("notes", "must be a string")
    compare = raw.get("compare", [])
    if not isinstance(compare, list) or not all(isinstance(x, str) for x in compare):
        raise fail("compare", "must be a list of hardware ids")
    changes = raw.get("scenario", {})
    if not isinstance(changes, dict):
        raise fail("scenario", "must be a table")
    for key, value in changes.items():
        expected = expected_type(keys, key, value)
        if expected is None:
            raise fail(f"scenario.{key}", "unknown scenario key")
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise fail(f"scenario.{key}", f"must be {expected.__name__}, got {clip_repr(value)}")
        scenario[key] = value
    return Slide(index, slide_title, tuple(lines), view, tuple(numbers), notes, dict(scenario), tuple(compare))


def _error(path: Path, line: int | None, slide: int | None, key: str, message: str) -> PresetFileError:
    where = f"slide {slide}: {clip(key)}" if slide is not None else clip(key)
    return PresetFileError(PresetError(str(path), line, where, message))


# ---- TOML ----------------------------------------------------------------------------------------------------
def _slide_spans(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each ``[[slides]]`` table, up to the next one: a key's line is looked up in
    its own slide's span, not found again in slide 1."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if _SLIDES_HEADER.match(line)]
    ends = [*starts[1:], len(lines)][:len(starts)]  # no [[slides]] header (slides = [], an inline array): none
    return [(start + 1, "\n".join(lines[start:end])) for start, end in zip(starts, ends, strict=True)]


def read_toml_deck(path: Path, *, keys: ScenarioKeys | None = None) -> Deck:
    data, text = read_toml_file(path, what="deck")
    whole = KeyLines(text)
    spans = _slide_spans(text)

    def line_in_slide(index: int, key: str) -> int | None:
        if index <= len(spans):
            first, span = spans[index - 1]
            found = KeyLines(span).line(f"slides.{key}" if not key.startswith("slides") else key)
            found = found if found is not None else KeyLines(span).line(key.split(".")[-1])
            return first + found - 1 if found is not None else first
        return whole.line(key.split(".")[-1])  # slides written as an inline array: the first place is a guess

    title = data.get("title")
    if not isinstance(title, str) or not title.strip():
        raise _error(path, whole.line("title"), None, "title", "missing or not a string")
    raw_slides = data.get("slides")
    if not isinstance(raw_slides, list) or not raw_slides:
        raise _error(path, whole.line("slides"), None, "slides", "a deck needs at least one [[slides]] table")
    if not all(isinstance(raw, dict) for raw in raw_slides):
        index = next(i for i, raw in enumerate(raw_slides, start=1) if not isinstance(raw, dict))
        raise _error(path, whole.line("slides"), index, "slides",
                     f"must be a table ([[slides]]), got {clip_repr(raw_slides[index - 1], 40)}")
    slides: list[Slide] = []
    scenario: dict[str, Any] = {}
    for index, raw in enumerate(raw_slides, start=1):
        def fail(key: str, message: str, index: int = index) -> PresetFileError:
            return _error(path, line_in_slide(index, key), index, key, message)

        if not isinstance(raw, dict):
            raise fail("slides", "must be a table")
        slides.append(_slide(index, raw, scenario, fail, keys))
    return Deck(title=title, slides=tuple(slides), path=str(path))


# ---- Markdown ------------------------------------------------------------------------------------------------
@dataclass(slots=True)
class _MarkdownSlide:
    first_line: int  # 1-based line of the slide's first line in the file
    lines: list[str] = field(default_factory=list)


def _split_slides(text: str) -> tuple[dict[str, tuple[str, int]], list[_MarkdownSlide]]:
    """Front matter (key -> (value, line)) and the slides' raw lines; ``---`` inside a fence separates nothing."""
    lines = text.splitlines()
    front: dict[str, tuple[str, int]] = {}
    start = 0
    if lines and lines[0].strip() == "---":
        for number in range(1, len(lines)):
            if lines[number].strip() == "---":
                for k in range(1, number):
                    key, sep, value = lines[k].partition(":")
                    if lines[k].strip() and sep:
                        front[key.strip()] = (value.strip(), k + 1)
                    elif lines[k].strip():
                        front[lines[k].strip()] = ("", k + 1)
                start = number + 1
                break
    slides = [_MarkdownSlide(start + 1)]
    fence = ""
    for number in range(start, len(lines)):
        line = lines[number]
        opening = _FENCE.match(line)
        if opening and (not fence or opening.group(1).startswith(fence) and not opening.group(2)):
            fence = "" if fence else opening.group(1)
        elif not fence and line.strip() == "---":
            slides.append(_MarkdownSlide(number + 2))
            continue
        slides[-1].lines.append(line)
    return front, [s for s in slides if any(line.strip() for line in s.lines)]


def _markdown_slide(path: Path, index: int, md: _MarkdownSlide, scenario: dict[str, Any],
                    keys: ScenarioKeys | None = None) -> Slide:
    raw: dict[str, Any] = {}
    key_lines: dict[str, int] = {}
    block: list[str] = []
    block_line = 0
    text_lines: list[tuple[int, str]] = []
    notes: list[str] = []
    state = "text"
    for offset, line in enumerate(md.lines):
        number = md.first_line + offset
        opening = _FENCE.match(line)
        if state == "block":
            if opening and not opening.group(2):
                state = "text"
            else:
                block.append(line)
            continue
        if opening and opening.group(2) == "roofline" and state == "text":
            if block_line:
                raise _error(path, number, index, "roofline", "one ```roofline block per slide")
            state, block_line = "block", number
            continue
        if line.strip() in NOTES_MARKERS and state == "text":
            state = "notes"
            key_lines["notes"] = number
            continue
        if state == "notes":
            notes.append(line.strip())
            continue
        if line.startswith("# ") and "title" not in raw:
            raw["title"] = line[2:].strip()
            key_lines["title"] = number
        elif line.strip():
            text_lines.append((number, re.sub(r"^\s*[-*]\s+", "", line).rstrip()))
    if state == "block":
        raise _error(path, block_line, index, "roofline", "the ```roofline block is not closed")
    if "title" not in raw:
        raise _error(path, md.first_line, index, "title", "a slide needs a '# title' line")
    if text_lines:
        raw["lines"] = [line for _, line in text_lines]
        key_lines["lines"] = text_lines[min(len(text_lines), MAX_LINES + 1) - 1][0]
    paragraphs = " ".join(notes).strip()
    if paragraphs:
        raw["notes"] = paragraphs
    block_keys: KeyLines | None = None
    if block_line:
        block_text = "\n".join(block) + "\n"
        try:
            table = parse_toml(path, block_text)
        except PresetFileError as err:
            line = block_line + err.error.line if err.error.line is not None else block_line
            raise _error(path, line, index, "roofline", err.error.message) from None
        block_keys = KeyLines(block_text)
        for key in table:
            if key not in BLOCK_KEYS:
                raise _error(path, block_line + (block_keys.line(key) or 0), index, key,
                             "unknown key in the ```roofline block (view, numbers, compare, [scenario])")
        raw.update(table)

    def fail(key: str, message: str) -> PresetFileError:
        if key in key_lines:
            line = key_lines[key]
        elif block_keys is not None and block_keys.line(key) is not None:
            line = block_line + (block_keys.line(key) or 0)
        else:
            line = block_line or md.first_line
        return _error(path, line, index, key, message)

    return _slide(index, raw, scenario, fail, keys)


def read_markdown_deck(path: Path, *, keys: ScenarioKeys | None = None) -> Deck:
    text = without_controls(read_text_capped(path, what="deck"))  # outside text: cleaned where it enters
    front, parts = _split_slides(text)
    for key, (_, line) in front.items():
        if key != "title":
            raise _error(path, line, None, key, "unknown front-matter key (only 'title')")
    if not parts:
        raise _error(path, None, None, "slides", "a deck needs at least one slide ('# title')")
    scenario: dict[str, Any] = {}
    slides = [_markdown_slide(path, index, md, scenario, keys) for index, md in enumerate(parts, start=1)]
    title = front.get("title", ("", 0))[0] or slides[0].title
    return Deck(title=title, slides=tuple(slides), path=str(path))
