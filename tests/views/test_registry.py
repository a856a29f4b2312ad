"""The view registry is the one list of views: the README's view table, the deck's ``view =`` values, the explorer's
tabs and keys follow it; the handout and the slides draw through its plot functions."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from roofline.presets.deck_file import VIEWS as DECK_VIEWS
from roofline.tui.views.registry import BY_ID, NO_VIEW, VIEW_IDS, VIEWS, readme_rows

ROOT = Path(__file__).resolve().parents[2]


def _readme_view_rows() -> list[tuple[str, str, str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text[text.index("<!-- views:"):text.index("<!-- /views -->")]
    return [(m.group(1), m.group(2), m.group(3)) for m in re.finditer(r"^\| `([^`]+)` \| ([^|]+) \| (.+) \|$",
                                                                      block, re.M)]


def test_readme_view_table_matches_the_registry():
    assert _readme_view_rows() == readme_rows()


def test_deck_views_are_the_registry_ids_and_none():
    """presets/ cannot import tui/, so the deck reader keeps its own tuple: it must be the registry's."""
    assert (*VIEW_IDS, NO_VIEW) == DECK_VIEWS


def test_keys_are_one_to_n_in_order_and_ids_unique():
    assert [v.key for v in VIEWS] == [str(i + 1) for i in range(len(VIEWS))]
    assert len(BY_ID) == len(VIEWS)


def test_a_view_that_plots_has_its_data_function():
    for view in VIEWS:
        assert (view.plot is None) == (view.data is None) or view.widget != "chart", view.id
        if view.widget == "chart":
            assert view.plot is not None and view.data is not None, view.id


def test_explorer_tabs_and_keys_follow_the_registry():
    from roofline.tui.actions import ACTIONS

    view_actions = [a for a in ACTIONS if a.id.startswith("view.")]
    assert [(a.id, a.keys, a.action) for a in view_actions] == [
        (f"view.{v.id}", v.key, f"show_view('{v.id}')") for v in VIEWS]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_cli_and_talk_import_nothing_from_the_explorer():
    """Every import in tui/cli/ and tui/talk/, at any depth (lazy ones inside functions too)."""
    offenders = [f"{path.relative_to(ROOT)}: {name}" for room in ("cli", "talk")
                 for path in sorted((ROOT / "tui" / room).glob("*.py")) for name in _imports(path)
                 if name.startswith("roofline.tui.explorer") or name == "roofline.tui.app.explorer"]
    assert offenders == []


def test_views_import_no_textual():
    offenders = [f"{path.name}: {name}" for path in sorted((ROOT / "tui" / "views").glob("*.py"))
                 for name in _imports(path) if name.split(".")[0] in ("textual", "textual_plotext")]
    assert offenders == []
