"""Every benchmark in benchmarks/, one table of results against the performance budget, and a JSON file.

Run (the one documented command):

    .venv/bin/python benchmarks/run_all.py                # everything, about 3 minutes
    .venv/bin/python benchmarks/run_all.py --quick        # shorter runs (memory 15 s, fewer presses)
    .venv/bin/python benchmarks/run_all.py --only startup terminal --json /tmp/r.json

Prints one table (benchmark, metric, value, target, pass/fail) and writes the rows, with the
machine they were measured on, to benchmarks/results.json (or --json PATH). Exits 1 when any
row with a target misses it, or a benchmark fails to run; 0 otherwise.

Row format, which every benchmark module follows: the module has ``main(argv=None) -> list[dict]``
(argv: its own command-line flags, None for the defaults) returning rows, each a dict

    {"benchmark": str,            # short name of the benchmark, e.g. "startup"
     "metric": str,               # what was measured, with the statistic: "explorer ... (median)"
     "value": float | int | str,  # the measurement, in ``unit``
     "unit": str,                 # "s", "ms", "B", "MiB", "x", or "" for text values
     "target": str | None,        # the budget as text ("< 0.8"), in ``unit``; None: information only
     "ok": bool | None}           # whether value meets target; None when there is no target

Build rows with ``row()`` below. When run as a script, a module prints its own rows with
``print_table()``. Tolerated too: a ``main()`` without arguments, and a dict with the rows under
"rows" instead of the list.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_JSON = HERE / "results.json"

# (module, flags for a normal run, flags for --quick); a module that is not there is skipped.
BENCHMARKS = [
    ("bench_startup", [], ["--runs", "3"]),
    ("bench_terminal", [], ["--presses", "10"]),
    ("bench_memory", [], ["--seconds", "15"]),
    ("bench_report", [], ["--runs", "3"]),
    ("bench_keystroke", [], ["--presses", "10"]),
    ("bench_model", [], []),
]
OPTIONAL = {"bench_model"}  # being written elsewhere: run it when it exists


def row(benchmark: str, metric: str, value: float | int | str, unit: str, target: str | None = None,
        ok: bool | None = None) -> dict:
    """One result row (see the module docstring for the fields)."""
    return {"benchmark": benchmark, "metric": metric, "value": value, "unit": unit, "target": target,
            "ok": ok if target is not None else None}


def _number(value: float | int | str, unit: str) -> str:
    if isinstance(value, (bool, str)):
        text = str(value)
    elif isinstance(value, int) or (unit == "B" and float(value).is_integer()):
        text = f"{int(value):,}"
    elif abs(value) >= 100:
        text = f"{value:,.0f}"
    elif abs(value) >= 10:
        text = f"{value:.1f}"
    else:
        text = f"{value:.3g}" if abs(value) >= 1 else f"{value:.3f}"
    return f"{text} {unit}".rstrip()


def format_table(rows: list[dict]) -> str:
    head = ("benchmark", "metric", "value", "target", "result")
    cells = [(r["benchmark"], r["metric"], _number(r["value"], r["unit"]),
              f"{r['target']} {r['unit']}".rstrip() if r.get("target") is not None else "-",
              {True: "pass", False: "FAIL", None: "-"}[r.get("ok")]) for r in rows]
    widths = [max(len(c[i]) for c in [head, *cells]) for i in range(len(head))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)), "  ".join("-" * w for w in widths)]
    for c in cells:
        lines.append("  ".join([c[0].ljust(widths[0]), c[1].ljust(widths[1]), c[2].rjust(widths[2]),
                                c[3].ljust(widths[3]), c[4]]))
    return "\n".join(lines)


def print_table(rows: list[dict]) -> None:
    print(format_table(rows), flush=True)


def _rows_of(result) -> list[dict]:
    if isinstance(result, dict):
        result = result.get("rows", [result])
    return list(result)


def machine() -> dict:
    info = {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()}
    try:
        from importlib.metadata import version

        info["textual"] = version("textual")
    except Exception:  # noqa: BLE001 - information only
        pass
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            info["cpu"] = next(line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter runs, for a check that everything works")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these (e.g. startup memory)")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help=f"where to write (default {DEFAULT_JSON})")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))

    rows: list[dict] = []
    for module_name, flags, quick_flags in BENCHMARKS:
        short = module_name.removeprefix("bench_")
        if args.only and short not in args.only and module_name not in args.only:
            continue
        if not (HERE / f"{module_name}.py").exists() and module_name in OPTIONAL:
            continue
        print(f"running {module_name} ...", file=sys.stderr, flush=True)
        started = time.perf_counter()
        try:
            module = importlib.import_module(module_name)
            takes_argv = bool(inspect.signature(module.main).parameters)
            result = module.main(quick_flags if args.quick else flags) if takes_argv else module.main()
            rows.extend(_rows_of(result))
        except Exception as err:  # noqa: BLE001 - one broken benchmark must not hide the others
            traceback.print_exc()
            rows.append(row(short, "benchmark ran", f"error: {type(err).__name__}: {err}", "", "ran", False))
        print(f"  {module_name}: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)

    print_table(rows)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"measured_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "quick": args.quick,
                                     "machine": machine(), "rows": rows}, indent=2) + "\n")
    print(f"\nwrote {args.json}", file=sys.stderr)
    return 1 if any(r.get("ok") is False for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
