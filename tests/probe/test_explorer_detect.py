"""The explorer, opened without --hardware, switches to the local GPUs it finds (stand-in tools, no GPU)."""

from __future__ import annotations

from roofline.tui.app import RooflineApp
from roofline.tui.inputs.form import ScenarioForm
from tests.gpu_fakes import NVIDIA_SMI_QUERY_ARGS, FakeGpuBox, recorded


async def _settle(app: RooflineApp, pilot) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause()


def _notes(app: RooflineApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_opens_on_the_detected_part_and_count(monkeypatch, tmp_path):
    box = FakeGpuBox(monkeypatch, tmp_path)
    box.tool("nvidia-smi", recorded("nvidia-smi-h100-sxm-x8.csv"), expect_args=NVIDIA_SMI_QUERY_ARGS)
    app = RooflineApp(ScenarioForm(), detect_hardware=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(app, pilot)
        assert (app.explorer.form.hardware_id, app.explorer.form.tp) == ("h100-sxm", 8)
        assert app.explorer.results.scenario.parallelism.tp == 8
        assert any("detected 8 x NVIDIA H100 80GB HBM3" in n and "TP 8" in n for n in _notes(app))


async def test_a_tp_the_model_cannot_split_falls_back_to_one_device(monkeypatch, tmp_path):
    box = FakeGpuBox(monkeypatch, tmp_path)
    box.tool("nvidia-smi", "0, NVIDIA GeForce RTX 4090, 24564\n1, NVIDIA GeForce RTX 4090, 24564\n"
             "2, NVIDIA GeForce RTX 4090, 24564\n", expect_args=NVIDIA_SMI_QUERY_ARGS)
    app = RooflineApp(ScenarioForm(), detect_hardware=True)  # Llama-3.1-8B: 32 heads do not split 3 ways
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(app, pilot)
        assert (app.explorer.form.hardware_id, app.explorer.form.tp) == ("rtx-4090", 1)
        assert any("so TP 1" in n for n in _notes(app))


async def test_nothing_found_keeps_the_default_quietly(monkeypatch, tmp_path):
    FakeGpuBox(monkeypatch, tmp_path)  # no tools at all
    app = RooflineApp(ScenarioForm(), detect_hardware=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(app, pilot)
        assert app.explorer.form == ScenarioForm()
        assert not _notes(app)


async def test_an_unknown_part_is_reported_not_guessed(monkeypatch, tmp_path):
    box = FakeGpuBox(monkeypatch, tmp_path)
    box.tool("nvidia-smi", "0, NVIDIA Quantum Widget 9000, 65536\n", expect_args=NVIDIA_SMI_QUERY_ARGS)
    app = RooflineApp(ScenarioForm(), detect_hardware=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(app, pilot)
        assert app.explorer.form.hardware_id == ScenarioForm().hardware_id
        assert any("no preset" in n and "Quantum Widget" in n for n in _notes(app))


async def test_without_the_flag_nothing_is_probed(monkeypatch, tmp_path):
    box = FakeGpuBox(monkeypatch, tmp_path)
    box.tool("nvidia-smi", recorded("nvidia-smi-h100-sxm-x8.csv"), expect_args=NVIDIA_SMI_QUERY_ARGS)
    app = RooflineApp(ScenarioForm(hardware_id="mi300x"))
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(app, pilot)
        assert app.explorer.form.hardware_id == "mi300x"


def test_cli_probes_only_without_hardware_or_scenario(monkeypatch):
    import roofline.tui.app as app_module
    from roofline.tui.cli.main import main

    calls = []
    monkeypatch.setattr(app_module, "run_explorer", lambda form, **kw: calls.append(kw["detect_hardware"]) or 0)
    main([])
    main(["--hardware", "h200"])
    assert calls == [True, False]
