"""How long `roofline report` takes, and how much of it is the model.

Run: .venv/bin/python benchmarks/bench_report.py
Prints the median wall time of the CLI as a process (start-up included) for a 4096-token
generation, and the median time of the model alone (report dict, ops included).
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


def model_seconds(runs: int = 20) -> list[float]:
    from roofline.models.report import scenario_report
    from roofline.models.scenario import Batching, Parallelism, Scenario
    from roofline.presets import load_hardware, load_model

    scenario = Scenario(hardware=load_hardware("h100-sxm"), model=load_model("llama-3.1-70b"),
                        batching=Batching(batch_size=32, prompt_tokens=2048, output_tokens=4096),
                        parallelism=Parallelism(tp=4))
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        scenario_report(scenario)
        times.append(time.perf_counter() - start)
    return times


def main(argv: list[str] | None = None) -> list[dict]:
    """Rows in run_all's format: medians of the whole CLI process, interpreter + imports, and the model."""
    import argparse

    from run_all import row

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="process runs (default 7; the model runs 20)")
    runs = parser.parse_args(argv).runs
    cli = statistics.median(cli_seconds(runs))
    imports = statistics.median(import_seconds(runs))
    model = statistics.median(model_seconds(max(20, runs)))
    return [row("report", "roofline report (4096-token generation), whole process (median)", cli * 1e3, "ms"),
            row("report", "  interpreter + imports alone (median)", imports * 1e3, "ms"),
            row("report", "  model (scenario_report with ops) (median)", model * 1e3, "ms")]


if __name__ == "__main__":
    cli, imports, model = (r["value"] for r in main())
    print(f"roofline report (4096-token generation), whole process: median {cli:.0f} ms")
    print(f"  interpreter + imports alone:                          median {imports:.0f} ms")
    print(f"  model (scenario_report with ops):                     median {model:.1f} ms")
