"""Start-up to the first complete frame: the explorer against a minimal Textual app, same pty, same rule.

Run: .venv/bin/python benchmarks/bench_startup.py [--runs 5] [--cols 160] [--rows 50]

Each run spawns the program on a fresh pseudo-terminal (pty_driver.PtySession, 160x50) and
times from just before the fork to the first complete frame, defined without touching the app:
after the switch to the alternate screen (ESC [?1049h), every one of the terminal's rows has
been drawn at least once (a cursor move to each row, which is how Textual paints), and then
the output stays quiet for 150 ms. The frame time is the timestamp of the last byte before that
quiet period, so the 150 ms are not part of it. Drawing every row is not enough on its own: the
explorer paints the body first and the footer about 0.4 s later, and fills in after that.

The explorer is the installed `.venv/bin/roofline` entry point (what a user runs, no arguments);
the reference is benchmarks/minimal_app.py (Header, Static, Footer) on the same interpreter. The
two alternate, after one untimed warm-up of each (so both are warm starts: .pyc files and the
page cache are hot). Reported: the median of each, and the ratio of the medians.
Targets: explorer under 0.8 s, and within 1.3x of the minimal app.

Also checked here: `roofline report` must not import Textual or plotext. It is run once with
`python -X importtime`, and the modules it imported are searched for textual/plotext. (The
report's own start-up time is bench_report.py's.)
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

from pty_driver import REPO, VENV_BIN, PtySession, all_rows_drawn_at, complete_frame, explorer_argv
from run_all import print_table, row

MINIMAL_APP = [str(VENV_BIN / "python"), str(REPO / "benchmarks" / "minimal_app.py")]
STARTUP_TARGET_S = 0.8
RATIO_TARGET = 1.3
FORBIDDEN_IN_REPORT = ("textual", "plotext", "textual_plotext")


def first_frame(argv: list[str], cols: int = 160, rows: int = 50) -> dict[str, float]:
    """Spawn ``argv`` on a cols x rows pty and time its first complete frame (see the module doc)."""
    with PtySession(argv, cols=cols, rows=rows) as session:
        update = session.wait_settled(session.spawned_at, until=complete_frame(rows), timeout=60)
        if session.eof:
            raise RuntimeError(f"{argv[-1]} exited before a complete frame: {update.data[-400:]!r}")
        all_rows_at = all_rows_drawn_at(update, rows)  # information: the frame is not settled yet then
        return {"settled_s": update.seconds, "all_rows_s": all_rows_at or update.seconds, "bytes": update.nbytes}


def report_imports() -> list[str]:
    """Top-level packages among FORBIDDEN_IN_REPORT that `roofline report` imports (should be none)."""
    from bench_report import ARGS

    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "roofline.tui.cli", *ARGS],
                          capture_output=True, text=True, check=True)
    found = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name.split(".")[0] in FORBIDDEN_IN_REPORT:
                found.add(name.split(".")[0])
    return sorted(found)


def measure(runs: int = 5, cols: int = 160, rows: int = 50) -> dict[str, list[dict[str, float]]]:
    programs = {"explorer": explorer_argv(), "minimal": MINIMAL_APP}
    for argv in programs.values():
        first_frame(argv, cols, rows)  # warm-up, not counted
    results: dict[str, list[dict[str, float]]] = {name: [] for name in programs}
    for _ in range(runs):
        for name, argv in programs.items():
            results[name].append(first_frame(argv, cols, rows))
    return results


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cols", type=int, default=160)
    parser.add_argument("--rows", type=int, default=50)
    args = parser.parse_args(argv)
    results = measure(args.runs, args.cols, args.rows)
    explorer = statistics.median(r["settled_s"] for r in results["explorer"])
    minimal = statistics.median(r["settled_s"] for r in results["minimal"])
    explorer_rows = statistics.median(r["all_rows_s"] for r in results["explorer"])
    ratio = explorer / minimal
    forbidden = report_imports()
    return [
        row("startup", "explorer: spawn to first complete frame (median)", explorer, "s", f"< {STARTUP_TARGET_S}",
            explorer < STARTUP_TARGET_S),
        row("startup", "minimal Textual app: same (median)", minimal, "s"),
        row("startup", "explorer / minimal", ratio, "x", f"<= {RATIO_TARGET}", ratio <= RATIO_TARGET),
        row("startup", "explorer: every row drawn once (median, not settled)", explorer_rows, "s"),
        row("startup", "explorer: bytes written up to the first complete frame", statistics.median(
            r["bytes"] for r in results["explorer"]), "B"),
        row("startup", "roofline report imports textual/plotext", ", ".join(forbidden) or "none", "", "none",
            not forbidden),
    ]


if __name__ == "__main__":
    print_table(main())
