"""Keystroke to settled screen in the explorer at 160x50, driven by Pilot: median and p95.

Run: .venv/bin/python benchmarks/bench_keystroke.py [--presses 60]

For each view (1 roofline, 2 batch, 3 context, 4 memory, 5 ops) the scenario is Llama-3.1-70B
on 4 x H100 SXM, 4096 in / 1024 out, and ``--presses`` keys are sent through Pilot: `+` six
times, then `-` six times, over and over (batch 16 -> 1024 -> 16), so that the charts move.

One keystroke is timed from the moment its key event is posted to the end of the screen update
that shows it: the handler (form -> scenario -> model -> sweeps -> widget updates), Textual's
layout and compositing of the changed regions, and the conversion of that update into the
terminal byte stream (``render_segments``, what the driver writes; the write itself is not
timed). Textual paints on a 60 Hz timer, so a keystroke also waits for the next frame tick
(0-16.7 ms, 8.3 ms on average): that wait is inside the figure and reported separately as
"frame wait" (time from the end of the key's handling to the start of the paint). A key's
time ends with the first paint after its handling (the one that shows it).

Target: under 16 ms median at 160x50.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from textual import events
from textual._compositor import Compositor

from roofline.tui.app import RooflineApp
from roofline.tui.inputs.form import ScenarioForm

VIEWS = {"1": "roofline", "2": "batch", "3": "context", "4": "memory", "5": "ops"}
PATTERN = ["plus"] * 6 + ["minus"] * 6
TARGET_MS = 16.0
SIZE = (160, 50)
KEY_TIMEOUT_S = 5.0


class _PaintClock:
    """Wraps the compositor's update so each paint is timed and turned into terminal output."""

    def __init__(self, app: RooflineApp) -> None:
        self.app = app
        self.paints: list[tuple[float, float]] = []  # (start, end) of each paint
        self._original = Compositor.render_update

    def __enter__(self) -> _PaintClock:
        clock, original = self, self._original

        def timed(compositor, *args, **kwargs):
            start = time.perf_counter()
            update = original(compositor, *args, **kwargs)
            if update is not None:
                "".join(update.render_segments(clock.app.console))
                clock.paints.append((start, time.perf_counter()))
            return update

        Compositor.render_update = timed
        return self

    def __exit__(self, *exc) -> None:
        Compositor.render_update = self._original


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def measure(presses: int) -> dict[str, dict[str, list[float]]]:
    """Per view: {"total", "handler", "frame_wait", "paint": [seconds per key]}."""
    app = RooflineApp(ScenarioForm(model_ref="llama-3.1-70b", tp=4, batch=16, prompt_tokens=4096,
                                   output_tokens=1024))
    handled: list[float] = []
    original_recompute = app.explorer.recompute

    def recompute() -> None:
        original_recompute()
        handled.append(time.perf_counter())

    app.explorer.recompute = recompute
    presses = -(-presses // len(PATTERN)) * len(PATTERN)  # whole up-and-down cycles: each view starts at batch 16
    results: dict[str, dict[str, list[float]]] = {}
    async with app.run_test(size=SIZE) as pilot:
        with _PaintClock(app) as clock:
            for key, view in VIEWS.items():
                await pilot.press(key)
                await pilot.pause(0.2)
                samples: dict[str, list[float]] = {"total": [], "handler": [], "frame_wait": [], "paint": []}
                for i in range(presses):
                    name = PATTERN[i % len(PATTERN)]
                    clock.paints.clear()
                    handled.clear()
                    start = time.perf_counter()
                    app.post_message(events.Key(name, "+" if name == "plus" else "-"))
                    deadline = start + KEY_TIMEOUT_S
                    while not (handled and clock.paints and clock.paints[-1][0] > handled[-1]):
                        if time.perf_counter() > deadline:
                            raise TimeoutError(f"view {view}: key {i} ({name}) was not painted within "
                                               f"{KEY_TIMEOUT_S} s")
                        await asyncio.sleep(0.0005)
                    paint_start, paint_end = next((s, e) for s, e in clock.paints if s > handled[-1])
                    samples["total"].append(paint_end - start)
                    samples["handler"].append(handled[-1] - start)
                    samples["frame_wait"].append(paint_start - handled[-1])
                    samples["paint"].append(paint_end - paint_start)
                    await pilot.pause()  # settle (and let unrelated paints go) before the next key
                results[view] = samples
    return results


def main(argv: list[str] | None = None) -> list[dict]:
    """Rows in run_all's format: per view and over all views, median and p95 keystroke -> settled screen."""
    from run_all import row

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=60, help="keystrokes per view (default 60)")
    args = parser.parse_args(argv)
    results = asyncio.run(measure(args.presses))
    rows = []
    everything = {"total": [], "handler": [], "frame_wait": [], "paint": []}
    for view, samples in results.items():
        for kind, values in samples.items():
            everything[kind] += values
        median = statistics.median(samples["total"]) * 1e3
        rows.append(row("keystroke", f"view {view}: key -> settled screen (median)", median, "ms",
                        f"< {TARGET_MS:g}", median < TARGET_MS))
        rows.append(row("keystroke", f"view {view}: key -> settled screen (p95)",
                        _percentile(samples["total"], 0.95) * 1e3, "ms"))
    median = statistics.median(everything["total"]) * 1e3
    rows.append(row("keystroke", f"all views ({len(everything['total'])} keys): key -> settled screen (median)",
                    median, "ms", f"< {TARGET_MS:g}", median < TARGET_MS))
    rows.append(row("keystroke", "all views: key -> settled screen (p95)",
                    _percentile(everything["total"], 0.95) * 1e3, "ms"))
    rows.append(row("keystroke", "all views: of which key handling, model and widget updates (median)",
                    statistics.median(everything["handler"]) * 1e3, "ms"))
    rows.append(row("keystroke", "all views: of which waiting for Textual's 60 Hz frame tick (median)",
                    statistics.median(everything["frame_wait"]) * 1e3, "ms"))
    rows.append(row("keystroke", "all views: of which compositing the update into terminal output (median)",
                    statistics.median(everything["paint"]) * 1e3, "ms"))
    return rows


if __name__ == "__main__":
    from run_all import print_table

    print_table(main())
