"""Typing in the explorer's fields: what is refused says why in the field's own words, and goes away when fixed."""

from __future__ import annotations

from textual.widgets import Input, Static, TabbedContent

from roofline.presets import load_catalog
from roofline.tui.app import RooflineApp
from roofline.tui.inputs.form import ScenarioForm

CATALOG = load_catalog()


def _status(app: RooflineApp) -> str:
    return str(app.query_one("#status", Static).render())


async def _type(app: RooflineApp, pilot, field: str, text: str) -> None:
    box = app.query_one(f"#{field}", Input)
    box.focus()
    box.value = text
    await pilot.pause()  # Input.Changed, then the panel's message to the screen
    await pilot.pause()


async def test_a_fraction_in_a_whole_number_field_is_refused_not_rewritten():
    app = RooflineApp(ScenarioForm(batch=8), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        await _type(app, pilot, "batch", "2.5")
        assert app.query_one("#batch", Input).value == "2.5"  # kept as typed (an integer Input made it 25)
        assert app.explorer.form.batch == 8
        assert _status(app) == "batch: must be a whole number, got 2.5 (showing batch 8, the last good value)"
        await _type(app, pilot, "batch", "1e12")
        assert _status(app).startswith("batch: must be between 1 and 1,048,576, got 1,000,000,000,000")
        await _type(app, pilot, "batch", "16")
        assert app.explorer.form.batch == 16 and _status(app) == ""
        assert not app.query_one("#batch", Input).has_class("-invalid")


async def test_errors_use_the_label_on_screen():
    app = RooflineApp(ScenarioForm(), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        await _type(app, pilot, "mem_bw_override_gb_per_s", "fast")
        assert _status(app) == ("bandwidth GB/s: 'fast' is not a number "
                                "(showing bandwidth GB/s from the preset, the last good value)")


async def test_clearing_a_refused_optional_field_clears_its_message():
    app = RooflineApp(ScenarioForm(), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        await _type(app, pilot, "price_per_device_hour", "-1")
        assert _status(app).startswith("$ / device-hour: must be between")
        await _type(app, pilot, "price_per_device_hour", "")
        assert _status(app) == ""
        assert not app.query_one("#price_per_device_hour", Input).has_class("-invalid")


async def test_two_problems_show_the_latest_and_count_the_rest():
    app = RooflineApp(ScenarioForm(), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        await _type(app, pilot, "batch", "x")
        await _type(app, pilot, "prompt_tokens", "0")
        assert _status(app).startswith("prompt tokens: must be between 1 and 10,000,000, got 0")
        assert _status(app).endswith("; 1 more field to fix")
        await _type(app, pilot, "prompt_tokens", "512")
        assert _status(app).startswith("batch: 'x' is not a number")


async def test_escape_leaves_a_field_and_the_keys_work_again():
    app = RooflineApp(ScenarioForm(), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        app.query_one("#prompt_tokens", Input).focus()
        await pilot.pause()
        await pilot.press("escape")
        assert not isinstance(app.focused, Input)
        await pilot.press("plus")
        assert app.explorer.form.batch == 2


async def test_narrow_terminals_show_field_problems_beside_the_fields():
    app = RooflineApp(ScenarioForm(), catalog=CATALOG)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("i")  # the inputs, in place of the results
        await pilot.pause()
        note = app.query_one("#input-status", Static)
        assert not note.display  # nothing to say: no blank row above the inputs
        await _type(app, pilot, "batch", "0")
        assert note.display and str(note.render()).startswith("batch: must be between 1 and")
        await _type(app, pilot, "batch", "4")
        assert not note.display


async def test_wide_terminals_say_it_once_and_the_inputs_stay_put():
    """The results' status line is on screen beside the inputs: the note above the inputs would repeat it and push
    every pane down."""
    app = RooflineApp(ScenarioForm(), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        top = app.query_one("#hardware-pane").region.y
        await _type(app, pilot, "batch", "0")
        assert str(app.query_one("#status", Static).render()).startswith("batch: must be between 1 and")
        assert not app.query_one("#input-status", Static).display
        assert app.query_one("#hardware-pane").region.y == top


async def test_live_from_another_view_goes_to_the_roofline():
    app = RooflineApp(ScenarioForm(), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("2", "l")
        await pilot.pause()
        assert app.query_one("#views", TabbedContent).active == "roofline"
        await pilot.press("l")
        await app.workers.wait_for_complete()


async def test_a_longer_number_repaints_its_field_without_a_screen_layout(monkeypatch):
    """64 -> 128 changes the batch field's text width; Textual's Input would ask for a layout of the whole screen."""
    from roofline.tui.explorer.panes import FieldInput

    app = RooflineApp(ScenarioForm(batch=64), catalog=CATALOG)
    layouts: list[str] = []
    original = FieldInput.refresh

    def spy(self, *regions, layout=False, **kwargs):
        if layout:
            layouts.append(self.id or "")
        return original(self, *regions, layout=layout, **kwargs)

    async with app.run_test(size=(160, 50)) as pilot:
        monkeypatch.setattr(FieldInput, "refresh", spy)
        await pilot.press("+", "+", "-")
        await pilot.pause()
        assert app.query_one("#batch", Input).value == "128"
    assert layouts == []


async def test_a_long_path_scrolls_inside_its_field_and_stays_in_view_when_shortened():
    """The field skips Textual's layout on a change of text width; typing must still scroll to the cursor, and
    deleting inside the text must bring the scroll back in range (the layout used to do both)."""
    app = RooflineApp(ScenarioForm(), catalog=CATALOG)
    path = "/very/long/directory/name/for/a/model/checkpoint/config.json"
    async with app.run_test(size=(160, 50)) as pilot:
        box = app.query_one("#config_path", Input)
        box.focus()
        await pilot.press(*path)
        await pilot.pause()
        assert box.value == path
        assert box.scroll_x > 0  # the start scrolled out of the 22-column field, the cursor end in view
        assert box.render_line(0).text.rstrip().endswith("config.json")
        await pilot.press("end", *["left"] * 12, *["delete"] * 12)
        await pilot.pause()
        assert box.value == path[:-12]
        assert 0 <= box.scroll_x <= box.max_scroll_x
        assert box.render_line(0).text.rstrip().endswith(path[-24:-12])


async def test_a_partial_entry_does_not_become_the_last_good_value():
    """Typing 1e12 passes through 1e1 (prompt 10, valid); when 1e12 is refused the scenario goes back to the value
    the field had when editing began, not to the partial 10."""
    app = RooflineApp(ScenarioForm(prompt_tokens=2048), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        for text in ("1", "1e", "1e1", "1e12"):
            await _type(app, pilot, "prompt_tokens", text)
        assert app.explorer.form.prompt_tokens == 2048
        assert app.explorer.results.scenario.batching.prompt_tokens == 2048
        assert "2,048" in _status(app)
