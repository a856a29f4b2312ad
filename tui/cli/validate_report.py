"""``roofline validate FILE --format markdown``: the README's accuracy tables from one scored file.

Static rows: in-sample, leave-one-family-out and leave-one-source-out side by side (overall and per source
document), since those are where fitted factors could flatter the figures. Serving rows: per metric and per source
(nothing the serving model uses is fitted to them unless the note says so; validate.serving_holdout_note). A
coverage table per source family names the engines and devices each family covers and its median error. Figures are
percentages of |expected - measured| / measured rounded to 0.1; the README pastes this output verbatim and a slow
test (tests/cli/test_validate_readme.py) checks it against a fresh run.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from roofline.models.validation import RowResult, summarize
from roofline.presets.measurements import MeasurementRow

from .validate_scoring import Scored, row_source, serving_holdout_note

SERVING_METRIC_LABELS = {"ttft_s": "TTFT", "itl_s": "ITL", "output_tokens_per_s_per_device": "tok/s per device",
                         "saturated_output_tokens_per_s_per_device": "saturated tok/s per device"}


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _median(results: list[RowResult]) -> float | None:
    return float(np.median(np.abs([r.expected_error for r in results]))) if results else None


def _cell(text: str) -> str:
    """Text from a file, safe inside a markdown table cell."""
    return " ".join(text.replace("|", "/").split())


def _doc(source: str) -> str:
    return _cell(source.removeprefix("github:"))


def _engines(rows: list[MeasurementRow], engine: str | None) -> str:
    return ", ".join(sorted({engine or r.stated_engine for r in rows}))


def _devices(rows: list[MeasurementRow]) -> str:
    return ", ".join(sorted({r.scenario.hardware.id for r in rows}))


def _summary_row(label: str, results: list[RowResult]) -> str:
    s = summarize(results)
    band = "-" if s.band_coverage is None else _pct(s.band_coverage)
    return (f"| {label} | {s.rows} | {_pct(s.median_abs_error)} | {_pct(s.p80_abs_error)} | "
            f"{_pct(s.bound_held_share)} | {band} |")


def _static_tables(s: Scored, engine: str | None) -> list[str]:
    family, source = s.holdouts["family"], s.holdouts["source"]
    banded = s.results  # in-sample with the band (with_band); the holdouts move expected only
    out = [f"Static rows: {len(s.results)} scored; left out: {len(s.flagged)} that do not fit in memory as stated, "
           f"{sum(not r.is_serving for r, _ in s.context_flagged)} past the model's maximum context.", "",
           "| expected's factors | rows | median abs error % | p80 % | bound held % | in band % |",
           "| --- | --- | --- | --- | --- | --- |",
           _summary_row("in-sample (shipped)", banded),
           _summary_row("leave-one-family-out", family.held_out),
           _summary_row("leave-one-source-out", source.held_out), "",
           f"Leave-one-family-out: {family.note}. Leave-one-source-out: {source.note}.", "",
           "| family | source | rows | engines | devices | median % in-sample | LOFO | LOSO | p80 % in-sample | "
           "bound held % | in band % |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, row in enumerate(s.rows):
        groups[(row.family, row_source(row))].append(i)
    for (fam, doc), idx in sorted(groups.items()):
        rows = [s.rows[i] for i in idx]
        inside = summarize([banded[i] for i in idx])
        band = "-" if inside.band_coverage is None else _pct(inside.band_coverage)
        out.append(f"| {_cell(fam)} | {_doc(doc)} | {len(idx)} | {_engines(rows, engine)} | "
                   f"{_devices(rows)} | {_pct(inside.median_abs_error)} | "
                   f"{_pct(_median([family.held_out[i] for i in idx]))} | "
                   f"{_pct(_median([source.held_out[i] for i in idx]))} | {_pct(inside.p80_abs_error)} | "
                   f"{_pct(inside.bound_held_share)} | {band} |")
    return out


def _serving_tables(s: Scored, engine: str | None) -> list[str]:
    scored = s.serving_scored
    results = [r for _, r in scored]
    out = [f"Serving rows: {len(scored)} scored; left out: {len(s.serving_flagged)} whose concurrency does not fit "
           f"the serving model's KV blocks, {sum(r.is_serving for r, _ in s.context_flagged)} past the model's "
           f"maximum context. {serving_holdout_note(scored, engine)[0].upper()}"
           f"{serving_holdout_note(scored, engine)[1:]}.", "",
           "| metric | rows | median abs error % | p80 % | bound held % | in band % |",
           "| --- | --- | --- | --- | --- | --- |", _summary_row("all", results)]
    by_metric: dict[str, list[RowResult]] = defaultdict(list)
    for r in results:
        by_metric[r.metric].append(r)
    for metric in SERVING_METRIC_LABELS:
        if by_metric.get(metric):
            out.append(_summary_row(SERVING_METRIC_LABELS[metric], by_metric[metric]))
    out += ["", "| family | source | rows | engines | devices | median % | TTFT | ITL | tok/s | saturated tok/s | "
            "bound held % | in band % |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    groups: dict[tuple[str, str], list[tuple[MeasurementRow, RowResult]]] = defaultdict(list)
    for row, r in scored:
        groups[(row.family, row_source(row))].append((row, r))
    for (fam, doc), pairs in sorted(groups.items()):
        rows, rs = [p[0] for p in pairs], [p[1] for p in pairs]
        inside = summarize(rs)
        band = "-" if inside.band_coverage is None else _pct(inside.band_coverage)
        per = [_pct(_median([r for r in rs if r.metric == m])) for m in SERVING_METRIC_LABELS]
        out.append(f"| {_cell(fam)} | {_doc(doc)} | {len(rs)} | {_engines(rows, engine)} | "
                   f"{_devices(rows)} | {_pct(inside.median_abs_error)} | {' | '.join(per)} | "
                   f"{_pct(inside.bound_held_share)} | {band} |")
    return out


def markdown_report(s: Scored, *, engine: str | None = None) -> str:
    """The tables for the rows ``s`` scored with ``holdout='both'`` (static and serving parts as present)."""
    parts: list[str] = []
    if s.results:
        parts += _static_tables(s, engine)
    if s.serving_scored:
        parts += ([""] if parts else []) + _serving_tables(s, engine)
    for row, reason in s.context_flagged:
        parts.append(f"- left out (context) {_cell(row.id)}: {_cell(reason)}")
    return "\n".join(parts) + "\n"
