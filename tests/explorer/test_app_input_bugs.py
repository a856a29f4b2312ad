"""Explorer inputs that crash or freeze it (found by fuzzing tests/test_fuzz_app.py): each test says what
should happen (each was a crash or a freeze once; they are regression tests now) (1e-320 in an override used to
kill the explorer: `round(width * used / cap)` with a subnormal capacity)."""

from __future__ import annotations

import math

import pytest
from textual.widgets import Input

from roofline.presets import load_catalog
from roofline.tui.app import RooflineApp
from roofline.tui.inputs.form import ScenarioForm
from tests.explorer.test_fuzz_app import _headline_numbers


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    return load_catalog(user_dir=tmp_path_factory.mktemp("no-user-presets"))


# ---- numbers typed into the hardware override fields (found while fuzzing by hand) -------------
BUG_OVERRIDE_OVERFLOW = (
    "BUG: an override that is finite as typed (1e308) becomes inf once converted to SI (x 1024**3, x 1e9, x 1e12); "
    "recompute() catches only FormError/ModelInputError, so the OverflowError/ValueError from the model or the "
    "charts kills the explorer instead of marking the field invalid")


@pytest.mark.parametrize("field", [
    "capacity_override_gib",
    "mem_bw_override_gb_per_s",
    "peak_override_tflops",
])
async def test_a_huge_override_is_refused_not_fatal(catalog, field):
    app = RooflineApp(ScenarioForm(), catalog=catalog)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        good = _headline_numbers(app)
        widget = app.query_one(f"#{field}", Input)
        widget.value = "1e308"  # at once: typed key by key, the valid prefixes "1" and "1e3" would apply
        await pilot.pause()
        assert app.is_running and app.return_code is None
        numbers = _headline_numbers(app)
        assert all(math.isfinite(v) for v in numbers.values()), numbers
        if widget.has_class("-invalid"):
            assert numbers == good  # the last good scenario stays
    assert app.return_code in (None, 0)


@pytest.mark.parametrize("text", ["nan", "inf", "-1", "0", "abc", "1,5",
                                  "1e-320"])
async def test_odd_override_text_is_refused_or_finite(catalog, text):
    """Non-numbers, non-finite and non-positive overrides are marked invalid; the numbers stay finite."""
    app = RooflineApp(ScenarioForm(), catalog=catalog)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        for field in ("capacity_override_gib", "mem_bw_override_gb_per_s", "peak_override_tflops"):
            widget = app.query_one(f"#{field}", Input)
            widget.value = text
            await pilot.pause()
            assert app.is_running
            numbers = _headline_numbers(app)
            assert all(math.isfinite(v) and v >= 0 for v in numbers.values()), (field, text, numbers)
            widget.value = ""
            await pilot.pause()
    assert app.return_code in (None, 0)


# A watchdog, not a speed budget: an honest run takes a few seconds even on a busy 2-core machine; the freezes these
# tests guard against ran for minutes. The scripts also print what the explorer did, which the tests check.
WATCHDOG_S = 300


HANG_SCRIPT = """
import asyncio
from textual.widgets import Input
from roofline.tui.app import RooflineApp

async def main():
    app = RooflineApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.query_one("#output_tokens", Input).value = "100000000"
        await pilot.pause()
        print("responsive", app.explorer.form.output_tokens)

asyncio.run(main())
"""


@pytest.mark.slow
def test_a_huge_output_count_does_not_freeze_the_explorer(tmp_path):
    """Was a freeze: output_tokens had no upper limit in the explorer (compute_results ran for minutes)."""
    import subprocess
    import sys

    env = {**__import__("os").environ, "ROOFLINE_PRESETS": str(tmp_path / "none")}
    try:
        done = subprocess.run([sys.executable, "-c", HANG_SCRIPT], capture_output=True, text=True, timeout=WATCHDOG_S,
                              cwd=tmp_path, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the explorer did not answer within {WATCHDOG_S} s after output_tokens = 100000000")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "responsive 256" in done.stdout  # refused by the field's range: the last good output count stays


FREEZE_SCRIPT = """
import asyncio
from textual.widgets import Input
from roofline.tui.app import RooflineApp

async def main():
    app = RooflineApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.query_one("#tp", Input).focus()
        await pilot.press(*("1" * 30), "g")
        print("responsive", app.query_one("#tp", Input).value)

asyncio.run(main())
"""


@pytest.mark.slow
def test_a_long_run_of_digits_then_a_letter_does_not_freeze_the_explorer(tmp_path):
    """Was a freeze: Textual 8's integer pattern [-+]?(?:\\d*|\\d+_)* backtracks exponentially; the fields need
    a max_length (30 digits then a letter took minutes)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "ROOFLINE_PRESETS": str(tmp_path / "none")}
    try:
        done = subprocess.run([sys.executable, "-c", FREEZE_SCRIPT], capture_output=True, text=True, timeout=WATCHDOG_S,
                              cwd=tmp_path, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the explorer did not answer within {WATCHDOG_S} s after 30 digits and a letter in the tp field")
    assert done.returncode == 0, done.stderr[-2000:]
