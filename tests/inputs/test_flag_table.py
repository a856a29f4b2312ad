"""The README's flag table is the input registry's: generated, and checked like the key table."""

from __future__ import annotations

from pathlib import Path

import pytest

from roofline.tui.inputs.flag_table import (
    BEGIN,
    END,
    flag_table_block,
    flag_table_rows,
    main,
    readme_block,
    with_table,
)
from roofline.tui.inputs.registry import INPUTS

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_flag_table_is_the_registrys():
    block = readme_block(README.read_text(encoding="utf-8"))
    assert block is not None, f"README.md has no {BEGIN} ... {END} block"
    assert block == flag_table_block(), (
        "README.md's flag table differs from the input registry: run "
        "`python -m roofline.tui.inputs.flag_table --write README.md`")


def test_every_flag_has_one_row_in_registry_order():
    rows = flag_table_rows()[2:]
    flags = [spec.flag for spec in INPUTS if spec.flag]
    assert len(rows) == len(flags)
    for row, flag in zip(rows, flags, strict=True):
        name = flag.removeprefix("--")
        assert f"`{flag} " in row or f"`--[no-]{name}`" in row, (flag, row)


def test_rows_say_default_and_range():
    rows = {row.split(" | ")[0]: row for row in flag_table_rows()[2:]}
    assert rows["| `--batch B`"] == "| `--batch B` | 1 | sequences decoded together (1 to 1,048,576) |"
    assert rows["| `--model ID\\|PATH`"].split(" | ")[1] == "`llama-3.1-8b`"  # the | escaped for Markdown
    assert "| on |" in rows["| `--[no-]flash-attention`"]


def test_write_replaces_only_the_block(tmp_path):
    path = tmp_path / "README.md"
    path.write_text(f"intro\n\n{BEGIN}; old -->\n| stale |\n{END}\n\nafter\n", encoding="utf-8")
    assert main(["--write", str(path)]) == 0
    text = path.read_text(encoding="utf-8")
    assert text.startswith("intro\n\n") and text.endswith("\n\nafter\n")
    assert readme_block(text) == flag_table_block()


def test_a_readme_without_markers_is_refused(tmp_path, capsys):
    path = tmp_path / "README.md"
    path.write_text("no table\n", encoding="utf-8")
    assert main(["--write", str(path)]) == 1
    assert "no flag table markers" in capsys.readouterr().err
    with pytest.raises(ValueError):
        with_table("nothing here")
