"""Memory: peak resident set of the explorer over a minute of use at 160x50.

Run: .venv/bin/python benchmarks/bench_memory.py [--seconds 60] [--interval 0.25]

Starts the installed `roofline` entry point on a 160x50 pseudo-terminal (pty_driver.PtySession),
waits for its first complete frame, then sends keys from a fixed cycle for ``--seconds``, one key
every ``--interval`` seconds (4 a second by default): every view (1-7), batch and context up and
down (`+ - ] [`, balanced so that the scenario returns to where it started each cycle), `p` pin
baseline, `a` spec/achievable, `g` gap explanation and Esc to close it. The output is read all
the while (a child whose pty fills up would block). Every 0.25 s, VmRSS (current resident set)
is read from /proc/PID/status of the child (the Python process itself: the entry point is a
script that the kernel runs with the venv's interpreter, no wrapper process); at the end VmHWM,
the kernel's own high-water mark of the resident set, which also catches peaks between samples.

Reported: peak (VmHWM), RSS after the first frame, RSS at the end, and their difference (growth
over the run: a leak shows there). MiB = 2^20 bytes. Target: peak under 150 MiB.
"""

from __future__ import annotations

import argparse
import time

from pty_driver import PtySession, complete_frame, explorer_argv, rss_kib
from run_all import print_table, row

TARGET_MIB = 150
# One cycle of use; balanced (+ with -, ] with [, a twice, g then Esc) so the state does not drift.
KEY_CYCLE = ["1", "+", "]", "2", "-", "[", "3", "+", "p", "4", "]", "a", "5", "-", "[", "6", "g", "escape", "7",
             "+", "-", "a", "1", "]", "[", "g", "escape"]


def measure(seconds: float = 60.0, interval: float = 0.25, cols: int = 160, rows: int = 50) -> dict:
    samples: list[tuple[float, int]] = []  # (seconds since the first frame, VmRSS KiB)
    keys_sent = 0
    with PtySession(explorer_argv(), cols=cols, rows=rows) as session:
        session.wait_settled(session.spawned_at, until=complete_frame(rows), timeout=60)
        start = time.perf_counter()
        rss_start, _ = rss_kib(session.pid)
        next_key = next_sample = start
        while (now := time.perf_counter()) - start < seconds:
            if session.proc.poll() is not None:
                raise RuntimeError(f"the explorer exited during the run (status {session.proc.returncode})")
            if now >= next_sample:
                samples.append((now - start, rss_kib(session.pid)[0]))
                next_sample += 0.25
            if now >= next_key:
                session.send(KEY_CYCLE[keys_sent % len(KEY_CYCLE)])
                keys_sent += 1
                next_key += interval
            session.read_for(max(0.0, min(next_key, next_sample) - time.perf_counter()))
        session.read_for(0.5)  # let the last key's update finish
        rss_end, hwm = rss_kib(session.pid)
        output = session.total_bytes
    return {"hwm_kib": hwm, "rss_start_kib": rss_start, "rss_end_kib": rss_end, "samples": samples,
            "keys": keys_sent, "output_bytes": output, "seconds": seconds}


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="how long to drive the explorer (default 60)")
    parser.add_argument("--interval", type=float, default=0.25, help="seconds between keys (default 0.25)")
    args = parser.parse_args(argv)
    result = measure(args.seconds, args.interval)
    peak = result["hwm_kib"] / 1024
    sampled_peak = max(kib for _, kib in result["samples"]) / 1024
    label = f"{result['seconds']:.0f} s, {result['keys']} keys"
    return [
        row("memory", f"explorer peak RSS, VmHWM ({label})", peak, "MiB", f"< {TARGET_MIB}", peak < TARGET_MIB),
        row("memory", "explorer RSS after the first frame", result["rss_start_kib"] / 1024, "MiB"),
        row("memory", "explorer RSS at the end", result["rss_end_kib"] / 1024, "MiB"),
        row("memory", "growth over the run (end - first frame)",
            (result["rss_end_kib"] - result["rss_start_kib"]) / 1024, "MiB"),
        row("memory", "highest sampled VmRSS (every 0.25 s)", sampled_peak, "MiB"),
    ]


if __name__ == "__main__":
    print_table(main())
