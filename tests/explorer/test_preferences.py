"""The preferences file: theme remembered, default hardware and model, key overrides by binding id."""

import os
from pathlib import Path

from roofline.presets import load_catalog
from roofline.tui.app import RooflineApp
from roofline.tui.preferences import load_preferences, save_theme

CATALOG = load_catalog()


def _path() -> Path:
    return Path(os.environ["ROOFLINE_PREFERENCES"])


def test_missing_file_is_no_problem_and_a_broken_one_is_one_line():
    assert load_preferences(_path()) == (load_preferences(_path())[0], None)
    _path().write_text("theme = [1, 2\n")
    prefs, problem = load_preferences(_path())
    assert prefs.theme is None and problem.startswith("preferences ignored:") and "\n" not in problem
    _path().write_text('hardware = "../../etc/x"\n')
    assert load_preferences(_path())[1] is not None  # ids are ids


def test_save_theme_keeps_other_preferences_and_never_clobbers_an_unreadable_file():
    _path().write_text('model = "llama-3.1-70b"\n[keys]\n"batch.double" = "k"\n')
    assert save_theme("textual-light") is None
    prefs, problem = load_preferences(_path())
    assert (prefs.theme, prefs.model, prefs.keys, problem) == ("textual-light", "llama-3.1-70b", {"batch.double": "k"},
                                                               None)
    _path().write_text("broken = \n")
    assert save_theme("nord").startswith("theme not remembered")
    assert _path().read_text() == "broken = \n"


async def test_theme_from_preferences_is_applied_and_a_new_one_remembered():
    _path().write_text('theme = "textual-light"\n[keys]\n"batch.double" = "k"\n')
    app = RooflineApp(catalog=CATALOG)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.theme == "textual-light"
        batch = app.explorer.form.batch
        await pilot.press("k")  # the overridden key for batch.double
        await pilot.pause()
        assert app.explorer.form.batch == 2 * batch
        app.theme = "nord"
        await pilot.pause()
    assert load_preferences(_path())[0].theme == "nord"


def test_cli_opens_on_the_preferred_hardware_and_model(monkeypatch):
    import roofline.tui.app as app_module
    from roofline.tui.cli.main import main

    _path().write_text('hardware = "H200"\nmodel = "llama-3.1-70b"\n')
    seen = []
    monkeypatch.setattr(app_module, "run_explorer", lambda form, **kw: seen.append(form) or 0)
    main([])
    main(["--hardware", "mi300x"])
    assert (seen[0].hardware_id, seen[0].model_ref) == ("h200", "llama-3.1-70b")
    assert seen[1].hardware_id == "mi300x"


async def test_no_color_does_not_overwrite_the_remembered_theme(monkeypatch):
    """Under NO_COLOR Textual switches to an ANSI theme by itself: that must not become the user's preference."""
    _path().write_text('theme = "nord"\n')
    monkeypatch.setenv("NO_COLOR", "1")
    app = RooflineApp(catalog=CATALOG)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.theme = "textual-light"
        await pilot.pause()
    assert load_preferences(_path())[0].theme == "nord"
