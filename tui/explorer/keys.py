"""What each of the explorer's keys does (tui/actions.py binds them): functions of the explorer's screen, which
names them as its actions. They change one of the screen's choices and have it redraw, or ask a view to post its
message (Compare's remove and sort), or open a dialog."""

from __future__ import annotations

from textual import events
from textual.widgets import Input, Select

from roofline.tui import messages as m
from roofline.tui.actions import TYPED_IN_FIELDS
from roofline.tui.inputs.limits import FIELD_LIMITS
from roofline.tui.views.registry import BY_ID


def check_action(screen, action: str, parameters: tuple) -> bool | None:
    """While a field has focus the keys that type text belong to it and are shown dimmed (None)."""
    focused = screen.focused
    if action in TYPED_IN_FIELDS and (isinstance(focused, Input) or (
            focused is not None and focused.check_consume_key("plus", "+"))):
        return None  # typed into a field or a select's search (they take printable keys)
    return True


def arrows_into_tables(screen, event: events.Key) -> None:
    """Arrows on Ops and Compare move the table's cursor at once."""
    screen.pane.take_table_key(event)


def scale_batch(screen, factor: float, field: str = "batch") -> None:
    screen.set_field(field, max(1, min(int(FIELD_LIMITS[field][1]), int(getattr(screen.form, field) * factor))))


def scale_prompt(screen, factor: float) -> None:
    scale_batch(screen, factor, "prompt_tokens")


def show_view(screen, view: str) -> None:
    if view in BY_ID:
        screen.pane.tabs.active = view


def toggle_inputs(screen) -> None:
    """Narrow terminals show inputs or results; wide ones can hide the inputs for a bigger chart."""
    screen.toggle_class("-inputs-toggled")
    if screen.has_class("-narrow") and screen.has_class("-inputs-toggled"):
        screen.inputs.field("hardware_id").focus()


def toggle_ceilings(screen) -> None:
    screen.set_ceiling(screen.ceiling.toggled())


def pin_baseline(screen) -> None:
    """Pin the scenario as a baseline; pressed again on the pinned scenario, unpin."""
    if screen.results is None:
        return
    if screen.baseline is not None and screen.baseline.scenario == screen.results.scenario:
        clear_baseline(screen)
        return screen.notify("baseline unpinned")
    screen.baseline = screen.results
    screen.notify("baseline pinned: numbers now show the change against it (p again on it to unpin)")
    screen.redraw()


def clear_baseline(screen) -> None:
    screen.baseline = None
    screen.redraw()


def compare_add(screen) -> None:
    if screen.results is not None and screen.results.scenario.hardware.id not in screen.compare_ids:
        screen.compare_ids = (*screen.compare_ids, screen.results.scenario.hardware.id)
        screen.redraw()
    show_view(screen, "compare")


def compare_remove(screen) -> None:
    """Drop the highlighted device from the Compare view (the current hardware always stays)."""
    if (compare := screen.pane.shown("compare")) is not None:
        compare.remove_highlighted()


def compare_sort(screen) -> None:
    """Sort Compare by the next column (after the last, back to the compare list's order)."""
    if (compare := screen.pane.shown("compare")) is not None:
        compare.sort_next()


def explain_gap(screen) -> None:
    from roofline.tui.explorer.dialogs import GapScreen

    if screen.results is not None:
        screen.app.push_screen(GapScreen.of_scenario(screen.results.scenario))


def toggle_live(screen) -> None:
    if not screen.live.on:
        screen.pane.tabs.active = "roofline"  # the live point is drawn on the roofline
    screen.live.toggle()


def toggle_engine(screen) -> None:
    """m: a running engine's live point on the Serving view (tui/explorer/engine_line.py); shown there first."""
    from roofline.tui.explorer.engine_line import EngineLine

    screen.pane.tabs.active = "serving"

    def toggle() -> None:
        lines = screen.query(EngineLine)
        if lines:
            lines.first().toggle(screen.engine_url)

    screen.call_after_refresh(toggle)


def leave_field(screen) -> None:
    """Escape: leave the field being typed in (its keys work again); in talk mode, back to the slides."""
    if isinstance(screen.focused, Input | Select):
        return screen.set_focus(None)
    screen.post_message(m.BackToSlides())

