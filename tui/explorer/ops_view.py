"""The Ops view: every op of the scenario in a table, which decode step it is, and the highlighted op's formulas
with this scenario's numbers (tui/views/explain.py)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Static

from roofline.models.ops import Op
from roofline.tui.explorer.headline import WrappedText
from roofline.tui.explorer.ops_table import OPS_HEADER, OpsTable, ops_caption, ops_rows
from roofline.tui.explorer.quiet_update import set_text
from roofline.tui.explorer.view_body import ViewBody
from roofline.tui.views.explain import explain_op
from roofline.tui.views.registry import BY_ID
from roofline.tui.views.state import ExplorerState


class OpsView(ViewBody):
    def __init__(self) -> None:
        super().__init__(BY_ID["ops"])
        self.ops: list[Op] = []  # the table's ops, row by row

    def compose(self) -> ComposeResult:
        yield Static(id="ops-caption", markup=False)  # which decode step, what is per op
        yield OpsTable(id="ops-table")
        # a few lines that change on every keystroke: drawn as the verdict is, not as a Static
        yield WrappedText("select an op to see its formulas", id="op-formula")

    @property
    def table(self) -> OpsTable:
        return self.query_one(OpsTable)

    def draw(self, state: ExplorerState) -> None:
        """Fill the table (the cursor stays on the same op when it is still listed) and say what it shows."""
        r = state.results
        rows, keys, self.ops = ops_rows(r, r.chosen_ceilings(state.achievable))
        self.table.set_rows(list(OPS_HEADER), rows, keys)
        set_text(self.query_one("#ops-caption", Static), ops_caption(r))
        self._show_formula(self.table.cursor_row)

    def on_ops_table_row_highlighted(self, event: OpsTable.RowHighlighted) -> None:
        self._show_formula(event.row)

    def _show_formula(self, row: int) -> None:
        """The highlighted op's formula, with this scenario's numbers."""
        state = self.state
        if state is None or not 0 <= row < len(self.ops):
            return
        c = state.results.chosen_ceilings(state.achievable)
        self.query_one("#op-formula", WrappedText).show(explain_op(self.ops[row], c,
                                                                   state.results.scenario.parallelism.pp))
