"""One action list: the bindings, the help screen and the README's key table agree."""

import re
from pathlib import Path

from roofline.tui.actions import ACTIONS, bindings, key_table_rows
from roofline.tui.app import RooflineApp
from roofline.tui.explorer.dialogs import HELP_MARKDOWN
from roofline.tui.explorer.screen import ExplorerScreen

README = Path(__file__).resolve().parents[2] / "README.md"


def _readme_key_rows() -> list[tuple[str, str]]:
    text = README.read_text(encoding="utf-8")
    block = text[text.index("<!-- keys:"):text.index("<!-- /keys -->")]
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^\| `([^`]+)` \| (.+) \|$", block, re.M)]


def test_readme_key_table_matches_the_bindings():
    assert _readme_key_rows() == key_table_rows()


def test_help_screen_lists_every_key():
    for keys, does in key_table_rows():
        assert f"| `{keys}` | {does} |" in HELP_MARKDOWN


def test_bindings_come_from_the_action_list():
    from roofline.tui.talk.presenter import PresenterScreen
    from roofline.tui.talk.screen import PresentScreen

    ids = {b.id for screen in (ExplorerScreen, RooflineApp, PresentScreen, PresenterScreen) for b in screen.BINDINGS}
    assert ids == {a.id for a in ACTIONS}
    assert [b.key for b in bindings("app")] == [a.keys for a in ACTIONS if a.screen == "app"]
    assert len({a.id for a in ACTIONS}) == len(ACTIONS)  # ids are unique (user key overrides use them)


def test_talk_keys_come_from_the_action_list_and_its_help_lists_them():
    """The slide screen binds the deck keys, its own and the explorer's batch and prompt keys; its ? panel lists
    each of them."""
    from roofline.tui.actions import talk_help_rows
    from roofline.tui.talk.screen import PRESENT_HELP, PresentScreen

    bound = {b.id for b in PresentScreen.BINDINGS}
    assert {"batch.double", "prompt.halve", "deck.next", "talk.explore", "talk.restore"} <= bound
    for keys, does in talk_help_rows():
        assert f"  {keys:<25}{does}" in PRESENT_HELP
