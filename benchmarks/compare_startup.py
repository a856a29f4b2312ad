"""Start-up to the first complete frame: older and newer explorers and a minimal Textual app, taking turns.

Run: .venv/bin/python benchmarks/compare_startup.py [--runs 7] [--old /tmp/old39] [--new /tmp/new17]

The same pty, size (160x50) and first-frame rule as bench_startup.py (every row drawn after the switch to the
alternate screen, then 150 ms of quiet; the frame's time is its last byte). Programs run one after another in
rounds (minimal, old, new, this checkout, minimal, old, ...), after one untimed warm-up each, so that all of them
see the same load on a machine whose speed drifts. ``--old``/``--new``: ``git worktree`` folders of commits,
imported as ``roofline.*`` in place of this checkout (``python -m roofline.tui.cli``), so that edits in progress
in the checkout stay out of the figures. Reported per program: the median, the min-max spread, and the ratio of
its median to the minimal app's, and when every row had been drawn once (the screen is whole; what comes after
is repainting until quiet).
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from bench_startup import MINIMAL_APP
from compare_keystroke import _old_package
from pty_driver import REPO, VENV_BIN, PtySession, all_rows_drawn_at, complete_frame


def first_frame(argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None,
                cols: int = 160, rows: int = 50) -> tuple[float, float]:
    """(settled, every row drawn once) in seconds from the spawn."""
    with PtySession(argv, cols=cols, rows=rows, env=env, cwd=cwd) as session:
        update = session.wait_settled(session.spawned_at, until=complete_frame(rows), timeout=60)
        if session.eof:
            raise RuntimeError(f"{argv} exited before a complete frame: {update.data[-400:]!r}")
        all_rows_at = all_rows_drawn_at(update, rows)
        return update.seconds, update.seconds if all_rows_at is None else all_rows_at


def programs(old: Path | None, new: Path | None, checkout: bool) -> dict[str, tuple[list[str], dict | None, Path]]:
    module = [str(VENV_BIN / "python"), "-m", "roofline.tui.cli"]
    found = {"minimal": (MINIMAL_APP, None, REPO)}
    if old is not None:
        found["old"] = (module, {"PYTHONPATH": str(_old_package(old))}, old)
    if new is not None:
        found["new"] = (module, {"PYTHONPATH": str(_old_package(new))}, new)
    if checkout:
        found["checkout"] = (module, None, REPO)
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--old", type=Path)
    parser.add_argument("--new", type=Path)
    parser.add_argument("--no-checkout", action="store_true", help="leave this checkout out")
    args = parser.parse_args(argv)
    found = programs(args.old, args.new, not args.no_checkout)
    for program, env, cwd in found.values():
        first_frame(program, env, cwd)  # warm-up, not counted
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in found}
    for _ in range(args.runs):
        for name, (program, env, cwd) in found.items():
            times[name].append(first_frame(program, env, cwd))
    minimal = statistics.median(settled for settled, _ in times["minimal"])
    print("| program | settled frame: median s | min-max s | x minimal | every row drawn once: median s |")
    print("| --- | --- | --- | --- | --- |")
    for name, pairs in times.items():
        values = [settled for settled, _ in pairs]
        median = statistics.median(values)
        print(f"| {name} | {median:.2f} | {min(values):.2f}-{max(values):.2f} | {median / minimal:.2f} | "
              f"{statistics.median(rows for _, rows in pairs):.2f} |")


if __name__ == "__main__":
    main()
