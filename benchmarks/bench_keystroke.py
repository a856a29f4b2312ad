"""Keystroke to updated screen in the explorer at 160x50: model, charts and widgets included.

Run: .venv/bin/python benchmarks/bench_keystroke.py

For each view, applies the `+`/`-` key's action (batch x2, /2) 40 times and times, per press:
the handler (form change -> scenario -> model -> sweeps -> widget updates, all synchronous)
plus the render of every widget the change repaints (the visible chart's plotext build and
the headline Digits). What is left out is Textual's compositing and the write to the
terminal, which do not depend on this project's code. Target: under 16 ms median.
"""

from __future__ import annotations

import asyncio
import statistics
import time

from textual.widgets import DataTable, Digits

from roofline.tui.app import RooflineApp
from roofline.tui.charts import BatchSweepChart, ContextSweepChart, MemoryChart, RooflineChart
from roofline.tui.scenario_form import ScenarioForm

VIEWS = {"roofline": RooflineChart, "batch": BatchSweepChart, "context": ContextSweepChart, "memory": MemoryChart,
         "ops": DataTable}
PRESSES = 40


def _repaint(app: RooflineApp, widget_type, digits: list[Digits]) -> None:
    for number in digits:
        number.render()
    widget = app.query_one(widget_type) if widget_type is not DataTable else app.query_one("#ops-table", DataTable)
    if widget_type is DataTable:
        for y in range(min(widget.row_count, 40)):
            widget.render_line(y)
    else:
        widget.render()


async def measure() -> dict[str, list[float]]:
    results: dict[str, list[float]] = {}
    app = RooflineApp(ScenarioForm(model_ref="llama-3.1-70b", tp=4, batch=16, prompt_tokens=4096,
                                   output_tokens=1024))
    async with app.run_test(size=(160, 50)) as pilot:
        digits = list(app.query(Digits))  # looked up once: the lookup is not part of a keystroke
        for view, widget_type in VIEWS.items():
            app.action_show_view(view)
            await pilot.pause()
            samples = []
            for i in range(PRESSES):
                start = time.perf_counter()
                app.action_scale_batch(2 if i % 2 == 0 else 0.5)
                _repaint(app, widget_type, digits)
                samples.append(time.perf_counter() - start)
                await pilot.pause()
            results[view] = samples
    return results


def main(argv: list[str] | None = None) -> list[dict]:
    """Rows in run_all's format: per view, median (target: under 16 ms) and p90 of keystroke -> repainted."""
    import argparse

    from run_all import row

    global PRESSES
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=PRESSES, help=f"presses per view (default {PRESSES})")
    PRESSES = parser.parse_args(argv).presses
    rows = []
    for view, samples in asyncio.run(measure()).items():
        ordered = sorted(samples)
        median = statistics.median(samples) * 1e3
        rows.append(row("keystroke", f"view {view}: keystroke -> repainted widgets (median)", median, "ms", "< 16",
                        median < 16))
        rows.append(row("keystroke", f"view {view}: keystroke -> repainted widgets (p90)",
                        ordered[int(0.9 * len(ordered))] * 1e3, "ms"))
    return rows


if __name__ == "__main__":
    results = main()
    for median, p90 in zip(results[::2], results[1::2], strict=True):
        view = median["metric"].split(":")[0].removeprefix("view ")
        print(f"view {view:9} keystroke -> repainted: median {median['value']:5.1f} ms, p90 {p90['value']:5.1f} ms")
