"""Modal screens: the keys and what the numbers mean, a path prompt, a yes/no question. Their text is plain
(never markup): a question quotes the path the user typed."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Markdown, Static

from roofline.tui.actions import key_table_rows


def _keys_markdown() -> str:
    rows = "\n".join(f"| `{keys}` | {does} |" for keys, does in key_table_rows())
    return f"# Keys\n\n| key | does |\n| --- | --- |\n{rows}\n\n"


HELP_MARKDOWN = _keys_markdown() + """\
# The numbers

- Each op takes max(FLOPs / peak, bytes / bandwidth); a pass is the sum over ops.
- Decode reads every weight once per step for the whole batch, plus every sequence's KV cache:
  weight GEMMs gain about B FLOP/byte from batching, attention stays at about the GQA group size.
- Idle cores % = 100 x (1 - useful FLOP/s / spec peak). MBU = bytes/s / spec bandwidth.
- bound: spec ceilings, no overheads (nothing real beats it). expected: measured ceilings,
  4 us per kernel, collective latency.
- MoE: a batch of T tokens touches E x (1 - (1 - k/E)^T) distinct experts per layer.
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box", classes="dialog"):
            yield Markdown(HELP_MARKDOWN)


class GapScreen(ModalScreen[None]):
    """Why expected is slower than bound for the current scenario, term by term."""

    BINDINGS = [Binding("escape,q,g", "dismiss", "close")]

    def __init__(self, lines: list[str]) -> None:
        super().__init__()
        self._lines = lines

    @classmethod
    def of_scenario(cls, scenario) -> GapScreen:
        """The decode gap term by term, then expected's assumptions (the same text as ``roofline report``)."""
        from roofline.models.report import decode_gap_dict, expected_assumption_rows
        from roofline.tui.views.report_text import assumption_lines, gap_lines

        return cls([*gap_lines(decode_gap_dict(scenario)), "", *assumption_lines(expected_assumption_rows(scenario))])

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog"):  # Static, not Label: long source lines wrap instead of running off
            yield Static("\n".join(self._lines), id="gap-text", markup=False)
            yield Static("The roofline cannot see these: every term is a documented assumption of `expected` "
                         "(README, 'What the numbers mean'). Esc closes.", markup=False)


class PathScreen(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, title: str, default: str) -> None:
        super().__init__()
        self._title, self._default = title, default

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self._title, markup=False)
            yield Input(value=self._default, id="path")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [Binding("escape,n", "answer(False)", "no"), Binding("y", "answer(True)", "yes")]

    def __init__(self, question: str) -> None:
        super().__init__()
        self._question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self._question, markup=False)  # quotes a path the user typed
            with Horizontal():
                yield Button("Yes (y)", id="yes", variant="warning")
                yield Button("No (n)", id="no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)
