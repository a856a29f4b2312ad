"""Every key, described once, with the screen it belongs to: the bindings, the ``?`` help screens, the footer and the
README's key table all come from :data:`ACTIONS` (tests/explorer/test_actions.py fails when the README disagrees).

Screens: ``explorer`` (the explorer's screen), ``app`` (everywhere), ``deck`` (both talk screens: moving through the
deck) and ``talk`` (the audience's slide screen). The explorer's batch and prompt keys work on a slide too
(``also_on``).

Each :class:`Action` has an id (``batch.double``: stable, for user key overrides), its keys, the action it runs,
a short footer label and a help sentence. No key is a priority binding: measured side by side, taking the batch
keys before the focused widget saved nothing (benchmarks/README.md), so a field that types a key gets it
first, and ``ExplorerScreen.check_action`` shows such keys dimmed in the footer while it has focus.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding

from roofline.tui.views.registry import VIEWS


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
    screen: str = "explorer"  # "explorer", "app" (everywhere), "deck" (both talk screens), "talk" (the slides)
    also_on: tuple[str, ...] = ()  # other screens that bind it too

    def binding(self) -> Binding:
        return Binding(self.keys, self.action, self.footer, show=self.show, priority=self.priority, id=self.id,
                       tooltip=self.help)


ACTIONS: tuple[Action, ...] = (
    Action(id="batch.double", keys="plus,equals_sign", action="scale_batch(2)", footer="batch x2", shown_keys="+",
           help="double the batch", also_on=("talk",)),
    Action(id="batch.halve", keys="minus", action="scale_batch(0.5)", footer="batch /2", shown_keys="-",
           help="halve the batch", also_on=("talk",)),
    Action(id="prompt.double", keys="right_square_bracket", action="scale_prompt(2)", footer="prompt x2",
           shown_keys="]", help="double the prompt (the context decode starts from)", also_on=("talk",)),
    Action(id="prompt.halve", keys="left_square_bracket", action="scale_prompt(0.5)", footer="prompt /2",
           shown_keys="[", help="halve the prompt", also_on=("talk",)),
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
    Action(id="engine.toggle", keys="m", action="toggle_engine", footer="engine", shown_keys="m", show=False,
           help="a running engine's live point on the Serving view (roofline --engine-url URL)"),
    Action(id="slides.back", keys="escape", action="leave_field", footer="leave field", shown_keys="escape",
           show=False, help="leave the field being typed in; in talk mode, back to the slides"),
    *(Action(id=f"view.{view.id}", keys=view.key, action=f"show_view('{view.id}')", footer=view.id,
             shown_keys=view.key, show=False, help=f"the {view.title} view") for view in VIEWS),
    Action(id="help", keys="question_mark", action="help", footer="keys", shown_keys="?", help="show the keys",
           screen="app"),
    Action(id="screenshot", keys="ctrl+s", action="screenshot_svg", footer="svg", shown_keys="ctrl+s",
           help="save an SVG screenshot in the current folder", screen="app"),
    Action(id="palette", keys="ctrl+p", action="command_palette", footer="palette", shown_keys="ctrl+p",
           help="command palette: hardware, model, precisions, save/load, compare", screen="app"),
    Action(id="quit", keys="q", action="quit", footer="quit", shown_keys="q", help="quit", screen="app"),
    # ---- talk mode: both screens move through the deck --------------------------------------------------------
    Action(id="deck.next", keys="space,right,pagedown", action="move(1)", footer="next",
           shown_keys="space  right  PageDown", help="next slide", show=False, screen="deck"),
    Action(id="deck.back", keys="left,pageup", action="move(-1)", footer="back", shown_keys="left  PageUp",
           help="back", show=False, screen="deck"),
    Action(id="deck.first", keys="home", action="go_to(1)", footer="first", shown_keys="Home  End",
           help="first, last", show=False, screen="deck"),
    Action(id="deck.last", keys="end", action="go_to(-1)", footer="last", shown_keys="", help="last slide",
           show=False, screen="deck"),  # listed with Home
    Action(id="deck.jump", keys="enter", action="jump", footer="jump", shown_keys="3 Enter", help="jump to slide 3",
           show=False, screen="deck"),
    *(Action(id=f"deck.digit{d}", keys=str(d), action=f"digit('{d}')", footer=str(d), shown_keys="", help="",
             show=False, screen="deck") for d in range(10)),
    # ---- talk mode: the audience's slide (the explorer's + - ] [ above work on it too) ----------------------------
    Action(id="talk.device.next", keys="d", action="cycle_device(1)", footer="device", shown_keys="d D",
           help="next / previous device on this slide", show=False, screen="talk"),
    Action(id="talk.device.back", keys="D", action="cycle_device(-1)", footer="device back", shown_keys="",
           help="previous device on this slide", show=False, screen="talk"),  # listed with d
    Action(id="talk.restore", keys="r", action="restore", footer="restore", shown_keys="r",
           help="restore the slide's scenario", show=False, screen="talk"),
    Action(id="talk.explore", keys="e", action="explore", footer="explorer", shown_keys="e",
           help="explorer on this slide (Esc back)", screen="talk"),
    Action(id="talk.notes", keys="n", action="toggle_notes", footer="notes", shown_keys="n  t",
           help="notes, time on this screen", screen="talk"),
    Action(id="talk.time", keys="t", action="toggle_time", footer="time", shown_keys="", help="time on this screen",
           screen="talk"),  # listed with n
    Action(id="talk.help", keys="question_mark", action="help", footer="keys", shown_keys="? or Esc",
           help="close this help      q quit", screen="talk"),
    Action(id="talk.close_help", keys="escape", action="close_help", footer="close", shown_keys="", help="",
           show=False, screen="talk"),
    Action(id="talk.quit", keys="q", action="app.quit", footer="quit", shown_keys="", help="quit", screen="talk",
           also_on=("presenter",)),
)


# the explorer's actions whose keys type text while a field has focus: shown dimmed in the footer then (escape leaves
# the field)
TYPED_IN_FIELDS = frozenset({"scale_batch", "scale_prompt", "pin_baseline", "toggle_ceilings", "toggle_inputs",
                             "compare_remove", "compare_sort", "explain_gap", "show_view", "toggle_live",
                             "toggle_engine"})


def bindings(screen: str) -> list[Binding]:
    """The Textual bindings of one screen: ``explorer``, ``app``, ``deck`` or ``talk``."""
    return [a.binding() for a in ACTIONS if a.screen == screen or screen in a.also_on]


def talk_help_rows() -> list[tuple[str, str]]:
    """(keys, what they do) on the audience's slide screen, for its ``?`` panel."""
    listed = [a for a in ACTIONS if a.shown_keys]
    knobs = [a for a in listed if "talk" in a.also_on]  # the explorer's x2 and /2 keys, two by two
    return ([(a.shown_keys, a.help) for a in listed if a.screen == "deck"]
            + [(f"{a.shown_keys} {b.shown_keys}", f"{a.footer}, {b.footer.split()[-1]} on this slide")
               for a, b in zip(knobs[::2], knobs[1::2], strict=True)]
            + [(a.shown_keys, a.help) for a in listed if a.screen == "talk"])


def key_table_rows() -> list[tuple[str, str]]:
    """(keys, what they do) for the explorer's help screen and the README, views folded into one row."""
    rows: list[tuple[str, str]] = []
    for a in ACTIONS:
        if a.screen not in ("explorer", "app"):
            continue
        if a.id.startswith("view."):
            if a.id == f"view.{VIEWS[0].id}":
                rows.append((f"{VIEWS[0].key}-{VIEWS[-1].key}", "switch view: " + ", ".join(v.id for v in VIEWS)))
            continue
        rows.append((a.shown_keys, a.help))
    return rows
