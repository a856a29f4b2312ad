"""Production code explains itself: no comment or docstring points at an issue number of this project's tracker
(an issue is closed and gone; the reason belongs in the text). Upstream references (``vllm-project/vllm#18778``,
``ggml-org/llama.cpp#6017``) are sources and stay."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ISSUE_REFERENCE = re.compile(r"\b[Ii]ssues? \d+")


def test_no_issue_numbers_in_production_code():
    hits = []
    for folder in ("models", "presets", "tui"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if ISSUE_REFERENCE.search(line):
                    hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:80]}")
    assert not hits, "issue numbers in production code:\n" + "\n".join(hits)


def test_the_pattern_catches_what_it_is_for():
    assert ISSUE_REFERENCE.search("(issue 30 item 11)")
    assert not ISSUE_REFERENCE.search("vllm-project/vllm#18778")
