"""Paint a keystroke's changes without re-rendering the widgets between them.

Textual (8.x) paints a partial update by rendering every widget inside the *bounding box* of all changed regions.
A keystroke in the explorer changes a field on the left (the batch input) and the headline and chart on the right,
so that box is nearly the whole screen and all ~120 visible widgets are rendered again, most from cache but each
at a fixed cost. ``ClusteredCompositor`` groups the changed regions into clusters whose boxes do not overlap and
renders each cluster's box on its own, so the input pane's other fields are not touched when the chart changes.

What reaches the terminal is the same: the spans written are those of the changed regions, and every chop (the
piece of a line between two widget edges) that a span touches is taken from a cluster whose box it overlaps, where
the widget on top of it is rendered. If Textual's private compositor API is not what this was written against
(another 8.x release), the subclass falls back to Textual's own partial update.
"""

from __future__ import annotations

from textual._compositor import ChopsUpdate, Compositor
from textual.geometry import Region
from textual.screen import Screen


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
    """A Compositor whose partial updates render only the widgets under each cluster of changed regions."""

    def render_partial_update(self) -> ChopsUpdate | None:
        try:
            return self._clustered_partial_update()
        except AttributeError:  # a Textual whose private compositor API moved on
            return super().render_partial_update()

    def _clustered_partial_update(self) -> ChopsUpdate | None:
        screen_region = self.size.region
        update_regions = self._dirty_regions.copy()
        if not update_regions:
            return None
        clusters = [box.intersection(screen_region) for box in cluster_regions(update_regions)]
        clusters = [box for box in clusters if box]
        if len(clusters) < 2:
            return super().render_partial_update()
        self._dirty_regions.clear()
        spans = list(self._regions_to_spans(update_regions))
        cuts = self.cuts
        chops: list[dict] = [dict.fromkeys(cut_set[:-1]) for cut_set in cuts]
        rendered = []
        for box in clusters:
            rows = {y for y, _, _ in spans if box.y <= y < box.bottom}
            rendered.append((box, rows, self._render_chops(box, rows.__contains__)))
        # A chop is taken from a box it overlaps. Textual also writes the (empty) chop that starts where a span
        # ends, so such a chop is taken from a box it touches, once no box overlapping it has supplied it.
        for touching in (False, True):
            for box, rows, chops_of_box in rendered:
                x0, x1 = box.x, box.right
                for y in rows:
                    line = chops[y]
                    for (x, strip), end in zip(chops_of_box[y].items(), cuts[y][1:], strict=False):
                        if strip is None or line.get(x) is not None or end <= x0 or x > x1:
                            continue
                        if touching or x < x1:
                            line[x] = strip
        chop_ends = [cut_set[1:] for cut_set in cuts]
        return ChopsUpdate(chops, spans, chop_ends)


class ClusteredScreen(Screen):
    """A Screen painted through ``ClusteredCompositor`` (the explorer's default screen)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if isinstance(getattr(self, "_compositor", None), Compositor):
            self._compositor = ClusteredCompositor()
