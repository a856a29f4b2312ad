"""``roofline validate FILE``: expected and bound against published measurements."""

from __future__ import annotations

import json
from argparse import Namespace
from collections import defaultdict
from pathlib import Path

from roofline.models.validation import RowResult, evaluate, summarize
from roofline.presets.measurements import read_measurements

# --format json: bumped when a key is renamed or removed or its meaning changes (adding one is not a bump).
VALIDATE_SCHEMA_VERSION = 1


def run_validate(args: Namespace) -> int:
    rows, skipped = read_measurements(Path(args.file))
    if not rows:
        raise ValueError(f"{args.file}: no row could be evaluated")
    results: list[RowResult] = [evaluate(r.id, r.scenario, r.metric, r.value) for r in rows]
    by_family: dict[str, list[RowResult]] = defaultdict(list)
    by_metric: dict[str, list[RowResult]] = defaultdict(list)
    for row, result in zip(rows, results, strict=True):
        by_family[row.family].append(result)
        by_metric[result.metric].append(result)
    summary = summarize(results)
    if args.format == "json":
        print(json.dumps({
            "schema_version": VALIDATE_SCHEMA_VERSION,
            "summary": summary.as_dict(),
            "by_family": {k: summarize(v).as_dict() for k, v in sorted(by_family.items())},
            "by_metric": {k: summarize(v).as_dict() for k, v in sorted(by_metric.items())},
            "rows": [{"id": r.id, "metric": r.metric, "measured": r.measured, "expected": r.expected,
                      "bound": r.bound, "expected_error": r.expected_error, "bound_held": r.bound_held}
                     for r in results],
            "skipped": [{"id": s.id, "line": s.line, "reason": s.reason} for s in skipped],
        }, indent=2))
        return 0
    print(f"{'id':8} {'metric':30} {'measured':>10} {'expected':>10} {'bound':>10} {'error':>7}  bound held")
    for r in results:
        print(f"{r.id:8} {r.metric:30} {r.measured:10.4g} {r.expected:10.4g} {r.bound:10.4g} "
              f"{100 * r.expected_error:+6.1f}%  {'yes' if r.bound_held else 'NO'}")

    def line(label: str, group: list[RowResult]) -> str:
        s = summarize(group)
        return (f"{label:32} rows {s.rows:3}  median |error| {100 * s.median_abs_error:5.1f}%  "
                f"p80 {100 * s.p80_abs_error:5.1f}%  bound held {100 * s.bound_held_share:5.1f}%")

    print()
    print(line("all", results))
    for family, group in sorted(by_family.items()):
        print(line(f"  source {family}", group))
    for metric, group in sorted(by_metric.items()):
        print(line(f"  metric {metric}", group))
    for s in skipped:
        print(f"skipped {s.id} (line {s.line}): {s.reason}")
    return 0
