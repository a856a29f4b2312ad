"""Every key of the explorer, described once: the bindings, the ``?`` help screen, the footer and the README's key
table all come from :data:`ACTIONS` (tests/explorer/test_actions.py fails when the README disagrees).

Each :class:`Action` has an id (``batch.double``: stable, for user key overrides), its keys, the action it runs,
a short footer label and a help sentence. No key is a priority binding: measured side by side, taking the batch
keys before the focused widget saved nothing (benchmarks/README.md, issue 17), so a field that types a key gets it
first, and ``ExplorerScreen.check_action`` shows such keys dimmed in the footer while it has focus.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding

VIEWS = ("roofline", "batch", "context", "memory", "ops", "compare", "history", "serving")


@dataclass(frozen=True, slots=True, kw_only=True)
class Action:
    id: str
    keys: str  # Textual key names, comma-separated
    action: str
    footer: str
    help: str
    shown_keys: str = ""  # how the README and the help screen write the keys ("+ / -")
    show: bool = True
    priority: bool = False
    screen: str = "explorer"  # "explorer": the explorer's screen; "app": everywhere

    def binding(self) -> Binding:
        return Binding(self.keys, self.action, self.footer, show=self.show, priority=self.priority, id=self.id,
                       tooltip=self.help)


ACTIONS: tuple[Action, ...] = (
    Action(id="batch.double", keys="plus,equals_sign", action="scale_batch(2)", footer="batch x2", shown_keys="+",
           help="double the batch"),
    Action(id="batch.halve", keys="minus", action="scale_batch(0.5)", footer="batch /2", shown_keys="-",
           help="halve the batch"),
    Action(id="prompt.double", keys="right_square_bracket", action="scale_prompt(2)", footer="prompt x2",
           shown_keys="]", help="double the prompt (the context decode starts from)"),
    Action(id="prompt.halve", keys="left_square_bracket", action="scale_prompt(0.5)", footer="prompt /2",
           shown_keys="[", help="halve the prompt"),
    Action(id="baseline.pin", keys="p", action="pin_baseline", footer="baseline", shown_keys="p",
           help="pin the scenario as a baseline (numbers then show the change); again to unpin"),
    Action(id="ceilings.toggle", keys="a", action="toggle_ceilings", footer="ceilings", shown_keys="a",
           help="switch spec (bound) and achievable (expected) ceilings"),
    Action(id="inputs.toggle", keys="i", action="toggle_inputs", footer="inputs", shown_keys="i",
           help="show or hide the inputs (below 100 columns inputs and results take turns)"),
    Action(id="compare.remove", keys="x", action="compare_remove", footer="remove", shown_keys="x", show=False,
           help="remove the highlighted device from Compare"),
    Action(id="compare.sort", keys="s", action="compare_sort", footer="sort", shown_keys="s", show=False,
           help="sort Compare by the next column (a click on a header sorts by it; again to reverse)"),
    Action(id="gap.explain", keys="g", action="explain_gap", footer="gap", shown_keys="g",
           help="explain the gap between bound and expected, term by term"),
    Action(id="live.toggle", keys="l", action="toggle_live", footer="live", shown_keys="l",
           help="live GPU counters on the roofline"),
    Action(id="slides.back", keys="escape", action="leave_field", footer="leave field", shown_keys="escape",
           show=False, help="leave the field being typed in; in talk mode, back to the slides"),
    *(Action(id=f"view.{view}", keys=str(i + 1), action=f"show_view('{view}')", footer=view, shown_keys=str(i + 1),
             show=False, help=f"the {view.capitalize()} view") for i, view in enumerate(VIEWS)),
    Action(id="help", keys="question_mark", action="help", footer="keys", shown_keys="?", help="show the keys",
           screen="app"),
    Action(id="screenshot", keys="ctrl+s", action="screenshot_svg", footer="svg", shown_keys="ctrl+s",
           help="save an SVG screenshot in the current folder", screen="app"),
    Action(id="palette", keys="ctrl+p", action="command_palette", footer="palette", shown_keys="ctrl+p",
           help="command palette: hardware, model, precisions, save/load, compare", screen="app"),
    Action(id="quit", keys="q", action="quit", footer="quit", shown_keys="q", help="quit", screen="app"),
)


def bindings(screen: str) -> list[Binding]:
    """The Textual bindings of the explorer's screen (``explorer``) or of the app (``app``)."""
    return [a.binding() for a in ACTIONS if a.screen == screen]


def key_table_rows() -> list[tuple[str, str]]:
    """(keys, what they do) for the help screen and the README, views folded into one row."""
    rows: list[tuple[str, str]] = []
    for a in ACTIONS:
        if a.id.startswith("view."):
            if a.id == "view.roofline":
                rows.append((f"1-{len(VIEWS)}", "switch view: " + ", ".join(VIEWS)))
            continue
        rows.append((a.shown_keys, a.help))
    return rows
