"""Regenerate the README screenshots: drive the explorer headless and save SVGs of the main views.

Run: .venv/bin/python screenshots/make_screenshots.py
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from roofline.tui.app import RooflineApp
from roofline.tui.inputs.form import ScenarioForm

HERE = Path(__file__).resolve().parent
SIZE = (140, 44)
SHOTS = [
    ("roofline", "1", ScenarioForm(batch=8)),
    ("batch-sweep", "2", ScenarioForm(batch=8)),
    ("context-sweep", "3", ScenarioForm(batch=8)),
    ("memory", "4", ScenarioForm(hardware_id="h100-sxm", model_ref="llama-3.1-70b", tp=2, batch=32)),
    ("ops", "5", ScenarioForm(batch=8)),
    ("compare", "6", ScenarioForm(model_ref="llama-3.1-70b", tp=2, batch=16, price_per_device_hour=2.5)),
    ("history", "7", ScenarioForm(hardware_id="h200")),
]


async def shoot(name: str, key: str, form: ScenarioForm) -> Path:
    app = RooflineApp(form)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(key)
        await pilot.pause()
        if name == "ops":
            await pilot.click("#ops-table")
            for _ in range(16):
                await pilot.press("down")
        await pilot.pause()
        path = HERE / f"{name}.svg"
        app.save_screenshot(filename=path.name, path=str(HERE))
    return path


async def main() -> None:
    for name, key, form in SHOTS:
        print(await shoot(name, key, form))


if __name__ == "__main__":
    asyncio.run(main())
