"""Paint a keystroke's changes without re-rendering the widgets between them.

Textual (8.x) paints a partial update by rendering every widget inside the *bounding box* of all changed regions.
A keystroke in the explorer changes a field on the left (the batch input) and the headline and chart on the right,
so that box is nearly the whole screen and all ~120 visible widgets are rendered again, most from cache but each
at a fixed cost, and each for all its rows. ``ClusteredCompositor`` groups the changed regions by the columns they
cover, splits each group into runs of changed rows ("pieces") and renders each piece on its own, every widget only
for the rows inside it: the input pane's other fields are not touched when the chart changes, and a container as
tall as the screen renders one row for a one-row change; a widget that overlaps no changed region (a scrollbar
beside a table's changed rows) is not rendered at all.

What reaches the terminal is the same, byte for byte (tests/perf/test_partial_paint.py compares every update of a
session with Textual's, at 160x50 and 80x24): the spans written are those of the changed regions, and every chop
(the piece of a line between two widget edges) that a span enters is taken from a piece that it overlaps, where
the widget on top of it is rendered; the chop starting where a span ends, of which Textual writes only a cursor
move, takes an empty strip when its widget was not rendered. This leans on Textual's private compositor API
(``_dirty_regions``, ``cuts``, ``_regions_to_spans``, ``_get_renders``; textual is pinned below 9); if that API
has moved, the subclass falls back to Textual's own partial update.
"""

from __future__ import annotations

from collections.abc import Callable

from textual._compositor import ChopsUpdate, Compositor
from textual.geometry import Region
from textual.screen import Screen
from textual.strip import Strip


def cluster_regions(regions: set[Region] | list[Region]) -> list[Region]:
    """Bounding boxes of column groups: regions whose column ranges overlap share a box, and boxes grow until no
    two share a column (each region lies in exactly one box).

    Columns, not rectangles: a chart refreshes its changed rows one region each, and boxes per row would render
    the widgets beside the chart once per row. Grouping by columns keeps one box per side of the screen.
    """
    boxes = sorted((region for region in regions if region), key=lambda r: r.x)
    out: list[Region] = []
    for box in boxes:
        if out and box.x < out[-1].right:  # sorted by x: a box can only share columns with the last group
            out[-1] = Region.union(out[-1], box)
        else:
            out.append(box)
    return out


class ClusteredCompositor(Compositor):
    """A Compositor whose partial updates render only the rows and widgets under each piece of changed regions.

    ``after_update``: called each time an update (a frame) has been composed (the explorer's garbage-collection
    pacing waits for it).
    """

    _visible_parts: list | None = None  # during a partial update: what ``_parts`` returns, worked out once
    after_update: Callable[[], None] | None = None

    def render_update(self, *args, **kwargs):
        update = super().render_update(*args, **kwargs)
        if update is not None and self.after_update is not None:
            self.after_update()
        return update

    def render_partial_update(self) -> ChopsUpdate | None:
        dirty = set(getattr(self, "_dirty_regions", ()))
        try:
            return self._clustered_partial_update()
        except AttributeError:  # a Textual whose private compositor API moved on: paint its own way
            self._dirty_regions = dirty
            return super().render_partial_update()

    def _clustered_partial_update(self) -> ChopsUpdate | None:
        screen_region = self.size.region
        update_regions = [region for region in self._dirty_regions.copy() if region]
        if not update_regions:
            self._dirty_regions.clear()
            return None
        self._dirty_regions.clear()
        spans = list(self._regions_to_spans(set(update_regions)))
        if not spans:
            return None
        cuts = self.cuts
        chops: list[dict] = [dict.fromkeys(cut_set[:-1]) for cut_set in cuts]
        # each widget's visible part, worked out once for all pieces (front to back, as visible_widgets)
        self._visible_parts = self._parts()
        try:
            rendered = [(piece, self._render_piece_chops(piece, update_regions))
                        for piece in self._pieces(update_regions, screen_region)]
        finally:
            self._visible_parts = None
        # A chop is taken from a piece it overlaps, or else from a piece it touches. Textual also writes the chop
        # that starts where a span ends: a cursor move and none of its cells (ChopsUpdate stops at the span's end),
        # so when no piece has supplied one (its widget lies beside the changes and was not rendered), any strip
        # stands in for it.
        for touching in (False, True):
            for piece, chops_of_piece in rendered:
                x0, x1 = piece.x, piece.right
                for y in piece.line_range:
                    line = chops[y]
                    for (x, strip), end in zip(chops_of_piece[y].items(), cuts[y][1:], strict=False):
                        if strip is None or line.get(x) is not None or end <= x0 or x > x1:
                            continue
                        if touching or x < x1:
                            line[x] = strip
        for y, _, span_end in spans:
            line = chops[y]
            if span_end in line and line[span_end] is None:
                line[span_end] = _EDGE_CHOP
        chop_ends = [cut_set[1:] for cut_set in cuts]
        return ChopsUpdate(chops, spans, chop_ends)

    @staticmethod
    def _pieces(update_regions: list[Region], screen_region: Region) -> list[Region]:
        """Per column cluster, one piece per run of consecutive changed rows, as wide as the cluster."""
        pieces = []
        for box in cluster_regions(update_regions):
            box = box.intersection(screen_region)
            if not box:
                continue
            rows = sorted({y for region in update_regions if box.contains_region(region.intersection(screen_region))
                           for y in region.line_range if box.y <= y < box.bottom})
            start = previous = None
            for y in (*rows, None):
                if start is not None and (y is None or y != previous + 1):
                    pieces.append(Region(box.x, start, box.width, previous - start + 1))
                    start = None
                if y is not None and start is None:
                    start = y
                previous = y
        return pieces

    def _render_piece_chops(self, piece: Region, update_regions: list[Region]) -> dict[int, dict[int, object]]:
        """Textual's ``_render_chops`` for the rows of one piece only (it starts an empty chop table for every
        line of the screen, for every piece): row -> {cut: strip}, front to back, the first strip for a cut wins.
        Only widgets that overlap a changed region in the piece are rendered (see ``_get_renders``)."""
        cuts = self.cuts
        chops = {y: dict.fromkeys(cuts[y][:-1]) for y in piece.line_range}
        changed = [region for region in update_regions if region.overlaps(piece)]
        for region, clip, strips in self._get_renders(piece, changed):
            render_region = region.intersection(clip)
            render_x = render_region.x
            first_cut, last_cut = render_region.column_span
            for y, strip in zip(render_region.line_range, strips, strict=False):
                line = chops.get(y)
                if line is None:
                    continue
                final_cuts = [cut for cut in cuts[y] if last_cut >= cut >= first_cut]
                for cut, part in zip(final_cuts, strip.divide([cut - render_x for cut in final_cuts[1:]]),
                                     strict=False):
                    if line.get(cut) is None:
                        line[cut] = part
        return chops

    def _parts(self) -> list[tuple]:
        """(widget, region, x, y, width, height of its visible part) front to back, those with a visible part."""
        parts = []
        for widget, (region, clip) in self.visible_widgets.items():
            x, y, width, height = region.intersection(clip)
            if width and height:
                parts.append((widget, region, x, y, width, height))
        return parts

    def _get_renders(self, crop: Region | None = None, changed: list[Region] | None = None):
        """As Textual's, but each widget renders only the rows inside ``crop``: a container as tall as the screen
        would otherwise render all its (cached) rows for a one-row change.

        Widgets come front to back and the first strip to fill a chop wins, so a widget whose rows in ``crop``
        are already covered by widgets in front of it would render for nothing: it is skipped (a container under
        its children, a tab pane under its chart). Only the columns whose chops the piece supplies count (those
        it spans; chops never straddle a widget's edge, so a widget covering a column covers that column's whole
        chop), and so does the column just right of the widget, where it may leave an empty chop; the chop
        starting at the piece's right edge is written as a cursor move alone, so it needs no widget (the
        containers beside a field).

        ``changed``: the changed regions in ``crop``. A widget that overlaps none of them (a table's scrollbars
        beside its changed rows, a neighbour inside the same column band) supplies no chop that is written
        with its cells, so it is not rendered; it still counts as covering its columns for the widgets behind
        it. What reaches the terminal is unchanged.
        """
        if crop is None:
            yield from super()._get_renders(crop)
            return
        top, bottom, left, right = crop.y, crop.bottom, crop.x, crop.right
        screen_width = self.size.width
        covered: dict[int, list[tuple[int, int]]] = {}  # row -> disjoint sorted [start, end) column spans
        parts = self._visible_parts if self._visible_parts is not None else self._parts()
        # no chop of a widget outside these bounds is taken for this piece (one starting at its right edge is only
        # touched); a plain comparison per widget first, as most of the screen's widgets lie elsewhere
        for widget, region, x, y, width, height in [
                part for part in parts if part[3] < bottom and part[3] + part[5] > top and part[2] + part[4] > left
                and part[2] < right]:
            first, last = max(y, top), min(y + height, bottom)
            # the columns whose chops this piece takes content from: [left, right)
            need_start, need_end = max(x, left), min(x + width + 1, right, screen_width)
            rows = range(first, last)
            if all(_covered(covered.get(row, ()), need_start, need_end) for row in rows):
                continue
            for row in rows:
                covered[row] = _add_span(covered.get(row, []), x, x + width)
            visible = Region(x, first, width, last - first)
            if changed is not None and not any(visible.overlaps(region) for region in changed):
                continue  # beside the changes: none of its cells is written
            yield visible, visible, widget.render_lines(
                Region(x - region.x, first - region.y, width, last - first))


_EDGE_CHOP = Strip([])  # stands in for a chop starting at a span's end: written as a cursor move, none of its cells


def _covered(spans, start: int, end: int) -> bool:
    """Whether disjoint sorted [start, end) spans cover [start, end) whole (touching spans are merged on insert)."""
    return any(s <= start and end <= e for s, e in spans)


def _add_span(spans: list[tuple[int, int]], start: int, end: int) -> list[tuple[int, int]]:
    """``spans`` with [start, end) added, overlapping or touching spans merged (kept sorted)."""
    merged: list[tuple[int, int]] = []
    for s, e in sorted((*spans, (start, end))):
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    return merged


class ClusteredScreen(Screen):
    """A Screen painted through ``ClusteredCompositor`` (the explorer's default screen)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if isinstance(getattr(self, "_compositor", None), Compositor):
            self._compositor = ClusteredCompositor()

    def call_after_each_frame(self, callback: Callable[[], None] | None) -> None:
        """Call ``callback`` each time a frame of this screen has been composed (None: stop)."""
        if isinstance(self._compositor, ClusteredCompositor):
            self._compositor.after_update = callback
