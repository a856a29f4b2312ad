"""How long `roofline report` takes, and how much of it is the model.

Run: .venv/bin/python benchmarks/bench_report.py
Prints the median wall time of the CLI as a process (start-up included) for a 4096-token
generation, and the median time of the model alone (report dict, ops included); then the model at
G = 256, 4096 and 1M output tokens: the report, the two estimates' decode phase in closed form
(models/context_sums.py) and the same decode phase summed step by step (every context built and
timed, what estimate did before), each with its 1M / 256 ratio (budget: the report and the
closed-form decode at 1M cost at most 2x those at 256).

Before and after, side by side: .venv/bin/python benchmarks/bench_report.py --old /tmp/before-report
[--new /tmp/after-report] [--rounds 5] times `scenario_report` for the issue's scenario (A100 SXM4 80GB, Llama-2-7B,
batch 1, prompt 1024, output 16,384) under the default engine and under ``unknown`` (the widest band) in the
worktree ``--old`` and in ``--new`` (default: this checkout), each a `git worktree` of a commit imported as
``roofline.*`` through a folder of symlinks, one process each, in turns, each round the median of 50 calls.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

ARGS = ["report", "--hardware", "h100-sxm", "--model", "llama-3.1-70b", "--tp", "4", "--batch", "32",
        "--prompt", "2048", "--output", "4096", "--format", "json"]


def cli_seconds(runs: int = 7) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "roofline.tui.cli", *ARGS], check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return times


def import_seconds(runs: int = 7) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import roofline.tui.cli.main, roofline.models.report, roofline.presets"],
                       check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return times


def _scenario(output_tokens: int = 4096):
    from roofline.models.scenario import Batching, Parallelism, Scenario
    from roofline.presets import load_hardware, load_model

    return Scenario(hardware=load_hardware("h100-sxm"), model=load_model("llama-3.1-70b"),
                    batching=Batching(batch_size=32, prompt_tokens=2048, output_tokens=output_tokens),
                    parallelism=Parallelism(tp=4))


def _median_ms(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def closed_form_decode(scenario) -> list[float]:
    """Both estimates' decode phase time in closed form: the decode ops built once at the sample contexts, summed
    over the contexts by :func:`context_sums` (what ``estimate`` does)."""
    from roofline.models.context_sums import context_pieces, context_sums, sample_contexts
    from roofline.models.estimate import ceilings
    from roofline.models.ops import build_ops

    pieces = context_pieces(scenario)
    ops = build_ops(scenario, "decode", batch=scenario.batching.batch_size, context=sample_contexts(pieces))
    return [context_sums(ops, ceilings(scenario.hardware, scenario.precisions.compute_dtype, name), pieces).total.time_s
            for name in ("bound", "expected")]


def step_by_step_decode(scenario) -> list[float]:
    """Both estimates' decode phase time with the decode ops built once at every context (vectorised), timed, summed."""
    import numpy as np

    from roofline.models.estimate import ceilings, pass_totals
    from roofline.models.inference import decode_contexts
    from roofline.models.ops import build_ops

    contexts = decode_contexts(scenario)
    ops = build_ops(scenario, "decode", batch=scenario.batching.batch_size, context=contexts)
    return [float(np.sum(np.broadcast_to(
        pass_totals(ops, ceilings(scenario.hardware, scenario.precisions.compute_dtype, name)).time_s, contexts.shape)))
        for name in ("bound", "expected")]


LENGTHS = (256, 4096, 1 << 20)


def length_ms(runs: int = 7) -> dict[str, dict[int, float]]:
    """Median ms per output length for the report, the closed-form decode and the step-by-step decode, measured in
    turn in the same run; the two decode paths are checked to agree (1e-9) before they are timed."""
    from roofline.models.report import scenario_report

    result: dict[str, dict[int, float]] = {"report": {}, "closed form": {}, "step by step": {}}
    for g in LENGTHS:
        s = _scenario(g)
        closed, steps = closed_form_decode(s), step_by_step_decode(s)
        if any(abs(a - b) > 1e-9 * b for a, b in zip(closed, steps, strict=True)):
            raise AssertionError(f"G = {g}: closed form {closed} != step by step {steps}")
        result["report"][g] = _median_ms(lambda s=s: scenario_report(s), runs)
        result["closed form"][g] = _median_ms(lambda s=s: closed_form_decode(s), runs)
        result["step by step"][g] = _median_ms(lambda s=s: step_by_step_decode(s), max(3, runs // 2))
    return result


def model_seconds(runs: int = 20) -> list[float]:
    from roofline.models.report import scenario_report

    scenario = _scenario()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        scenario_report(scenario)
        times.append(time.perf_counter() - start)
    return times


ISSUE_SCENARIO_CODE = """
import dataclasses, statistics, sys, time
from roofline.models.report import scenario_report
from roofline.models.scenario import Batching, Scenario
from roofline.presets import load_hardware, load_model
s = Scenario(hardware=load_hardware("a100-sxm4-80gb"), model=load_model("llama-2-7b"),
             batching=Batching(batch_size=1, prompt_tokens=1024, output_tokens=16384))
if sys.argv[1] != "default":
    s = dataclasses.replace(s, engine=sys.argv[1])
scenario_report(s)
calls = []
for _ in range(50):
    start = time.perf_counter(); scenario_report(s); calls.append(time.perf_counter() - start)
print(statistics.median(calls) * 1e3)
"""


def old_package(worktree: str) -> str:
    """A folder holding ``roofline/`` whose models, presets and tui are the worktree's (symlinks)."""
    import tempfile
    from pathlib import Path

    root = Path(tempfile.gettempdir()) / f"roofline-old-{Path(worktree).name}"
    package = root / "roofline"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").touch()
    for name in ("models", "presets", "tui"):
        link = package / name
        if not link.exists():
            link.symlink_to(Path(worktree).resolve() / name)
    return str(root)


def before_after(old: str, new: str | None, rounds: int) -> None:
    """Median ms of scenario_report for the issue's scenario, the old worktree and the new one (default: this
    checkout) in turns."""
    import os

    envs = {"before": {**os.environ, "PYTHONPATH": old_package(old)},
            "after": {**os.environ, "PYTHONPATH": old_package(new)} if new else dict(os.environ)}
    for engine in ("default", "unknown"):
        ms: dict[str, list[float]] = {"before": [], "after": []}
        for _ in range(rounds):
            for name, env in envs.items():
                out = subprocess.run([sys.executable, "-c", ISSUE_SCENARIO_CODE, engine], check=True,
                                     capture_output=True, text=True, env=env)
                ms[name].append(float(out.stdout))
        b, a = statistics.median(ms["before"]), statistics.median(ms["after"])
        print(f"engine {engine:8s} before {b:6.2f} ms ({min(ms['before']):.2f}-{max(ms['before']):.2f})  "
              f"after {a:6.2f} ms ({min(ms['after']):.2f}-{max(ms['after']):.2f})  before / after {b / a:.2f}x")


def main(argv: list[str] | None = None) -> list[dict]:
    """Rows in run_all's format: medians of the whole CLI process, interpreter + imports, and the model."""
    import argparse

    from run_all import row

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="process runs (default 7; the model runs 20)")
    parser.add_argument("--old", help="a worktree of an older commit: time the issue's scenario there and here")
    parser.add_argument("--new", help="with --old: a worktree of the newer commit (default: this checkout)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of --old (default 5)")
    args = parser.parse_args(argv)
    if args.old:
        before_after(args.old, args.new, args.rounds)
        return []
    runs = args.runs
    cli = statistics.median(cli_seconds(runs))
    imports = statistics.median(import_seconds(runs))
    model = statistics.median(model_seconds(max(20, runs)))
    rows = [row("report", "roofline report (4096-token generation), whole process (median)", cli * 1e3, "ms"),
            row("report", "  interpreter + imports alone (median)", imports * 1e3, "ms"),
            row("report", "  model (scenario_report with ops) (median)", model * 1e3, "ms")]
    lengths = length_ms(runs)
    for path, by_length in lengths.items():
        for g in LENGTHS:
            rows.append(row("report", f"  {path}, G = {g:,} (median)", by_length[g], "ms"))
        ratio = by_length[LENGTHS[-1]] / by_length[LENGTHS[0]]
        if path == "step by step":
            rows.append(row("report", f"  {path}: G = 1M / G = 256", ratio, "x"))
        else:
            rows.append(row("report", f"  {path}: G = 1M / G = 256", ratio, "x", "< 2", ratio < 2))
    return rows


if __name__ == "__main__":
    from run_all import print_table

    rows = main()
    if rows:
        print_table(rows)
