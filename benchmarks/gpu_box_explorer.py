"""On a real GPU box: open the explorer as `roofline` would (detection on), then turn live counters on.

Writes a JSON summary (what the explorer switched to, what it said, the live points it placed) and two SVG
screenshots into the folder given as the first argument. Run it while a load runs on GPU 0 (see
gpu_box_check.sh) so the live point has something to show. Not a test: the answers depend on the box.

Usage: python benchmarks/gpu_box_explorer.py OUT_DIR [SECONDS_OF_LIVE]
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path


async def _explore(out: Path, live_s: float) -> dict:
    from textual.widgets import Static

    from roofline.tui.app import RooflineApp
    from roofline.tui.inputs.form import ScenarioForm

    os.environ.pop("ROOFLINE_NO_DETECT", None)
    app = RooflineApp(ScenarioForm(), detect_hardware=True)
    summary: dict = {}
    async with app.run_test(size=(160, 50)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        summary["hardware_id"] = app.explorer.form.hardware_id
        summary["tp"] = app.explorer.form.tp
        summary["notifications"] = [str(n.message) for n in app._notifications]
        app.save_screenshot(str(out / "explorer-detected.svg"))
        await pilot.press("l")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + live_s
        while loop.time() < deadline:
            await pilot.pause(0.25)
        trail = app.explorer.live_trail
        summary["live_status"] = str(app.query_one("#live-status", Static).render())
        summary["live_points"] = [
            {"achieved_bytes_per_s": p.achieved_bytes_per_s, "achieved_flops_per_s": p.achieved_flops_per_s,
             "arithmetic_intensity_flop_per_byte": p.arithmetic_intensity_flop_per_byte}
            for p in (trail.points if trail is not None else ())
        ]
        await pilot.pause(0.3)
        app.save_screenshot(str(out / "explorer-live.svg"))
        await pilot.press("l")
        await app.workers.wait_for_complete()
    return summary


def main(argv: list[str]) -> int:
    out = Path(argv[0] if argv else ".")
    out.mkdir(parents=True, exist_ok=True)
    live_s = float(argv[1]) if len(argv) > 1 else 6.0
    summary = asyncio.run(_explore(out, live_s))
    text = json.dumps(summary, indent=2, default=str)
    (out / "explorer.json").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
