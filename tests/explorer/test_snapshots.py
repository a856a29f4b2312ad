"""Snapshot tests of the explorer (pytest-textual-snapshot); update with --snapshot-update."""

from __future__ import annotations

import pytest

from roofline.presets import load_catalog
from roofline.tui.app import RooflineApp
from roofline.tui.inputs.form import ScenarioForm

CATALOG = load_catalog(user_dir=None)


def _app(theme: str | None = None, **form) -> RooflineApp:
    app = RooflineApp(ScenarioForm(**form), catalog=CATALOG)
    if theme:
        app.theme = theme
    return app


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (160, 50)], ids=["80x24", "120x40", "160x50"])
def test_default_screen(snap_compare, size):
    assert snap_compare(_app(), terminal_size=size)


def test_batch_sweep_light_theme(snap_compare):
    assert snap_compare(_app("textual-light", batch=16), terminal_size=(120, 40), press=["2"])


def test_memory_does_not_fit(snap_compare):
    assert snap_compare(_app(model_ref="llama-2-70b"), terminal_size=(120, 40), press=["4"])
