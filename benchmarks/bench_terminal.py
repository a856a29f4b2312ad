"""Terminal traffic: bytes the explorer writes to the terminal per keystroke update, at 160x50.

Run: .venv/bin/python benchmarks/bench_terminal.py [--presses 30] [--cols 160] [--rows 50]

Starts the installed `roofline` entry point (no arguments: the default scenario) on a
pseudo-terminal of 160x50 (pty_driver.PtySession) and waits for its first complete frame. Then,
for each of the views 1 roofline, 2 batch, 3 context, 4 memory, 5 ops: switches to it (not
counted), and sends `+` and `-` alternately (batch x2, /2) ``--presses`` times, waiting after
each for the output to settle (150 ms without a byte). Every byte read from the pty master
between the key and the settle is that keystroke's update: what a terminal emulator has to
parse for it, escape sequences included. The time from the key to the last byte of its update
is reported too (end-to-end keystroke latency, compositing and the write included; the 150 ms
quiet period is not in it).

Reported: median and p95 bytes per view and over all views (and the mean, which does not depend
on where one update ends and the next begins), latency median and p95 over all,
and, for comparison, everything written from spawn to the first complete frame (that is more
than one frame: the explorer paints the body, then repaints it with the footer, and more).
Target: under 16 KiB (16,384 B) median.
"""

from __future__ import annotations

import argparse
import statistics

from pty_driver import PtySession, complete_frame, explorer_argv, percentile
from run_all import print_table, row

VIEWS = {"1": "roofline", "2": "batch", "3": "context", "4": "memory", "5": "ops"}
TARGET_BYTES = 16 * 1024


def measure(presses: int = 30, cols: int = 160, rows: int = 50) -> dict:
    """{"first_frame": bytes, "views": {view: [(bytes, seconds), ...]}} for one explorer session."""
    per_view: dict[str, list[tuple[int, float]]] = {}
    with PtySession(explorer_argv(), cols=cols, rows=rows) as session:
        first = session.wait_settled(session.spawned_at, until=complete_frame(rows), timeout=60)
        for key, view in VIEWS.items():
            session.wait_settled(session.send(key), timeout=10, empty_after=1.0)  # switch: not counted
            samples = []
            for i in range(presses):
                update = session.wait_settled(session.send("+" if i % 2 == 0 else "-"), timeout=10)
                samples.append((update.nbytes, update.seconds))
            per_view[view] = samples
    return {"first_frame": first.nbytes, "views": per_view}


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=30, help="+/- presses per view (default 30)")
    parser.add_argument("--cols", type=int, default=160)
    parser.add_argument("--rows", type=int, default=50)
    args = parser.parse_args(argv)
    result = measure(args.presses, args.cols, args.rows)
    target = f"< {TARGET_BYTES}"
    rows = []
    everything = []
    for view, samples in result["views"].items():
        sizes = [size for size, _ in samples]
        everything.extend(samples)
        median = statistics.median(sizes)
        rows.append(row("terminal", f"view {view}: bytes per +/- update (median)", median, "B", target,
                        median < TARGET_BYTES))
        rows.append(row("terminal", f"view {view}: bytes per +/- update (p95)", percentile(sizes, 0.95), "B"))
    sizes = [size for size, _ in everything]
    latencies = [seconds * 1e3 for _, seconds in everything]
    median = statistics.median(sizes)
    rows += [
        row("terminal", "all views: bytes per +/- update (median)", median, "B", target, median < TARGET_BYTES),
        row("terminal", "all views: bytes per +/- update (p95)", percentile(sizes, 0.95), "B"),
        row("terminal", "all views: bytes per +/- update (mean)", statistics.fmean(sizes), "B"),
        row("terminal", "all views: key to last byte (median)", statistics.median(latencies), "ms"),
        row("terminal", "all views: key to last byte (p95)", percentile(latencies, 0.95), "ms"),
        row("terminal", "start-up output up to the first complete frame, for comparison", result["first_frame"], "B"),
    ]
    return rows


if __name__ == "__main__":
    print_table(main())
