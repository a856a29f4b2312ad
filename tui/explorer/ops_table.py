"""A light read-only table for the Ops view: one pre-formatted line per op and a row cursor.

Textual's DataTable renders every cell through Rich on each change; a batch change alters
nearly every number in this table, which made one keystroke cost 70-110 ms at 160x50. Here
each row is one string, formatted once per change (columns right-aligned except the first
two), and a visible line is a single styled segment; only lines whose text changed are
repainted.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from roofline.models.context_sums import decode_context_range
from roofline.models.estimate import Ceilings, time_op
from roofline.models.inference import mean_decode_context
from roofline.models.ops import Op
from roofline.tui.views.formatting import duration, flop_per_byte, si
from roofline.tui.views.results import ExplorerResults

LEFT_ALIGNED_COLUMNS = 2  # phase, op name; numbers are right-aligned
COLUMN_GAP = " "
# time and share first after the name, so a narrow terminal cuts the per-op detail, not the answer; FLOPs and bytes
# are per occurrence (one op, one device), time is the total over the op's n occurrences per pass
# short headers: the whole table fits beside the inputs at 160x50 (the caption says what "/op" and "x n" mean)
OPS_HEADER = ("phase", "op", "time x n", "share", "n", "FLOP/B", "limit", "FLOP/op", "wts/op", "act/op",
              "KVrd/op", "KVwr/op")


def ops_rows(r: ExplorerResults, ceilings: Ceilings) -> tuple[list[list[str]], list[str], list[Op]]:
    """The table's rows (prefill ops, then decode ops at the shown context), their keys and ops, timed against
    ``ceilings``; share is of the op's phase."""
    rows: list[list[str]] = []
    keys: list[str] = []
    ops_in_order: list[Op] = []
    for ops in (r.prefill_ops, r.decode_ops):
        timed = [(op, time_op(op, ceilings)) for op in ops]
        total = sum(op.count * float(t.time_s) for op, t in timed)
        for op, t in timed:
            ai = "-" if op.kind == "collective" else flop_per_byte(float(op.arithmetic_intensity_flops_per_byte))
            time_s = op.count * float(t.time_s)
            rows.append([op.phase, op.name, duration(time_s), f"{100 * time_s / total:.1f}%" if total else "-",
                         str(op.count), ai, t.limited_by, si(float(op.flops), ""), si(float(op.weight_bytes), "B"),
                         si(float(op.activation_bytes), "B"), si(float(op.kv_read_bytes), "B"),
                         si(float(op.kv_write_bytes), "B")])
            keys.append(f"{op.phase}/{op.name}")
            ops_in_order.append(op)
    return rows, keys, ops_in_order


def ops_caption(r: ExplorerResults) -> str:
    """What the table shows: which decode step (the TUI's shown context; ``roofline report`` lists the first step)
    and which figures are per op."""
    first, _ = decode_context_range(r.scenario)
    shown = r.shown_context
    which = "the mean" if shown == mean_decode_context(r.scenario) else "as set"
    return (f"decode ops at context {shown:,.0f} ({which}; roofline report shows the first step, {first:,}); "
            "FLOPs, bytes per op; time x n: all n")


MIN_COLUMN_WIDTHS = {"time x n": 9, "share": 6}  # "999.99 ms", "100.0%": the columns every key changes


def format_rows(header: list[str], rows: list[list[str]]) -> list[str]:
    """Header and rows as fixed-width lines (each column as wide as its widest cell; the time and share columns at
    least :data:`MIN_COLUMN_WIDTHS`: a keystroke that takes a time from "9.99 ms" to "10.01 ms" then keeps the line
    width, so only the changed rows repaint, not the whole table and its scrollbars)."""
    widths = [max(MIN_COLUMN_WIDTHS.get(header[i], 0), *(len(cells[i]) for cells in [header, *rows]))
              for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return COLUMN_GAP.join(cell.ljust(w) if i < LEFT_ALIGNED_COLUMNS else cell.rjust(w)
                               for i, (cell, w) in enumerate(zip(cells, widths, strict=True)))

    return [line(header), *(line(cells) for cells in rows)]


class OpsTable(ScrollView, can_focus=True):
    """A fixed header line, then one line per row; up/down/page/home/end or a click move the cursor."""

    COMPONENT_CLASSES = {"ops-table--header", "ops-table--cursor", "ops-table--odd"}
    DEFAULT_CSS = """
    OpsTable {
        background: $surface;
    }
    OpsTable > .ops-table--header {
        text-style: bold;
        color: $text-accent;
        background: $panel;
    }
    OpsTable > .ops-table--odd {
        background: $boost;
    }
    OpsTable > .ops-table--cursor {
        background: $block-cursor-blurred-background;
        color: $block-cursor-blurred-foreground;
    }
    OpsTable:focus > .ops-table--cursor {
        background: $block-cursor-background;
        color: $block-cursor-foreground;
        text-style: $block-cursor-text-style;
    }
    """
    BINDINGS = [
        Binding("up", "move(-1)", "up", show=False),
        Binding("down", "move(1)", "down", show=False),
        Binding("pageup", "page(-1)", "page up", show=False),
        Binding("pagedown", "page(1)", "page down", show=False),
        Binding("home", "move_to(0)", "first", show=False),
        Binding("end", "move_to(-1)", "last", show=False),
        Binding("left", "scroll_columns(-8)", "scroll left", show=False),
        Binding("right", "scroll_columns(8)", "scroll right", show=False),
    ]

    cursor_row: reactive[int] = reactive(0, always_update=False, init=False)

    class RowHighlighted(Message):
        """The cursor moved to ``row`` (0-based, header excluded)."""

        def __init__(self, table: OpsTable, row: int) -> None:
            super().__init__()
            self.table = table
            self.row = row

        @property
        def control(self) -> OpsTable:
            return self.table

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's argument name
        super().__init__(id=id)
        self._lines: list[str] = []  # header first
        self.keys: list[str] = []

    @property
    def row_count(self) -> int:
        return len(self.keys)

    def set_rows(self, header: list[str], rows: list[list[str]], keys: list[str]) -> None:
        """Show these rows; the cursor stays on the same key when it is still listed."""
        current = self.keys[self.cursor_row] if self.keys and self.cursor_row < len(self.keys) else None
        lines = format_rows(header, rows)
        old = self._lines
        self._lines, self.keys = lines, list(keys)
        width = max(len(line) for line in lines)
        self.virtual_size = Size(width, len(lines))
        if len(old) != len(lines) or len(old[0]) != len(lines[0]):
            self.refresh()
        else:
            # the rows in view, not under the scrollbars (drawn over them): a scrollbar beside or below the changes
            # is not painted again
            top, (width, height) = int(self.scroll_y), self.scrollable_content_region.size
            changed = [Region(0, y, width, 1) for y in range(height)
                       if (index := 0 if y == 0 else top + y) < len(lines) and lines[index] != old[index]]
            if changed:
                self.refresh(*changed)  # one call for all the rows (each call walks up to the screen)
        if current in self.keys:
            self.cursor_row = self.keys.index(current)
        elif self.cursor_row >= len(self.keys):
            self.cursor_row = max(0, len(self.keys) - 1)

    def render_lines(self, crop: Region) -> list[Strip]:
        """Textual's, with the width, scroll offsets and styles looked up once for all the lines it asks for
        (per line they cost more than the line: a keystroke repaints every row whose numbers changed)."""
        self._painting = self._paint_context()
        try:
            return super().render_lines(crop)
        finally:
            self._painting = None

    _painting: tuple | None = None

    def _paint_context(self) -> tuple:
        base = self.rich_style
        return (self.size.width, int(self.scroll_x), int(self.scroll_y), base,
                self.get_component_rich_style("ops-table--header"), self.get_component_rich_style("ops-table--cursor"),
                base + self.get_component_rich_style("ops-table--odd"))

    def render_line(self, y: int) -> Strip:
        width, x, top, base, header, cursor, odd = self._painting or self._paint_context()
        index = 0 if y == 0 else top + y  # line 0 is the header, fixed in place
        if index >= len(self._lines):
            return Strip.blank(width, base)
        row = index - 1
        style = header if y == 0 else cursor if row == self.cursor_row else odd if row % 2 else base
        text = self._lines[index][x:x + width].ljust(width)
        return Strip([Segment(text, style or Style.null())], width)

    def watch_cursor_row(self, old: int, new: int) -> None:
        for row in (old, new):
            y = row + 1 - int(self.scroll_y)
            if 1 <= y < self.size.height:
                self.refresh(Region(0, y, self.size.width, 1))
        self._scroll_cursor_into_view()
        self.post_message(self.RowHighlighted(self, new))

    def on_resize(self, event: events.Resize) -> None:
        """A shorter table (the formula below it grew) keeps the cursor's row in view."""
        self._scroll_cursor_into_view()

    def _scroll_cursor_into_view(self) -> None:
        body = max(1, self.size.height - 1)
        top = int(self.scroll_y)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False)
        elif self.cursor_row >= top + body:
            self.scroll_to(y=self.cursor_row - body + 1, animate=False)

    def move_cursor(self, row: int) -> None:
        if self.keys:
            self.cursor_row = max(0, min(row, len(self.keys) - 1))

    def action_move(self, delta: int) -> None:
        self.move_cursor(self.cursor_row + delta)

    def action_page(self, direction: int) -> None:
        self.move_cursor(self.cursor_row + direction * max(1, self.size.height - 2))

    def action_move_to(self, row: int) -> None:
        self.move_cursor(row if row >= 0 else len(self.keys) - 1)

    def action_scroll_columns(self, columns: int) -> None:
        self.scroll_to(x=max(0, self.scroll_x + columns), animate=False)

    def on_click(self, event: events.Click) -> None:
        if event.y >= 1:
            self.move_cursor(int(self.scroll_y) + event.y - 1)
