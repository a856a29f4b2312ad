"""The README's accuracy tables are `roofline validate FILE --format markdown`, pasted verbatim: a fresh run must
print them again (figures rounded to 0.1 %). When the model changes, rerun the command and paste its output
between the block's markers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from roofline.tui.cli.main import main

ROOT = Path(__file__).parents[2]
BLOCK = re.compile(r"<!-- begin: roofline validate (\S+) --format markdown -->\n(.*?)<!-- end: roofline validate -->",
                   re.DOTALL)


def _blocks() -> list[tuple[str, str]]:
    return BLOCK.findall((ROOT / "README.md").read_text(encoding="utf-8"))


def test_the_readme_has_a_block_for_each_published_file():
    assert [path for path, _ in _blocks()] == ["tests/data/measured-dev-validation.csv",
                                               "tests/data/measured-heldout.csv", "tests/data/measured-serving.csv"]


@pytest.mark.slow
@pytest.mark.parametrize(("path", "pasted"), _blocks(), ids=[p for p, _ in _blocks()])
def test_the_readme_tables_match_a_fresh_run(path, pasted, capsys):
    assert main(["validate", str(ROOT / path), "--format", "markdown"]) == 0
    fresh = capsys.readouterr().out
    assert fresh == pasted, f"README block for {path} is stale: rerun `roofline validate {path} --format markdown`"
