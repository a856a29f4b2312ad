"""Key to changed frame, side by side in one run: the minimal Textual app's Static update and the explorer's ``+``.

Run: .venv/bin/python benchmarks/compare_keystroke.py [--rounds 5] [--presses 20] [--old /tmp/before] [--new /tmp/after]

Each program runs under a pseudo-terminal of 160x50 (pty_driver.PtySession) and waits for its first complete frame;
then ``+`` and ``-`` are sent alternately (the minimal app counts either way: its ``+`` updates a Static; the
explorer doubles and halves the batch on the Roofline view), each time waiting for 150 ms without a byte. A key's
time is from the write of the key to the last byte of its update (the whole changed frame, escape sequences
included, as a terminal receives it). The programs take turns, one session each per round (minimal, old, new,
checkout, minimal, ...), so that all of them see the same load on a machine whose speed drifts (this one is shared
with other agents). ``--old``/``--new``: ``git worktree`` folders of commits, imported as ``roofline.*`` in place
of this checkout. Reported per program: the median key over all rounds, the spread of the rounds' medians, the p95,
and the ratio of its median to the minimal app's.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from pty_driver import REPO, VENV_BIN, PtySession, complete_frame, percentile

MINIMAL_APP = [str(VENV_BIN / "python"), str(REPO / "benchmarks" / "minimal_app.py")]
EXPLORER = [str(VENV_BIN / "python"), "-m", "roofline.tui.cli"]


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


def programs(old: Path | None, new: Path | None, checkout: bool) -> dict[str, tuple[list[str], dict | None, Path]]:
    """name -> (argv, extra environment, working folder)."""
    found: dict[str, tuple[list[str], dict | None, Path]] = {"minimal": (MINIMAL_APP, None, REPO)}
    for name, worktree in (("old", old), ("new", new)):
        if worktree is not None:
            found[name] = (EXPLORER, {"PYTHONPATH": str(_old_package(worktree))}, worktree)
    if checkout:
        found["checkout"] = (EXPLORER, None, REPO)
    return found


def key_times(argv: list[str], env: dict | None, cwd: Path, presses: int, cols: int = 160, rows: int = 50
              ) -> list[float]:
    """Seconds from each key to the last byte of its update, in one session."""
    with PtySession(argv, cols=cols, rows=rows, env=env, cwd=cwd) as session:
        session.wait_settled(session.spawned_at, until=complete_frame(rows), timeout=60)
        session.wait_settled(session.send("+"), timeout=10)  # the first key warms caches: not counted
        times = []
        for i in range(presses):
            update = session.wait_settled(session.send("-" if i % 2 == 0 else "+"), timeout=10)
            if update.nbytes:
                times.append(update.seconds)
        return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--presses", type=int, default=20)
    parser.add_argument("--old", type=Path)
    parser.add_argument("--new", type=Path)
    parser.add_argument("--no-checkout", action="store_true", help="leave this checkout out")
    args = parser.parse_args(argv)
    found = programs(args.old, args.new, not args.no_checkout)
    per_round: dict[str, list[list[float]]] = {name: [] for name in found}
    for _ in range(args.rounds):
        for name, (program, env, cwd) in found.items():
            per_round[name].append(key_times(program, env, cwd, args.presses))
    base = statistics.median([t for r in per_round["minimal"] for t in r])
    print(f"{'program':10} {'median ms':>10} {'rounds (min-max)':>18} {'p95 ms':>8} {'x minimal':>10}")
    for name, rounds in per_round.items():
        every = [t for r in rounds for t in r]
        medians = [statistics.median(r) for r in rounds if r]
        median = statistics.median(every)
        print(f"{name:10} {median * 1e3:10.1f} {min(medians) * 1e3:8.1f}-{max(medians) * 1e3:<8.1f} "
              f"{percentile(every, 0.95) * 1e3:8.1f} {median / base:10.2f}")


if __name__ == "__main__":
    main()
