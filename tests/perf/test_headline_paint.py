"""The headline numbers, the verdict and the memory bar paint as plain boxes: the same strips as Textual's."""

from __future__ import annotations

from textual.geometry import Region
from textual.widget import Widget

from roofline.tui.app import RooflineApp
from roofline.tui.explorer.headline import Headline, WrappedText
from roofline.tui.inputs.form import ScenarioForm


def _compare(widget: Widget, label: str) -> int:
    """Whole and cropped (columns and rows): the direct path against Textual's styles cache, strip for strip."""
    assert widget._plain_box(), label
    width, height = widget.region.size
    crops = [Region(0, 0, width, height), Region(3, 0, width - 9, height)]
    if height > 1:
        crops.append(Region(1, 1, width - 2, height - 1))
    for crop in crops:
        widget._styles_cache.clear()
        theirs = Widget.render_lines(widget, crop)
        ours = widget.render_lines(crop)
        assert [list(strip) for strip in ours] == [list(strip) for strip in theirs], (label, crop)
        assert [strip.cell_length for strip in ours] == [crop.width] * crop.height, (label, crop)
    return len(crops)


async def test_headline_verdict_and_memory_bar_paint_as_textual_does():
    """Dark and light themes, wide and narrow (compact digits), with a pinned baseline's changes, and a batch that
    does not fit (the memory bar in its error colour)."""
    app = RooflineApp(ScenarioForm(model_ref="llama-3.1-70b", tp=4, batch=16))
    compared = 0
    for size in ((160, 50), (80, 24)):
        async with app.run_test(size=size) as pilot:
            for theme in ("textual-dark", "textual-light"):
                app.theme = theme
                for keys in ((), ("p", "+"), ("+",) * 8):
                    await pilot.press(*keys)
                    await pilot.pause()
                    for widget in (app.query_one(Headline), *app.query(WrappedText)):
                        if widget.display and widget.region.width:
                            compared += _compare(widget, f"{size} {theme} {keys} {widget.id}")
            assert app.query_one("#memory-bar").has_class("-overflow")
        app = RooflineApp(ScenarioForm(model_ref="llama-3.1-70b", tp=4, batch=16))
    assert compared >= 60


async def test_a_padded_box_with_other_styles_goes_through_textual():
    """Padding above or below, a border, or a tint: not a plain box, so Textual's own path paints it."""
    app = RooflineApp(ScenarioForm())
    async with app.run_test(size=(120, 40)) as pilot:
        verdict = app.query_one("#verdict")
        assert verdict._plain_box()
        for rule, value, back in (("padding", (1, 2), (0, 2)), ("border", ("round", "red"), ("none", "red")),
                                  ("tint", "red 50%", "red 0%")):
            setattr(verdict.styles, rule, value)
            await pilot.pause()
            assert not verdict._plain_box(), rule  # a change made in code, not by the stylesheet, counts too
            setattr(verdict.styles, rule, back)
            await pilot.pause()
            assert verdict._plain_box(), rule


async def test_fields_paint_as_textual_does():
    """Compact fields, as a keystroke leaves them and as typing does: unfocused, focused with the cursor shown or
    blinked off, with a selection, invalid, empty with a placeholder; dark and light."""
    from roofline.tui.explorer.panes import FieldInput

    app = RooflineApp(ScenarioForm(model_ref="llama-3.1-70b", tp=4, batch=16))
    compared = 0
    async with app.run_test(size=(160, 50)) as pilot:
        for theme in ("textual-dark", "textual-light"):
            app.theme = theme
            await pilot.press("plus")
            await pilot.pause()
            batch = app.query_one("#batch", FieldInput)
            compared += _compare(batch, f"{theme} after +")
            batch.focus()
            await pilot.pause()
            for cursor_visible in (True, False):
                batch._cursor_visible = cursor_visible
                compared += _compare(batch, f"{theme} focused, selected, cursor {cursor_visible}")
            await pilot.press("end", "x")  # invalid: its error background
            await pilot.pause()
            assert batch.has_class("-invalid")
            compared += _compare(batch, f"{theme} invalid")
            price = app.query_one("#price_per_device_hour", FieldInput)
            assert not price.value and price.placeholder
            compared += _compare(price, f"{theme} placeholder")
            await pilot.press("backspace", "escape")
            await pilot.pause()
    assert compared >= 20
