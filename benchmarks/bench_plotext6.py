"""The explorer's four charts built with plotext 5.3 (today's path) and with plotext 6.x's public API, side by side.

Run: .venv/bin/python benchmarks/bench_plotext6.py [--p6 /tmp/p6/bin/python] [--rounds 3] [--size 160x50]

plotext 6 is not installable next to textual-plotext (which holds plotext below 6), so it lives in its own venv:

    python3 -m venv /tmp/p6 && /tmp/p6/bin/pip install "plotext==6.*" numpy rich

What is built: the roofline, batch sweep, context sweep and memory charts of bench_keystroke's scenario
(Llama-3.1-70B on 4 x H100 SXM, 4096 in / 1024 out) at the twelve batches a `+`/`-` cycle visits (16 ... 1024 ... 16),
each at 160x50 cells, once per key as the explorer does. This checkout's code draws each chart (charts.py's
``draw``) on a recording stand-in for plotext 5's figure; the recorded calls (plot, scatter, vline, text, bar,
limits, ticks, labels, title) are the figure's definition. Three ways of building it then take turns (A, B, C, A,
B, C, ...), each in its own process:

- ``5.x fast``: the explorer's path with the speed-ups on: a fresh monitor, the chart's ``draw``, plotext 5's
  private build steps and the changed rows turned into Rich segments (tui/perf/plotext_rows.fast_rows).
- ``5.x public``: ``ROOFLINE_SPEEDUPS=0``: ``clear_figure``, ``draw``, ``build()`` and Rich's ANSI decoding
  (public_rows).
- ``6.x public``: the recorded calls replayed on plotext 6's API (``plt.figure``: ``signal`` + ``draw``,
  ``line``, ``text``, ``bar``, ``ruler().lim/ticks``, ``label``, ``title``, ``plot_size``, ``theme``), then
  ``build().string()`` decoded by Rich into the same rows of segments. Also timed: only the rows whose ANSI text
  changed since the last build decoded (what the 5.x fast path does with cells), and plotext 6 alone (to its text).

Reported: the median build per chart and over all charts, the spread of the rounds' medians, and the ratio to
``5.x fast``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PYTHON = REPO / ".venv" / "bin" / "python"
VIEWS = ("roofline", "batch", "context", "memory")
BATCHES = [16, 32, 64, 128, 256, 512, 1024, 512, 256, 128, 64, 32]
THEME = "dark"  # a theme of both plotext 5 and 6


# ---- this checkout (plotext 5) ---------------------------------------------------------------------------------
def _plain(value):
    """Chart arguments as JSON values (numpy arrays and scalars to lists and floats)."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if hasattr(value, "tolist"):
        return value.tolist()
    return value


class _Recorder:
    """Stands in for a plotext 5 figure: records each call (name, args, kwargs) as JSON values."""

    def __init__(self) -> None:
        self.calls: list[list] = []

    def __getattr__(self, name: str):
        def call(*args, **kwargs):
            self.calls.append([name, _plain(args), _plain(kwargs)])

        return call


def _chart_inputs() -> dict[str, list[tuple]]:
    """Per view, the chart's ``draw`` arguments at each batch of the cycle (the explorer's own computation)."""
    from dataclasses import replace

    from roofline.presets import load_catalog
    from roofline.tui.inputs.form import ScenarioForm, build_scenario
    from roofline.tui.views.registry import BY_ID
    from roofline.tui.views.results import compute_results
    from roofline.tui.views.state import ExplorerState

    catalog = load_catalog()
    form = ScenarioForm(model_ref="llama-3.1-70b", tp=4, batch=16, prompt_tokens=4096, output_tokens=1024)
    inputs: dict[str, list[tuple]] = {view: [] for view in VIEWS}
    for batch in BATCHES:
        results = compute_results(build_scenario(replace(form, batch=batch), catalog))
        for view in VIEWS:
            inputs[view].append(BY_ID[view].data(ExplorerState(form=form, results=results, catalog=catalog)))
    return inputs


def _plots():
    """Per view, its plot function (tui/views/plots.py through the view registry): figure, size, data."""
    from roofline.tui.views.registry import BY_ID

    return {view: BY_ID[view].plot for view in VIEWS}


def record(width: int, height: int) -> dict[str, list[list]]:
    """Per view, per batch: the plotext calls the explorer's chart makes at this size."""
    plots, recorded = _plots(), {}
    for view, args_list in _chart_inputs().items():
        recorded[view] = []
        for args in args_list:
            recorder = _Recorder()
            plots[view](recorder, (width, height), *args)
            recorded[view].append(recorder.calls)
    return recorded


def build_5x(width: int, height: int) -> dict[str, list[float]]:
    """Seconds per build, per view, through this checkout's path (fast or public, as ROOFLINE_SPEEDUPS says)."""
    from rich.console import Console
    from textual_plotext.plot import Plot

    from roofline.tui.perf import switch

    switch.install_plotext_speedups()
    console = Console(width=width, color_system="truecolor", force_terminal=True)
    from types import SimpleNamespace

    # what plot_rows asks of the chart widget: textual-plotext's plotext theme name for the app's theme
    widget = SimpleNamespace(_get_plotext_theme_name=lambda _theme: THEME, app=SimpleNamespace(theme=None))
    plots, times = _plots(), {}
    for view, args_list in _chart_inputs().items():
        plt = Plot()
        previous, times[view] = None, []
        for args in args_list:
            start = time.perf_counter()
            switch.reset_plot(plt)
            plots[view](plt, (width, height), *args)
            previous = switch.plot_rows(plt, width, height, widget, previous, light=False, console=console,
                                        public=lambda plt=plt: _public_text(plt, width, height))
            times[view].append(time.perf_counter() - start)
            assert len(previous[1]) == height
    return times


def _public_text(plt, width: int, height: int):
    """What textual-plotext's PlotextPlot.render does with a figure (its size set, then build, decoded by Rich)."""
    from rich.text import Text

    plt.plotsize(width, height)
    plt._set_size(width, height)  # textual-plotext does this too (its issue #5): plotsize alone does not take
    plt.theme(THEME)
    return Text.from_ansi(plt.build())


# ---- plotext 6 (its own venv; nothing of this checkout is imported) ---------------------------------------------
def _marker6(plt, name: str | None, color: str | None):
    return plt.marker(name or "dot", plt.pixel(color)) if color else name


def replay_6x(figure, plt, calls: list[list]) -> None:
    """Draw a recorded plotext 5 figure with plotext 6's public API."""
    for name, args, kwargs in calls:
        side = 1 if kwargs.get("yside") == "right" else 0
        if name in ("plot", "scatter"):
            x, y = args
            signal = figure.signal(x, y, marker=_marker6(plt, kwargs.get("marker"), kwargs.get("color")),
                                   yside=side)
            if kwargs.get("label"):
                signal.label(kwargs["label"])
            if name == "plot":
                signal.lines(True)
            figure.draw(signal)
        elif name in ("vline", "hline"):
            figure.line(args[0], orientation="vertical" if name == "vline" else "horizontal",
                        pixel=plt.pixel(kwargs.get("color")))
        elif name == "text":
            label, x, y = args
            colored = plt.colorize(label, plt.pixel(kwargs["color"])) if kwargs.get("color") else label
            figure.draw(figure.text(x, y, colored, alignment=kwargs.get("alignment")))
        elif name == "bar":
            labels, values = args
            positions = list(range(1, len(values) + 1))
            figure.draw(figure.bar(positions, values, orientation=kwargs.get("orientation"), width=kwargs.get("width"),
                                   marker=_marker6(plt, "full", kwargs.get("color"))))
            figure.ruler("y").ticks(positions, labels)
        elif name in ("xlim", "ylim"):
            figure.ruler(name[0], side).lim(*args)
        elif name in ("xticks", "yticks"):
            figure.ruler(name[0], side).ticks(*args)
        elif name in ("xlabel", "ylabel"):
            figure.label(args[0], name[0], side)
        elif name == "title":
            figure.title(args[0])
        else:
            raise ValueError(f"no plotext 6 translation for {name!r}")


def _redraw_6x(figure, plt, calls: list[list], width: int, height: int) -> str:
    """One recorded chart drawn again from scratch on plotext 6's figure: its ANSI text."""
    figure.clear()
    figure.plot_size(width, height)
    figure.theme(THEME)
    replay_6x(figure, plt, calls)
    return figure.build().string()


def build_6x(recorded: dict[str, list[list]], width: int, height: int) -> dict[str, list[float]]:
    import plotext as plt
    from rich.console import Console
    from rich.text import Text

    console = Console(width=width, color_system="truecolor", force_terminal=True)
    plt.terminal.limit(False, False)  # plot_size is otherwise cut to the terminal's size (none here: 80x24)
    figure, times = plt.figure, {}
    for view, figures in recorded.items():
        times[view], times[f"{view} plotext only"] = [], []
        for calls in figures:
            start = time.perf_counter()
            ansi = _redraw_6x(figure, plt, calls, width, height)
            times[f"{view} plotext only"].append(time.perf_counter() - start)
            text = Text.from_ansi(ansi, no_wrap=True, overflow="crop")
            rows = [tuple(seg for seg in line.render(console) if seg.text and seg.text != "\n")
                    for line in text.split("\n", allow_blank=True)[:height]]
            times[view].append(time.perf_counter() - start)
            assert len(rows) == height, (view, len(rows))
        # the same, as the explorer's 5.x path does it: only the rows whose text changed are decoded again
        times[f"{view} changed rows"], lines, rows = [], [], []
        for calls in figures:
            start = time.perf_counter()
            new_lines = _redraw_6x(figure, plt, calls, width, height).split("\n")[:height]
            rows = [rows[y] if y < len(lines) and lines[y] == line else
                    tuple(seg for seg in Text.from_ansi(line, no_wrap=True, overflow="crop").render(console)
                          if seg.text and seg.text != "\n") for y, line in enumerate(new_lines)]
            lines = new_lines
            times[f"{view} changed rows"].append(time.perf_counter() - start)
    return times


# ---- side by side ----------------------------------------------------------------------------------------------
def _child(kind: str, width: int, height: int, recorded_path: Path | None) -> None:
    if kind == "6x":
        print(json.dumps(build_6x(json.loads(recorded_path.read_text()), width, height)))
    else:
        print(json.dumps(build_5x(width, height)))


def _run(kind: str, python: str, width: int, height: int, recorded_path: Path) -> dict[str, list[float]]:
    env = dict(os.environ)
    env.pop("ROOFLINE_SPEEDUPS", None)
    if kind == "5x-public":
        env["ROOFLINE_SPEEDUPS"] = "0"
    done = subprocess.run([python, str(Path(__file__).resolve()), "--child", kind, "--size", f"{width}x{height}",
                           "--recorded", str(recorded_path)], env=env, cwd=REPO, capture_output=True, text=True,
                          check=False)
    if done.returncode:
        raise RuntimeError(f"{kind} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--p6", default="/tmp/p6/bin/python", help="a Python with plotext 6, numpy and rich")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--size", default="160x50")
    parser.add_argument("--save-6x", type=Path, help="write one plotext 6 figure per chart here (ANSI text)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--recorded", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.size.split("x"))
    if args.child:
        _child(args.child, width, height, args.recorded)
        return
    recorded_path = Path(tempfile.mkstemp(suffix=".json", prefix="plotext-calls-")[1])
    recorded_path.write_text(json.dumps(record(width, height)))
    kinds = {"5.x fast": ("5x-fast", str(PYTHON)), "5.x public": ("5x-public", str(PYTHON)),
             "6.x public": ("6x", args.p6)}
    runs: dict[str, list[dict[str, list[float]]]] = {name: [] for name in kinds}
    for _ in range(args.rounds):
        for name, (kind, python) in kinds.items():
            runs[name].append(_run(kind, python, width, height, recorded_path))
            print(f"{name}: {statistics.median([t for v in VIEWS for t in runs[name][-1][v]]) * 1e3:.1f} ms",
                  file=sys.stderr, flush=True)
    base = None
    print(f"| path | all charts: median ms (round medians) | {' | '.join(VIEWS)} | x 5.x fast |")
    print("| --- | --- | " + " | ".join("---" for _ in VIEWS) + " | --- |")
    for name, per_round in runs.items():
        every = [t * 1e3 for r in per_round for v in VIEWS for t in r[v]]
        rounds = ", ".join(f"{statistics.median([t * 1e3 for v in VIEWS for t in r[v]]):.1f}" for r in per_round)
        views = " | ".join(f"{statistics.median([t * 1e3 for r in per_round for t in r[v]]):.1f}" for v in VIEWS)
        median = statistics.median(every)
        base = base or median
        print(f"| {name} | {median:.1f} ({rounds}) | {views} | {median / base:.2f} |")
        for part, what in (("changed rows", "only changed rows decoded"), ("plotext only", "to ANSI text only")):
            if f"{VIEWS[0]} {part}" not in per_round[0]:  # 6.x: without Rich's decoding of unchanged rows / at all
                continue
            only = [t * 1e3 for r in per_round for v in VIEWS for t in r[f"{v} {part}"]]
            views = " | ".join(f"{statistics.median([t * 1e3 for r in per_round for t in r[f'{v} {part}']]):.1f}"
                               for v in VIEWS)
            print(f"| {name}, {what} | {statistics.median(only):.1f} | {views} | "
                  f"{statistics.median(only) / base:.2f} |")
    recorded_path.unlink()


if __name__ == "__main__":
    main()
