"""Rows of a plain box, painted without passing through Textual's styles cache.

A widget that CSS gives no border, outline, tint, hatch, text opacity, transparency or padding above and below,
and no scrollbars, is a plain box: what Textual's styles cache does to each of its rows comes down to padding it
left and right with blanks in the widget's background and the app's line filters (the truecolor conversion of
ANSI colours), as long as its rows carry no links (the cache restyles a hovered link; these widgets' rows have
none). Applied here directly, a changed row costs a fraction of the cache's per-row work, which matters for
widgets whose rows mostly change on a keystroke (charts, the ops table, the headline numbers, the verdict, the
memory bar and the number fields). Anything else goes through Textual's own path; tests/test_chart_refresh.py,
tests/test_ops_table.py and tests/test_headline_paint.py compare both, strip for strip.
"""

from __future__ import annotations

from rich.segment import Segment
from textual.geometry import Region
from textual.strip import Strip
from textual.style import Style

from roofline.tui.perf import switch

_ENABLED = switch.textual_speedups()  # ROOFLINE_SPEEDUPS=0 or an unverified Textual: Textual's own path


class PlainBoxLines:
    """Mixin for line-API widgets (``render_line``): ``render_lines`` paints ``_plain_lines(crop)`` when
    ``_plain_box()``, else Textual's own (put it before the Textual class in the bases)."""

    # whether the styles leave rows as they are, and the styles' change counter it was worked out for: a stylesheet
    # change comes through notify_style_update, one made in code (widget.styles.x = ...) only through the counter
    _plain: tuple[object, bool] | None = None
    # left and right padding painted here too (the text widgets); a ScrollView keeps padding to Textual's path
    PLAIN_SIDE_PADDING = False

    def notify_style_update(self) -> None:
        self._plain = None
        super().notify_style_update()

    def render_lines(self, crop: Region) -> list[Strip]:
        if _ENABLED and self._plain_box():
            return self._plain_lines(crop)
        return super().render_lines(crop)

    def _plain_box(self) -> bool:
        styles = self.styles
        version = getattr(styles, "_cache_key", None)  # Textual's "changes when any style is changed"
        if self._plain is None or version is None or self._plain[0] != version:
            top, right, bottom, left = styles.padding
            padding_allowed = top == bottom == 0 and (self.PLAIN_SIDE_PADDING or left == right == 0)
            self._plain = (version, not any(edge for edge, _ in styles.border)
                           and not any(edge for edge, _ in styles.outline)
                           and padding_allowed and not styles.tint.a
                           and styles.text_opacity == 1.0 and (not styles.has_rule("hatch") or styles.hatch == "none")
                           and not self.BLANK)
        # Opacity multiplies down from the ancestors, whose changes do not reach notify_style_update, so it is
        # asked each time. A plain widget with scrollbars is smaller than its region and its padding; a ScrollView
        # is not (the compositor draws its scrollbars over its rows, which stay Textual's: tests/test_ops_table.py).
        if not self._plain[1] or self.opacity != 1.0:
            return False
        _, right, _, left = self.styles.padding
        width, height = self.size
        return (left + width + right, height) == self.region.size

    def _plain_lines(self, crop: Region) -> list[Strip]:
        """``render_line`` for each row of ``crop``, padded left and right in the widget's background (as Textual
        pads content, to the content width first), through the app's line filters, cropped to its columns."""
        filters = self.get_line_filters()
        base_background, background = self.background_colors
        _, right, _, left = self.styles.padding
        width = self.region.width
        content_width = width - left - right
        inner = None
        if left or right:
            inner = Style(background=base_background + background).rich_style
            left_blank = [Segment(" " * left, inner)] if left else []
            right_blank = [Segment(" " * right, inner)] if right else []
        strips = []
        for y in crop.line_range:
            strip = self.render_line(y)
            if strip.cell_length != content_width:  # as Textual does: cut or fill to the content width
                if inner is None:
                    inner = Style(background=base_background + background).rich_style
                strip = strip.adjust_cell_length(content_width, inner)
            if left or right:
                strip = Strip([*left_blank, *strip, *right_blank], width)
            for line_filter in filters:
                strip = strip.apply_filter(line_filter, background)
            strips.append(strip)
        if crop.column_span != (0, width):
            strips = [strip.crop(*crop.column_span) for strip in strips]
        return strips
