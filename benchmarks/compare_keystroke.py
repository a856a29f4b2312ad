"""Keystroke latency of several variants of the explorer, side by side in one run (issue 17).

Run: .venv/bin/python benchmarks/compare_keystroke.py [--rounds 3] [--presses 24] [--old /tmp/old39]
     [--variants new old off no-plain-box no-priority no-pacing freeze freeze+pacing]

Each variant runs bench_keystroke.measure() (Pilot at 160x50, `+`/`-` on five views, key to painted update) in
its own process. The variants take turns: round 1 runs A, B, C, ..., round 2 the same again, so that every variant
sees the same hours of a machine whose speed drifts (this one is shared by other agents). Reported per variant:
the median key over all its keys, the median of each round's median and their spread (min-max), the p95, and the
ratio of its median to the first variant's. ``--clock cpu`` times the same span in the main thread's CPU time
(time.thread_time), which other processes on a shared machine hardly disturb: the work per key, without the
wait for Textual's frame tick.

Variants (each is the current code with one thing changed, by monkeypatching in the child process; nothing in
tui/ is edited for it):

- ``new``: the code as it is, speed-ups on.
- ``off``: ``ROOFLINE_SPEEDUPS=0`` (Textual's and plotext's public paths).
- ``old``: the commit given by ``--old`` (a ``git worktree`` of the code before the restructuring, with its own
  benchmarks/bench_keystroke.py), imported in place of this checkout as ``roofline.*``. ``--new`` does the same
  for the other variants (a worktree of a commit, so that edits in progress in the checkout stay out).
- ``no-plain-box``: the styles-cache bypass off (``tui/perf/plain_box._ENABLED = False``): every widget's rows go
  through Textual's styles cache.
- ``no-priority``: the batch and prompt keys are ordinary bindings of the explorer's screen (they go down to the
  focused widget and bubble back up) instead of priority bindings.
- ``no-pacing``: garbage collection is left alone (no ``gc_pacing``).
- ``freeze``: no ``gc_pacing``; ``gc.freeze()`` once the first frame is up (every object alive then, Textual's
  and the app's, leaves the collector's generations, so later collections walk only new objects).
- ``freeze+pacing``: both.
- ``fixed-header``: the header's sub-title (the scenario summary, view_drawing.redraw) stays as it was first set.
  ``Screen.sub_title`` is a reactive that repaints the whole screen, and the header re-lays itself out, on every
  change: the summary names the batch, so each key became a full-screen paint.
- ``header-no-repaint``: the proposed fix: the explorer screen's ``sub_title`` is a reactive that does not repaint
  the screen (``Reactive(None, compute=False, repaint=False)``); the Header, which watches it, still shows each
  new summary.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PYTHON = REPO / ".venv" / "bin" / "python"
VARIANTS = ("new", "old", "off", "no-plain-box", "no-priority", "no-pacing", "freeze", "freeze+pacing",
            "fixed-header")
# one change each; a variant may join several with "+" (fixed-header+no-plain-box); "freeze" alone also turns
# gc_pacing off, "freeze+pacing" keeps it
PATCHES = ("fixed-header", "header-no-repaint", "no-plain-box", "no-priority", "no-pacing", "freeze", "pacing")


def _old_package(worktree: Path) -> Path:
    """A folder holding ``roofline/`` whose models, presets and tui are the worktree's (symlinks)."""
    root = Path(tempfile.gettempdir()) / f"roofline-old-{worktree.name}"
    package = root / "roofline"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").touch()
    for name in ("models", "presets", "tui"):
        link = package / name
        if not link.exists():
            link.symlink_to(worktree / name)
    return root


def _variant(text: str) -> str:
    parts = text.split("+")
    if text not in ("old", "off", "new") and not all(part in PATCHES for part in parts):
        raise argparse.ArgumentTypeError(f"{text!r}: old, off, new, or patches {PATCHES} joined by '+'")
    return text


def _patch(variant: str) -> None:
    """Apply the variant's changes to the imported explorer (child process, before the app is built)."""
    import gc

    parts = set(variant.split("+"))

    if "no-plain-box" in parts:  # measured before the bypass was removed (issue 17): a no-op on this code
        try:
            from roofline.tui.perf import plain_box
        except ImportError:
            print("no-plain-box: no styles-cache bypass in this code (removed after the measurement)", file=sys.stderr)
        else:
            plain_box._ENABLED = False
    if "no-priority" in parts:
        from dataclasses import replace

        from textual.binding import Binding

        from roofline.tui.explorer.screen import ExplorerScreen

        ExplorerScreen.BINDINGS = [replace(b, priority=False) if isinstance(b, Binding) else b
                                   for b in ExplorerScreen.BINDINGS]
        ExplorerScreen._merged_bindings = ExplorerScreen._merge_bindings()
    if "no-pacing" in parts or ("freeze" in parts and "pacing" not in parts):
        from roofline.tui.perf import switch

        switch.start_collection_pacing = lambda app, screen: None
    if "header-no-repaint" in parts:  # the proposed fix: the sub-title still changes, the Header still shows it
        from textual.reactive import Reactive

        from roofline.tui.explorer.screen import ExplorerScreen

        quiet = Reactive(None, compute=False, repaint=False)
        quiet.__set_name__(ExplorerScreen, "sub_title")
        ExplorerScreen.sub_title = quiet
        ExplorerScreen._reactives = {**ExplorerScreen._reactives, "sub_title": quiet}
    if "fixed-header" in parts:
        from roofline.tui.explorer import view_drawing

        view_drawing.scenario_summary = lambda *args, **kwargs: "roofline explorer"
    if "freeze" in parts:
        from roofline.tui.app import RooflineApp

        mounted = RooflineApp.on_mount

        def on_mount(self) -> None:
            mounted(self)
            self.call_after_refresh(gc.freeze)  # once the first frame is up

        RooflineApp.on_mount = on_mount


def child(variant: str, presses: int, bench_dir: Path, clock: str = "wall") -> None:
    sys.path.insert(0, str(bench_dir))
    if variant not in ("old", "off"):
        _patch(variant)
    import asyncio
    import time
    from types import SimpleNamespace

    import bench_keystroke

    if clock == "cpu":  # the benchmark's clock only: CPU time of the main thread, not what others' processes take
        bench_keystroke.time = SimpleNamespace(perf_counter=time.thread_time)

    results = asyncio.run(bench_keystroke.measure(presses))
    if "no-priority" in variant.split("+"):  # check that the change took: the keys must not be priority bindings now
        from roofline.tui.explorer.screen import ExplorerScreen

        assert not any(b.priority for bs in ExplorerScreen._merged_bindings.key_to_bindings.values() for b in bs)
    print(json.dumps({view: samples["total"] for view, samples in results.items()}))


def run_variant(variant: str, presses: int, old: Path | None, new: Path | None = None, clock: str = "wall"
                ) -> dict[str, list[float]]:
    env = dict(os.environ)
    bench_dir = HERE
    cwd = REPO
    if variant == "off":
        env["ROOFLINE_SPEEDUPS"] = "0"
    else:
        env.pop("ROOFLINE_SPEEDUPS", None)
    if variant == "old":
        if old is None:
            raise SystemExit("--old WORKTREE is needed for the 'old' variant")
        env["PYTHONPATH"] = str(_old_package(old))
        bench_dir, cwd = old / "benchmarks", old
    elif new is not None:
        env["PYTHONPATH"] = str(_old_package(new))
        bench_dir, cwd = new / "benchmarks", new
    done = subprocess.run([str(PYTHON), str(Path(__file__).resolve()), "--child", variant, "--presses", str(presses),
                           "--bench-dir", str(bench_dir), "--clock", clock], env=env, cwd=cwd, capture_output=True,
                          text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"{variant} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def summarise(runs: dict[str, list[dict[str, list[float]]]]) -> list[dict]:
    rows = []
    base = None
    for variant, per_round in runs.items():
        keys = [t * 1e3 for result in per_round for samples in result.values() for t in samples]
        round_medians = [statistics.median([t * 1e3 for s in result.values() for t in s]) for result in per_round]
        per_view = {view: statistics.median([t * 1e3 for result in per_round for t in result[view]])
                    for view in per_round[0]}
        median = statistics.median(keys)
        base = base or median
        rows.append({"variant": variant, "keys": len(keys), "median_ms": median,
                     "round_medians_ms": round_medians, "p95_ms": _percentile(keys, 0.95),
                     "ratio": median / base, "per_view_ms": per_view})
    return rows


def format_rows(rows: list[dict]) -> str:
    lines = ["| variant | keys | median ms | round medians ms (spread) | p95 ms | x first | per view (roofline, batch, "
             "context, memory, ops) ms |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        rounds = ", ".join(f"{m:.1f}" for m in r["round_medians_ms"])
        spread = max(r["round_medians_ms"]) - min(r["round_medians_ms"])
        views = " / ".join(f"{v:.1f}" for v in r["per_view_ms"].values())
        lines.append(f"| {r['variant']} | {r['keys']} | {r['median_ms']:.1f} | {rounds} ({spread:.1f}) | "
                     f"{r['p95_ms']:.1f} | {r['ratio']:.2f} | {views} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--presses", type=int, default=24, help="keys per view per run (default 24)")
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), type=_variant)
    parser.add_argument("--old", type=Path, help="git worktree of the older commit (for the 'old' variant)")
    parser.add_argument("--new", type=Path, help="git worktree of the code to measure as 'new' and its variants "
                        "(default: this checkout; a worktree keeps other people's unfinished edits out)")
    parser.add_argument("--json", type=Path, help="write the raw per-key times here")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall: key to painted update as the user waits (default); cpu: the main thread's CPU "
                        "time over the same span (the work done, much less disturbed by other processes; the wait "
                        "for the frame tick is not in it)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--bench-dir", type=Path, default=HERE, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.presses, args.bench_dir, args.clock)
        return
    runs: dict[str, list[dict[str, list[float]]]] = {v: [] for v in args.variants}
    for round_number in range(args.rounds):
        for variant in args.variants:
            runs[variant].append(run_variant(variant, args.presses, args.old, args.new, args.clock))
            last = runs[variant][-1]
            print(f"round {round_number + 1} {variant}: "
                  f"{statistics.median([t * 1e3 for s in last.values() for t in s]):.1f} ms", file=sys.stderr,
                  flush=True)
        if args.json:
            args.json.write_text(json.dumps(runs))
    print(format_rows(summarise(runs)))


if __name__ == "__main__":
    main()
