"""Regenerate the README screenshots: drive the explorer headless and save SVGs of the main views.

Run: .venv/bin/python screenshots/make_screenshots.py
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from roofline.tui.app import RooflineApp
from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.views.registry import VIEWS

HERE = Path(__file__).resolve().parent
SIZE = (140, 44)
# one shot per view of the registry (tui/views/registry.py): (file name, the keys pressed first, the scenario)
SHOT_OF_VIEW = {
    "roofline": ("roofline", "", ScenarioForm(batch=8)),
    "batch": ("batch-sweep", "a", ScenarioForm(batch=8)),  # achievable ceilings: expected with its band
    "context": ("context-sweep", "", ScenarioForm(batch=8)),
    "memory": ("memory", "", ScenarioForm(hardware_id="h100-sxm", model_ref="llama-3.1-70b", tp=2, batch=32)),
    "ops": ("ops", "", ScenarioForm(batch=8)),
    "compare": ("compare", "", ScenarioForm(model_ref="llama-3.1-70b", tp=2, batch=16, price_per_device_hour=2.5)),
    "history": ("history", "", ScenarioForm(hardware_id="h200")),
    "serving": ("serving", "", ScenarioForm(model_ref="llama-3.1-70b", tp=4, serving=True, concurrency=32,
                                            prompt_tokens=2048, output_tokens=300)),
}
SHOTS = [(name, before + view.key, form) for view in VIEWS for name, before, form in [SHOT_OF_VIEW[view.id]]]
TALK_SIZE = (100, 30)  # a projector-friendly size
TALK_SLIDE = 6  # "What batching does not buy": big numbers and a chart


async def shoot(name: str, key: str, form: ScenarioForm) -> Path:
    app = RooflineApp(form)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*key)  # each character one key: "a2" = ceilings, then view 2
        await pilot.pause()
        if name == "ops":
            await pilot.click("#ops-table")
            for _ in range(16):
                await pilot.press("down")
        await pilot.pause()
        path = HERE / f"{name}.svg"
        app.save_screenshot(filename=path.name, path=str(HERE))
    return path


async def talk_shots() -> list[Path]:
    """The audience's slide and the presenter's screen, as the two terminals show them."""
    from roofline.presets import load_catalog
    from roofline.presets.deck_file import builtin_deck_path, read_deck
    from roofline.tui.inputs.registry import FILE_KEY_TYPES
    from roofline.tui.talk.deck import check_deck
    from roofline.tui.talk.presenter import PresenterApp

    catalog = load_catalog()
    deck = read_deck(builtin_deck_path(), keys=FILE_KEY_TYPES)
    app = RooflineApp(catalog=catalog, deck=deck)
    check_deck(deck, catalog)
    async with app.run_test(size=TALK_SIZE) as pilot:
        await pilot.pause()
        await pilot.press(*str(TALK_SLIDE), "enter")
        await pilot.pause()
        app.save_screenshot(filename="talk-slide.svg", path=str(HERE))
    presenter = PresenterApp(deck)
    async with presenter.run_test(size=TALK_SIZE) as pilot:
        await pilot.pause()
        await pilot.press(*str(TALK_SLIDE), "enter")
        await pilot.pause()
        presenter.save_screenshot(filename="talk-presenter.svg", path=str(HERE))
    return [HERE / "talk-slide.svg", HERE / "talk-presenter.svg"]


async def main() -> None:
    for name, key, form in SHOTS:
        print(await shoot(name, key, form))
    for path in await talk_shots():
        print(path)


if __name__ == "__main__":
    asyncio.run(main())
