"""The Compare view: the workload on each device of the compare list (tui/views/compare_data.py), sorted on the
chosen column; in serving mode each device's serving numbers too. A header click or ``s`` posts
:class:`~roofline.tui.messages.SortChanged`, ``x`` :class:`~roofline.tui.messages.CompareChanged`; the screen hands
the new state back."""

from __future__ import annotations

from dataclasses import replace

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import DataTable, Static

from roofline.models.errors import ModelInputError
from roofline.tui.explorer.quiet_update import set_text
from roofline.tui.explorer.view_body import ViewBody
from roofline.tui.messages import CompareChanged, SortChanged
from roofline.tui.views.compare_data import COLUMN_KEYS, COLUMNS, PRICE_CAPTION, compare_rows, number_in, sorted_by
from roofline.tui.views.registry import BY_ID
from roofline.tui.views.serving_data import COMPARE_COLUMNS as SERVING_COLUMNS
from roofline.tui.views.serving_data import ServingMemo, compare_cells, serving_settings
from roofline.tui.views.state import ExplorerState, Sort

_ARROW = {True: " v", False: " ^"}


def compare_columns(serving: bool) -> list[tuple[str, str]]:
    """(key, label) of Compare's columns: device and TP, in serving mode the serving ones next (what serving mode
    asks about, on screen at any width), then the static batch's."""
    static = [(c.key, c.label) for c in COLUMNS]
    served = [(f"serving {label}", label) for label in SERVING_COLUMNS] if serving else []
    return static[:_LEADING] + served + static[_LEADING:]


_LEADING = 2  # device and TP lead every row


def next_sort(state: ExplorerState) -> Sort | None:
    """The next column to sort on (after the last, back to the compare list's order), largest first where that is
    the column's natural order."""
    keys = [key for key, _ in compare_columns(state.form.serving)]
    current = state.compare_sort[0] if state.compare_sort else None
    if current not in keys:
        return sort_on(keys[0])
    following = keys.index(current) + 1
    return sort_on(keys[following]) if following < len(keys) else None


def sort_on(key: str, descending: bool | None = None) -> Sort:
    first = next((c.descending for c in COLUMNS if c.key == key), key != "device")
    return key, first if descending is None else descending


def _in_column_order(static: tuple, serving: tuple) -> tuple:
    """One row's cells in :func:`compare_columns`' order."""
    return (*static[:_LEADING], *serving, *static[_LEADING:])


class CompareTable(DataTable):
    """Compare's table: the device column stays put, and Left/Right scroll the others a whole column at a time
    (a row cursor's Right scrolled one cell per key: 40 presses to reach the last column)."""

    def _column_edges(self) -> list[int]:
        edges, x = [], 0
        for column in list(self.columns.values())[self.fixed_columns:]:
            x += column.get_render_width(self)
            edges.append(x)
        return edges

    def action_cursor_right(self) -> None:
        if self.cursor_type != "row":
            return super().action_cursor_right()
        edge = next((e for e in self._column_edges() if e > self.scroll_x), None)
        if edge is not None:
            self.scroll_to(x=min(edge, self.max_scroll_x), animate=False)

    def action_cursor_left(self) -> None:
        if self.cursor_type != "row":
            return super().action_cursor_left()
        self.scroll_to(x=max([0, *(e for e in self._column_edges() if e < self.scroll_x)]), animate=False)


class CompareView(ViewBody):
    def __init__(self) -> None:
        super().__init__(BY_ID["compare"])
        self._memo = ServingMemo(size=64)  # serving numbers per device, across keys

    def compose(self) -> ComposeResult:
        yield CompareTable(id="compare-table", cursor_type="row", zebra_stripes=True, fixed_columns=1)
        yield Static(id="compare-caption", markup=False)  # the sort, and what $/Mtok counts

    @property
    def table(self) -> DataTable:
        return self.query_one(DataTable)

    def highlighted(self) -> str | None:
        table = self.table
        if not table.row_count:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value

    def remove_highlighted(self) -> None:
        """``x``: drop the highlighted device (the current hardware always stays)."""
        state, hw_id = self.state, self.highlighted()
        if state is not None and hw_id in state.compare_ids:
            self.post_message(CompareChanged(tuple(h for h in state.compare_ids if h != hw_id)))

    def sort_next(self) -> None:
        if self.state is not None:
            self.post_message(SortChanged(next_sort(self.state)))

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        """A click on a header sorts by that column; a second click on it reverses the order."""
        event.stop()
        key, current = str(event.column_key.value), self.state.compare_sort if self.state else None
        self.post_message(SortChanged(sort_on(key, not current[1]) if current and current[0] == key
                                      else sort_on(key)))

    def _serving_cells(self, state: ExplorerState, scenario, current: bool) -> tuple[str, ...]:
        """The serving cells of one device's row (none in static mode; dashes where it cannot compute): the form's
        price override for the current device, each other device's own price."""
        if not state.form.serving:
            return ()
        if scenario is None:
            return ("-",) * len(SERVING_COLUMNS)
        try:
            settings = serving_settings(state.form, scenario)
            if not current:
                settings = replace(settings, options=replace(settings.options, price_usd_per_hour=None))
            return compare_cells(scenario, settings, state.ceiling.estimate_name, self._memo)
        except (ModelInputError, ArithmeticError, ValueError):
            return ("-",) * len(SERVING_COLUMNS)

    def draw(self, state: ExplorerState) -> None:
        """The workload on each device: no throughput or price where it does not fit, the smallest TP that would
        fit instead; each device's own price; sorted on the chosen column."""
        table = self.table
        columns = compare_columns(state.form.serving)
        sort_key, descending = state.compare_sort or (None, False)
        labels = [(key, label + (_ARROW[descending] if key == sort_key else "")) for key, label in columns]
        shown = [(str(key.value), str(col.label)) for key, col in table.columns.items()]
        cursor_key = self.highlighted()
        if shown != labels:
            table.clear(columns=True)
            for key, label in labels:
                table.add_column(label, key=key)
        else:
            table.clear()
        rows = compare_rows(state.results, state.catalog.hardware, list(state.compare_ids),
                            achievable=state.achievable, price_usd_per_hour=state.form.price_per_device_hour)
        lines = [(row, _in_column_order(row.cells(), self._serving_cells(state, row.scenario, row.current)))
                 for row in rows]
        if sort_key in COLUMN_KEYS:
            lines = sorted_by(lines, sort_key, lambda line: line[0].sort_value(sort_key), descending=descending)
        elif sort_key is not None and sort_key in dict(columns):
            index = [key for key, _ in columns].index(sort_key)
            lines = sorted_by(lines, sort_key, lambda line: number_in(line[1][index]), descending=descending)
        fits_at = [key for key, _ in columns].index("fits")
        for row, cells in lines:
            cells = list(cells)
            cells[fits_at] = Text(cells[fits_at], style="" if row.fits else "bold")
            table.add_row(Text(cells[0]), *cells[1:], key=row.hardware_id)
        if cursor_key is not None and cursor_key in table.rows:
            table.move_cursor(row=table.get_row_index(cursor_key), animate=False)
        if sort_key is None:
            order = "list order; s or a header click sorts (again: reverse); x removes a device"
        else:
            way = "largest" if descending else "smallest"
            order = (f"sorted by {dict(columns).get(sort_key, sort_key)} ({way} first); s: next column, "
                     "the header again: reverse")
        set_text(self.query_one("#compare-caption", Static), f"{order}\n{PRICE_CAPTION}")
