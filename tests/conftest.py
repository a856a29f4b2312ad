"""Shared fixtures: presets loaded once per session (they are immutable)."""

from __future__ import annotations

import functools

import pytest

from roofline.models.scenario import Batching, Parallelism, Precisions, Scenario
from roofline.presets import load_hardware, load_model


@functools.cache
def hardware(hw_id: str):
    return load_hardware(hw_id)


@functools.cache
def model(model_id: str):
    return load_model(model_id)


def scenario(hw_id: str, model_id: str, *, batch: int = 1, prompt: int = 1024, output: int = 256, tp: int = 1,
             pp: int = 1, weights: str = "bf16", activations: str = "bf16", kv: str = "bf16",
             flash: bool = True) -> Scenario:
    return Scenario(
        hardware=hardware(hw_id),
        model=model(model_id),
        precisions=Precisions(weights=weights, activations=activations, kv=kv),
        batching=Batching(batch_size=batch, prompt_tokens=prompt, output_tokens=output, flash_attention=flash),
        parallelism=Parallelism(tp=tp, pp=pp),
    )


@pytest.fixture(autouse=True)
def _no_gpu_probing(monkeypatch, tmp_path_factory):
    """The explorer probes for local GPUs at start-up; tests opt back in (tests/gpu_fakes.py clears this). The
    user's preferences file is never read or written by a test."""
    monkeypatch.setenv("ROOFLINE_NO_DETECT", "1")
    monkeypatch.setenv("ROOFLINE_PREFERENCES", str(tmp_path_factory.mktemp("prefs") / "preferences.toml"))


@pytest.fixture
def make_scenario():
    return scenario


def run_cli(argv, capsys):
    """Run ``roofline argv`` in-process: (exit status, stdout, stderr); argparse's SystemExit is caught."""
    from roofline.tui.cli.main import main

    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


def pytest_collection_modifyitems(config, items):
    """Pilot tests (async, driving the app), snapshot tests and tests that start subprocesses are slow: they carry
    the ``slow`` marker so that ``pytest -m "not slow"`` is a quick edit loop. Tests may also mark themselves."""
    import inspect

    for item in items:
        function = getattr(item, "function", None)
        uses = set(getattr(item, "fixturenames", ()))
        if (function is not None and inspect.iscoroutinefunction(function)) or "snap_compare" in uses:
            item.add_marker(pytest.mark.slow)
