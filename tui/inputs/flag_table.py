"""The README's table of scenario flags, generated from the input registry (one row per input with a flag).

``python -m roofline.tui.inputs.flag_table --write README.md`` rewrites the table between its markers;
``tests/inputs/test_flag_table.py`` fails while the README's table is not the one this module writes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from roofline.tui.inputs.limits import number_text
from roofline.tui.inputs.registry import INPUTS, ScenarioInput

BEGIN = "<!-- flags: generated from tui/inputs/registry.py (python -m roofline.tui.inputs.flag_table --write README.md)"
BEGIN_LINE = BEGIN + "; tests/inputs/test_flag_table.py checks it -->"
END = "<!-- /flags -->"
HEADER = ("| flag | default | meaning |", "| --- | --- | --- |")


def _cell(text: str) -> str:
    """Text for a Markdown table cell (a | would end the cell)."""
    return text.replace("|", "\\|")


def flag_cell(spec: ScenarioInput) -> str:
    if spec.kind == "bool":
        return f"`--[no-]{spec.flag.removeprefix('--')}`"
    return _cell(f"`{spec.flag} {spec.flag_metavar}`")


def default_cell(spec: ScenarioInput) -> str:
    if spec.kind == "bool":
        return "on" if spec.default else "off"
    if spec.default is None:
        return _cell(spec.empty_means)
    if spec.kind in ("dtype", "id"):
        return f"`{spec.default}`"
    return number_text(spec.default)


def meaning_cell(spec: ScenarioInput) -> str:
    text = spec.help
    if spec.kind == "dtype":
        text += f": one of {spec.choices_from}" if spec.choices_from else f": `{' '.join(spec.choices)}`"
    elif spec.kind in ("int", "float"):
        unit = f" {spec.unit}" if spec.unit and spec.unit not in spec.help else ""
        text += f" ({number_text(spec.low)} to {number_text(spec.high)}{unit})"
    return _cell(text)


def flag_table_rows() -> list[str]:
    """The table's lines, header included, one row per registry input that has a flag, in registry order."""
    rows = [f"| {flag_cell(s)} | {default_cell(s)} | {meaning_cell(s)} |" for s in INPUTS if s.flag]
    return [*HEADER, *rows]


def flag_table_block() -> str:
    """The README's block: the begin marker, the table, the end marker."""
    return "\n".join((BEGIN_LINE, *flag_table_rows(), END))


def readme_block(text: str) -> str | None:
    """The flag block of a README's text, markers included (None when it has none)."""
    start = text.find(BEGIN)
    end = text.find(END, start)
    if start < 0 or end < 0:
        return None
    return text[start:end + len(END)]


def with_table(text: str) -> str:
    """``text`` with its flag block replaced by the registry's (ValueError when it has no markers)."""
    block = readme_block(text)
    if block is None:
        raise ValueError(f"no flag table markers ({BEGIN} ... {END})")
    return text.replace(block, flag_table_block(), 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m roofline.tui.inputs.flag_table",
                                     description="print the README's flag table, or rewrite it in a README")
    parser.add_argument("--write", metavar="README", help="rewrite the table between the markers in this file")
    args = parser.parse_args(argv)
    if args.write is None:
        print(flag_table_block())
        return 0
    path = Path(args.write)
    try:
        path.write_text(with_table(path.read_text(encoding="utf-8")), encoding="utf-8")
    except (OSError, ValueError) as err:
        print(f"flag_table: {path}: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
