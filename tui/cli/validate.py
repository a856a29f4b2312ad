"""``roofline validate FILE``: expected and bound against published measurements.

Each row is scored with its ``engine`` column (the default engine where empty; ``--engine`` scores every row with
one engine instead). Rows whose configuration does not fit in device memory as stated
(:func:`models.validation.memory_flags`) are left out of the summary and listed with the reason; serving rows (with
a ``concurrency``) are scored by the continuous-batching model (models/serving/) at their concurrency or rate
and reported apart (``serving`` in JSON); a row whose prompt, or prompt + output, is past the model's maximum
context (:func:`models.validation.context_flag`) is left out of every summary and listed apart (``context_flagged``).
``--holdout family`` adds leave-one-family-out scores, ``--holdout source`` leave-one-source-out (one cited document
at a time), ``both`` the two side by side (:func:`models.validation.leave_one_group_out`): in-sample and held-out
error per group and overall. ``--format markdown`` prints the README's accuracy tables (validate_report.py).
Every scored row carries the uncertainty band of ``expected`` (models/band.py: the engine profiles for its device's
vendor crossed with measured and default bandwidth and matmul fractions); the summaries give the share of rows whose
measurement falls inside it (``band_coverage``), per family, per metric and overall.
"""

from __future__ import annotations

import json
from argparse import Namespace
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from roofline.models.validation import HoldoutReport, RowResult, Summary, summarize
from roofline.presets.measurements import MeasurementRow, read_measurements
from roofline.tui.cli.validate_report import markdown_report
from roofline.tui.cli.validate_scoring import (  # noqa: F401 (score, score_serving, Scored: this module's API too)
    HOLDOUT_GROUPS,
    Scored,
    score,
    score_serving,
    serving_holdout_note,
)
from roofline.tui.inputs.file_values import scenario_from_values
from roofline.tui.inputs.limits import check_number

# --format json: bumped when a key is renamed or removed or its meaning changes (adding one is not a bump).
VALIDATE_SCHEMA_VERSION = 1


def _engine_notes(rows: list[MeasurementRow]) -> list[str]:
    notes = Counter(r.engine_note for r in rows if r.engine_note)
    return [f"{note} ({n} row{'s' if n > 1 else ''})" for note, n in sorted(notes.items())]


def _serving_summary(scored: list[tuple[MeasurementRow, RowResult]]) -> dict[str, Any]:
    by_family: dict[str, list[RowResult]] = defaultdict(list)
    by_metric: dict[str, list[RowResult]] = defaultdict(list)
    for row, r in scored:
        by_family[row.family].append(r)
        by_metric[r.metric].append(r)
    return {"summary": summarize([r for _, r in scored]).as_dict() if scored else None,
            "by_family": {k: summarize(v).as_dict() for k, v in sorted(by_family.items())},
            "by_metric": {k: summarize(v).as_dict() for k, v in sorted(by_metric.items())}}


def _holdout_dict(h: HoldoutReport) -> dict[str, Any]:
    by = f"by_{h.group}"
    return {
        "group": h.group,
        "refitted": h.refitted,
        "note": h.note,
        "in_sample": h.in_sample_summary.as_dict(),
        "held_out": h.held_out_summary.as_dict(),
        by: {g: {"in_sample": a.as_dict(), "held_out": b.as_dict()} for g, (a, b) in h.by_group.items()},
        "factors": [{"name": f.name, "shipped": f.shipped, "in_sample_fit": f.in_sample_fit,
                     f"without_{h.group}": f.without_group} for f in h.factors],
    }


def _line(label: str, s: Summary) -> str:
    band = "" if s.band_coverage is None else f"  in band {100 * s.band_coverage:5.1f}%"
    return (f"{label:32} rows {s.rows:3}  median |error| {100 * s.median_abs_error:5.1f}%  "
            f"p80 {100 * s.p80_abs_error:5.1f}%  bound held {100 * s.bound_held_share:5.1f}%{band}")


def _row_json(r: RowResult) -> dict[str, Any]:
    return {"measured": r.measured, "expected": r.expected, "expected_low": r.expected_low,
            "expected_high": r.expected_high, "in_band": r.in_band, "bound": r.bound,
            "expected_error": r.expected_error, "bound_held": r.bound_held}


def _row_text(r: RowResult) -> str:
    band = "-" if r.expected_low is None else f"{r.expected_low:.4g}..{r.expected_high:.4g}"
    return (f"{r.id:8} {r.metric:30} {r.measured:10.4g} {r.expected:10.4g} {band:>21} {r.bound:10.4g} "
            f"{100 * r.expected_error:+6.1f}%  {'yes' if r.bound_held else 'NO':4}  "
            f"{'-' if r.in_band is None else 'yes' if r.in_band else 'no'}")


def _holdout_lines(h: HoldoutReport) -> list[str]:
    def pair(label: str, a: Summary, b: Summary) -> str:
        return (f"{label:20} rows {a.rows:3}  in-sample median {100 * a.median_abs_error:5.1f}% p80 "
                f"{100 * a.p80_abs_error:5.1f}%  held-out median {100 * b.median_abs_error:5.1f}% p80 "
                f"{100 * b.p80_abs_error:5.1f}%")

    lines = [f"leave-one-{h.group}-out: " + h.note, pair("all", h.in_sample_summary, h.held_out_summary)]
    lines += [pair(f"  {h.group} {g}", a, b) for g, (a, b) in h.by_group.items()]
    for f in h.factors:
        fits = ", ".join(f"{g} {'prior' if v is None else f'{v:.3f}'}" for g, v in f.without_group.items())
        in_sample = "none" if f.in_sample_fit is None else f"{f.in_sample_fit:.3f}"
        lines.append(f"  factor {f.name}: shipped {f.shipped:.3f}, fit on all {in_sample}; without each {h.group}: "
                     f"{fits}")
    return lines


def run_validate(args: Namespace) -> int:
    # the ranges the flags accept (--batch, --prompt, --output, --tp, --pp) apply to every row: a row outside them is
    # skipped with the reason, so an absurd figure (output 1e11) never reaches the model or the summary
    rows, skipped = read_measurements(Path(args.file), check=check_number, build=scenario_from_values)
    if not rows:
        raise ValueError(f"{args.file}: no row could be evaluated")
    engine = getattr(args, "engine", None)
    if args.format == "markdown":
        print(markdown_report(score(rows, engine=engine, holdout="both"), engine=engine), end="")
        return 0
    holdout = getattr(args, "holdout", None)
    s = score(rows, engine=engine, holdout=holdout)
    by_family: dict[str, list[RowResult]] = defaultdict(list)
    by_metric: dict[str, list[RowResult]] = defaultdict(list)
    for row, result in zip(s.rows, s.results, strict=True):
        by_family[row.family].append(result)
        by_metric[result.metric].append(result)
    summary = summarize(s.results) if s.results else None
    engine_notes = [] if engine else _engine_notes(s.rows)
    if args.format == "json":
        out: dict[str, Any] = {
            "schema_version": VALIDATE_SCHEMA_VERSION,
            "engine_override": engine,
            "summary": summary.as_dict() if summary else None,
            "by_family": {k: summarize(v).as_dict() for k, v in sorted(by_family.items())},
            "by_metric": {k: summarize(v).as_dict() for k, v in sorted(by_metric.items())},
            "rows": [{"id": r.id, "family": row.family, "engine": engine or row.scenario.engine, "metric": r.metric,
                      **_row_json(r)}
                     for row, r in zip(s.rows, s.results, strict=True)],
            "skipped": [{"id": k.id, "line": k.line, "reason": k.reason} for k in skipped],
            "memory_flagged": [{"id": row.id, "reason": reason} for row, reason in s.flagged],
            "serving": {**_serving_summary(s.serving_scored),
                        "rows": [{"id": r.id, "family": row.family, "engine": engine or row.scenario.engine,
                                  "metric": r.metric, "concurrency": row.concurrency, "rate": row.rate_per_s,
                                  **_row_json(r)}
                                 for row, r in s.serving_scored]},
            "serving_not_scored": [{"id": row.id, "concurrency": row.concurrency, "reason": reason}
                                   for row, reason in s.serving_flagged],
            "context_flagged": [{"id": row.id, "reason": reason} for row, reason in s.context_flagged],
            "engine_notes": engine_notes,
        }
        if "family" in s.holdouts:
            out["holdout"] = _holdout_dict(s.holdouts["family"])
        if "source" in s.holdouts:
            out["holdout_source"] = _holdout_dict(s.holdouts["source"])
        if holdout and s.serving_scored:
            out["serving"]["holdout_note"] = serving_holdout_note(s.serving_scored, engine)
        print(json.dumps(out, indent=2))
        return 0
    header = (f"{'id':8} {'metric':30} {'measured':>10} {'expected':>10} {'expected band':>21} {'bound':>10} "
              f"{'error':>7}  bound held, in band")
    print(header)
    for r in s.results:
        print(_row_text(r))
    print()
    if summary is not None:
        print(_line("all", summary))
    for family, group in sorted(by_family.items()):
        print(_line(f"  source {family}", summarize(group)))
    for metric, group in sorted(by_metric.items()):
        print(_line(f"  metric {metric}", summarize(group)))
    for report in s.holdouts.values():
        print()
        print("\n".join(_holdout_lines(report)))
    for row, reason in s.flagged:
        print(f"left out {row.id}: {reason}")
    if s.serving_scored:
        print()
        print("serving rows (continuous batching, models/serving/, at each row's concurrency or rate):")
        for _row, r in s.serving_scored:
            print(_row_text(r))
        scored = [r for _, r in s.serving_scored]
        print(_line("serving all", summarize(scored)))
        for key in ("family", "metric"):
            groups: dict[str, list[RowResult]] = defaultdict(list)
            for row, r in s.serving_scored:
                groups[row.family if key == "family" else r.metric].append(r)
            for name, group in sorted(groups.items()):
                print(_line(f"  serving {key} {name}", summarize(group)))
        if holdout:
            print(f"  serving holdout: {serving_holdout_note(s.serving_scored, engine)}")
    for row, reason in s.serving_flagged:
        print(f"left out serving {row.id}: {reason}")
    for row, reason in s.context_flagged:
        print(f"left out (context) {row.id}: {reason}")
    for note in engine_notes:
        print(f"note: {note}")
    for k in skipped:
        print(f"skipped {k.id} (line {k.line}): {k.reason}")
    return 0
