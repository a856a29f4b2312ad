"""Issue 30 item 17: a ``hardware`` or ``model`` in preferences.toml that is no longer a preset is a one-line
warning, and the explorer opens on the default (it stopped with an error about ``--hardware``, a flag the user
never typed)."""

from __future__ import annotations

import pytest

from tests.conftest import run_cli


@pytest.fixture
def opened(monkeypatch):
    forms = []

    def fake_run_explorer(form, **kwargs):
        forms.append(form)
        return 0

    monkeypatch.setattr("roofline.tui.app.run_explorer", fake_run_explorer)
    return forms


def _prefs(tmp_path, monkeypatch, body: str) -> None:
    path = tmp_path / "preferences.toml"
    path.write_text(body)
    monkeypatch.setenv("ROOFLINE_PREFERENCES", str(path))


@pytest.mark.parametrize(("body", "key"), [('hardware = "gone-gpu"\n', "hardware"),
                                           ('model = "gone-model"\n', "model")])
def test_a_stale_id_in_preferences_warns_and_opens_on_the_default(tmp_path, monkeypatch, capsys, opened, body, key):
    from roofline.tui.inputs.form import ScenarioForm

    _prefs(tmp_path, monkeypatch, body)
    code, out, err = run_cli([], capsys)
    assert code == 0, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "preferences" in lines[0] and key in lines[0] and "--hardware" not in lines[0]
    default = ScenarioForm()
    assert (opened[0].hardware_id, opened[0].model_ref) == (default.hardware_id, default.model_ref)


def test_a_valid_preference_is_used(tmp_path, monkeypatch, capsys, opened):
    _prefs(tmp_path, monkeypatch, 'hardware = "h200"\nmodel = "llama-3.1-70b"\n')
    code, out, err = run_cli([], capsys)
    assert code == 0 and err == ""
    assert (opened[0].hardware_id, opened[0].model_ref) == ("h200", "llama-3.1-70b")


def test_a_flag_still_wins_over_a_stale_preference(tmp_path, monkeypatch, capsys, opened):
    _prefs(tmp_path, monkeypatch, 'hardware = "gone-gpu"\n')
    code, out, err = run_cli(["--hardware", "mi300x"], capsys)
    assert code == 0 and opened[0].hardware_id == "mi300x"
