"""Rows of a plain box, painted without passing through Textual's styles cache.

A widget that CSS gives no border, padding, outline, tint, hatch, text opacity or transparency, and whose size is
its region's, is a plain box: what Textual's styles cache does to each of its rows comes down to the app's line
filters (the truecolor conversion of ANSI colours), as long as its rows carry no links (the cache restyles a
hovered link; these widgets' rows have none). Applied here directly, a changed row costs a fraction of the
cache's per-row work, which matters for widgets whose rows mostly change on a keystroke (charts, the ops table).
Anything else goes through Textual's own path; tests/test_chart_refresh.py and tests/test_ops_table.py compare
both, strip for strip.
"""

from __future__ import annotations

from textual.geometry import Region
from textual.strip import Strip


class PlainBoxLines:
    """Mixin for line-API widgets (``render_line``): ``_plain_lines(crop)`` when ``_plain_box()``."""

    _plain: bool | None = None  # whether the styles leave rows as they are; looked up again when styles change

    def notify_style_update(self) -> None:
        self._plain = None
        super().notify_style_update()

    def _plain_box(self) -> bool:
        if self._plain is None:
            styles = self.styles
            self._plain = (not any(edge for edge, _ in styles.border) and not any(edge for edge, _ in styles.outline)
                           and styles.padding == (0, 0, 0, 0) and not styles.tint.a
                           and styles.text_opacity == 1.0 and (not styles.has_rule("hatch") or styles.hatch == "none")
                           and not self.BLANK)
        # Opacity multiplies down from the ancestors, whose changes do not reach notify_style_update, so it is
        # asked each time. A plain widget with scrollbars is smaller than its region; a ScrollView is not (the
        # compositor draws its scrollbars over its rows, which stay Textual's: tests/test_ops_table.py).
        return self._plain and self.opacity == 1.0 and self.size == self.region.size

    def _plain_lines(self, crop: Region) -> list[Strip]:
        """``render_line`` for each row of ``crop``, through the app's line filters, cropped to its columns."""
        filters = self.get_line_filters()
        background = self.background_colors[1]
        strips = []
        for y in crop.line_range:
            strip = self.render_line(y)
            for line_filter in filters:
                strip = strip.apply_filter(line_filter, background)
            strips.append(strip)
        if crop.column_span != (0, self.size.width):
            strips = [strip.crop(*crop.column_span) for strip in strips]
        return strips
