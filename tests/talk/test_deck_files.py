"""Decks as Markdown and TOML: the same Deck from both forms, and errors naming file, the right slide's line and
the key (issue 20 item 11: an error on slide 2 used to point at slide 1's key)."""

from __future__ import annotations

import pytest

from roofline.presets import load_catalog
from roofline.presets.deck_file import read_deck
from roofline.presets.loader import PresetFileError
from roofline.tui.inputs.registry import FILE_KEY_TYPES
from roofline.tui.talk.deck import check_deck

CATALOG = load_catalog(user_dir=None)

TOML_DECK = '''title = "Two slides"

[[slides]]
title = "Idle"
lines = ["one user", "on an H100"]
view = "none"
numbers = ["idle_core_pct"]
notes = "say it slowly"
[slides.scenario]
hardware = "h100-sxm"
batch = 1

[[slides]]
title = "Batching"
view = "batch"
numbers = ["decode_tokens_per_s", "weight_gemm_flops_per_byte"]
[slides.scenario]
batch = 64
'''

MARKDOWN_DECK = '''---
title: Two slides
---
# Idle
- one user
- on an H100

```roofline
view = "none"
numbers = ["idle_core_pct"]
[scenario]
hardware = "h100-sxm"
batch = 1
```

???
say it slowly

---

# Batching

```roofline
view = "batch"
numbers = ["decode_tokens_per_s", "weight_gemm_flops_per_byte"]
[scenario]
batch = 64
```
'''


def _write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_markdown_and_toml_load_the_same_deck(tmp_path):
    toml = read_deck(keys=FILE_KEY_TYPES, path=_write(tmp_path, "d.toml", TOML_DECK))
    markdown = read_deck(keys=FILE_KEY_TYPES, path=_write(tmp_path, "d.md", MARKDOWN_DECK))
    assert toml.title == markdown.title == "Two slides"
    assert toml.slides == markdown.slides
    assert markdown.slides[1].scenario == {"hardware": "h100-sxm", "batch": 64}  # carried over, then changed
    built = check_deck(markdown, CATALOG)
    assert built[1].results.scenario.batching.batch_size == 64


def test_markdown_notes_marker_and_untitled_deck(tmp_path):
    body = "# Only slide\nA line\n<!-- notes -->\nfirst\nsecond\n"
    deck = read_deck(keys=FILE_KEY_TYPES, path=_write(tmp_path, "d.md", body))
    assert deck.title == "Only slide"  # no front matter: the first slide's title
    assert deck.slides[0].lines == ("A line",) and deck.slides[0].notes == "first second"


def test_a_rule_inside_a_fence_does_not_split_slides(tmp_path):
    body = "# One\n```text\n---\n```\n---\n# Two\n"
    deck = read_deck(keys=FILE_KEY_TYPES, path=_write(tmp_path, "d.md", body))
    assert [s.title for s in deck.slides] == ["One", "Two"]


@pytest.mark.parametrize(("body", "line", "fragment"), [
    # slide 2's bad view is on line 8; slide 1's view (line 4) must not be named
    ('title = "t"\n[[slides]]\ntitle = "a"\nview = "batch"\n\n[[slides]]\ntitle = "b"\nview = "pie"\n', 8,
     "slide 2: view"),
    ('title = "t"\n[[slides]]\ntitle = "a"\n[slides.scenario]\nbatch = 8\n[[slides]]\ntitle = "b"\n'
     '[slides.scenario]\nbatch = "8"\n', 9, "slide 2: scenario.batch"),
    ('title = "t"\n[[slides]]\ntitle = "a"\nnumbers = []\n[[slides]]\ntitle = "b"\nnumbers = ["speed"]\n', 7,
     "slide 2: numbers"),
])
def test_toml_errors_name_the_right_slides_line(tmp_path, body, line, fragment):
    path = _write(tmp_path, "deck.toml", body)
    with pytest.raises(PresetFileError) as info:
        read_deck(path, keys=FILE_KEY_TYPES)
    assert str(info.value).startswith(f"{path}:{line}: {fragment}")


@pytest.mark.parametrize(("body", "line", "fragment"), [
    ("# a\n---\n# b\n```roofline\nview = \"pie\"\n```\n", 5, "slide 2: view"),
    ("# a\n---\n# b\n```roofline\n[scenario]\nbatch = \"8\"\n```\n", 6, "slide 2: scenario.batch"),
    ("# a\n```roofline\ncolour = 1\n```\n", 3, "slide 1: colour"),
    ("# a\n```roofline\nview = \n```\n", 3, "slide 1: roofline"),
    ("# a\n---\njust text\n", 3, "slide 2: title"),
    ("# a\n1\n2\n3\n4\n5\n6\n", 7, "slide 1: lines"),
    ("# a\n```roofline\nview = \"batch\"\n", 2, "slide 1: roofline"),
    ("---\nauthor: me\n---\n# a\n", 2, "author"),
])
def test_markdown_errors_name_file_line_and_key(tmp_path, body, line, fragment):
    path = _write(tmp_path, "deck.md", body)
    with pytest.raises(PresetFileError) as info:
        read_deck(path, keys=FILE_KEY_TYPES)
    assert str(info.value).startswith(f"{path}:{line}: {fragment}")
