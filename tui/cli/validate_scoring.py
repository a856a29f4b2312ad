"""Scoring for ``roofline validate``: which rows are scored, by which model, and which are left out and why.

Static rows (no concurrency) by the static-batch estimate, serving rows by the continuous-batching model; rows past
the model's maximum context, rows that do not fit in memory as stated and serving points that do not fit the KV
blocks are set apart with the reason. Leave-one-family-out and leave-one-source-out reports for the static rows
(:func:`models.validation.leave_one_group_out`). The command (validate.py) and the markdown tables
(validate_report.py) read what this returns.
"""

from __future__ import annotations

import dataclasses

from roofline.models.validation import (
    HoldoutReport,
    RowResult,
    ValidationCase,
    context_flag,
    evaluate,
    evaluate_serving,
    leave_one_group_out,
    memory_flags,
    serving_factor_rows,
    source_of,
    with_band,
    with_serving_band,
)
from roofline.presets.measurements import MeasurementRow


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Scored:
    """What ``validate`` made of a file: the scored rows and results, and what it left out and why."""

    rows: list[MeasurementRow]
    results: list[RowResult]
    flagged: list[tuple[MeasurementRow, str]]
    serving: list[MeasurementRow]
    holdout: HoldoutReport | None
    serving_scored: list[tuple[MeasurementRow, RowResult]] = dataclasses.field(default_factory=list)
    serving_flagged: list[tuple[MeasurementRow, str]] = dataclasses.field(default_factory=list)
    # group ("family", "source") -> the static rows' leave-one-group-out report; ``holdout`` is the first of them
    holdouts: dict[str, HoldoutReport] = dataclasses.field(default_factory=dict)
    # rows past the model's maximum context (static and serving), with the reason: scored with nothing else
    context_flagged: list[tuple[MeasurementRow, str]] = dataclasses.field(default_factory=list)


HOLDOUT_GROUPS = {"family": ("family",), "source": ("source",), "both": ("family", "source")}


def _case(row: MeasurementRow, engine: str | None) -> ValidationCase:
    scenario = row.scenario if engine is None else dataclasses.replace(row.scenario, engine=engine)
    return ValidationCase(id=row.id, family=row.family, scenario=scenario, metric=row.metric, measured=row.value,
                          source=source_of(row.source))


def row_source(row: MeasurementRow) -> str:
    """The document a row cites (its leave-one-source-out group; the family where the row cites none)."""
    return source_of(row.source) or row.family


def score(rows: list[MeasurementRow], *, engine: str | None = None, holdout: str | None = None) -> Scored:
    """Score the static-batch rows that fit in memory (with ``engine`` for all when given); flag the rest. Rows
    past the model's maximum context are flagged first and scored with nothing. ``holdout``: ``family``,
    ``source`` or ``both`` (:data:`HOLDOUT_GROUPS`)."""
    if holdout is not None and holdout not in HOLDOUT_GROUPS:
        raise ValueError(f"holdout: {holdout!r} is not one of {', '.join(HOLDOUT_GROUPS)}")
    context = [(r, why) for r in rows if (why := context_flag(r.scenario)) is not None]
    past = {r.id for r, _ in context}
    static = [r for r in rows if not r.is_serving and r.id not in past]
    serving = [r for r in rows if r.is_serving and r.id not in past]
    cases = [_case(r, engine) for r in static]
    reasons = {flag.id: flag.reason for flag in memory_flags(cases)}
    kept = [(r, c) for r, c in zip(static, cases, strict=True) if r.id not in reasons]
    flagged = [(r, reasons[r.id]) for r in static if r.id in reasons]
    if not kept and not serving:
        raise ValueError("no row could be scored (every row was skipped or flagged)")
    groups = HOLDOUT_GROUPS[holdout] if holdout is not None and kept else ()
    holdouts = {g: leave_one_group_out([c for _, c in kept], g) for g in groups}
    report = holdouts[groups[0]] if groups else None
    results = (report.in_sample if report is not None
               else [evaluate(c.id, c.scenario, c.metric, c.measured) for _, c in kept])
    results = [with_band(r, c.scenario) for r, (_, c) in zip(results, kept, strict=True)]
    serving_scored, serving_flagged = score_serving(serving, engine=engine)
    return Scored(rows=[r for r, _ in kept], results=results, flagged=flagged, serving=serving, holdout=report,
                  serving_scored=serving_scored, serving_flagged=serving_flagged, holdouts=holdouts,
                  context_flagged=context)


def serving_holdout_note(scored: list[tuple[MeasurementRow, RowResult]], engine: str | None = None) -> str:
    """What leave-one-out means for the serving rows: nothing the serving model uses is fitted to them unless a
    row depends on a fitted weight-only factor (those are named, since serving/ takes no refitted ceilings)."""
    dependent = serving_factor_rows([_case(row, engine) for row, _ in scored])
    if not dependent:
        return ("no fitted factor applies to the serving rows: leave-one-family-out and leave-one-source-out equal "
                "in-sample (nothing refitted)")
    return (f"{len(dependent)} serving row(s) use a fitted weight-only factor ({', '.join(dependent[:6])}"
            f"{', ...' if len(dependent) > 6 else ''}), fitted on the development set's gpt-fast rows, none of "
            f"them serving rows: those rows are held out from it already, and scored with the shipped factor")


def score_serving(rows: list[MeasurementRow], *, engine: str | None = None
                  ) -> tuple[list[tuple[MeasurementRow, RowResult]], list[tuple[MeasurementRow, str]]]:
    """Serving rows scored by the continuous-batching model (:func:`models.validation.evaluate_serving`); a row
    whose concurrency does not fit the KV blocks, or whose rate the replica cannot carry, is left out with why."""
    scored, flagged = [], []
    for row in rows:
        scenario = row.scenario if engine is None else dataclasses.replace(row.scenario, engine=engine)
        result, fits = evaluate_serving(row.id, scenario, row.metric, row.value, row.concurrency or 1,
                                        row.rate_per_s)
        if fits:
            scored.append((row, with_serving_band(result, scenario, row.concurrency or 1, row.rate_per_s)))
        else:
            what = f"rate {row.rate_per_s:g}/s" if row.rate_per_s is not None else f"concurrency {row.concurrency}"
            flagged.append((row, f"{what} does not fit one replica's KV blocks or capacity in the serving model"))
    return scored, flagged
