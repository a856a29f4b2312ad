"""The batch and context keys reach the explorer when nothing on screen types them, the focused field or search
when something does, and nothing under a dialog, the help or the palette.
"""

from __future__ import annotations

from textual.widgets import Input, Select

from roofline.tui.app import RooflineApp
from roofline.tui.inputs.form import ScenarioForm


def _app() -> RooflineApp:
    return RooflineApp(ScenarioForm(batch=16, prompt_tokens=1024))


async def test_batch_and_context_keys_act_with_the_inputs_pane_or_nothing_focused():
    app = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("plus", "equals_sign", "minus", "right_square_bracket")
        await pilot.pause()
        assert (app.explorer.form.batch, app.explorer.form.prompt_tokens) == (32, 2048)
        app.set_focus(None)
        await pilot.press("left_square_bracket", "left_square_bracket", "minus")
        await pilot.pause()
        assert (app.explorer.form.batch, app.explorer.form.prompt_tokens) == (16, 512)


async def test_a_focused_field_gets_the_characters_typed():
    app = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        field = app.query_one("#output_tokens", Input)
        field.focus()
        field.value = ""
        await pilot.press("plus", "minus", "equals_sign", "right_square_bracket", "left_square_bracket")
        await pilot.pause()
        assert field.value == "+-=]["
        assert (app.explorer.form.batch, app.explorer.form.prompt_tokens) == (16, 1024)


async def test_an_open_select_searches_with_the_key_and_the_batch_stays():
    app = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        select = app.query_one("#hardware_id", Select)
        select.focus()
        await pilot.press("enter")  # opens the overlay, which types to search
        await pilot.pause()
        assert select.expanded
        await pilot.press("plus", "minus")
        await pilot.pause()
        assert app.explorer.form.batch == 16


async def test_dialogs_help_and_palette_keep_the_keys():
    app = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert app.screen is not app.screen_stack[0]
        await pilot.press("plus", "right_square_bracket")
        await pilot.pause()
        assert (app.explorer.form.batch, app.explorer.form.prompt_tokens) == (16, 1024)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press("plus", "minus")
        await pilot.pause()
        assert app.explorer.form.batch == 16
        assert "+-" in app.screen.query_one(Input).value  # typed into the palette's search
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("plus")
        await pilot.pause()
        assert app.explorer.form.batch == 32
