"""Serving numbers and the frontier for a slide, from its scenario and serving inputs (no Textual here).

A slide with ``view = "serving"`` or a ``serving_*`` number runs the continuous-batching model
(:mod:`roofline.models.serving`) on the slide's scenario at its ``concurrency`` (and targets), under ``expected``:
the serving question is about a real engine, so these numbers say "expected" in their labels.
"""

from __future__ import annotations

from roofline.tui.views.results import ExplorerResults
from roofline.tui.views.serving_data import ServingResults, chart_data, serving_results, serving_settings

SERVING_ESTIMATE = "expected"
SERVING_LABELS = {
    "serving_tokens_per_s_per_user": "tok/s per user, serving",
    "serving_tokens_per_s_per_device": "tok/s per device, serving",
    "serving_itl_ms": "ITL ms, serving",
    "serving_users_at_targets": "users at the targets",
}


def slide_serving_results(form, results: ExplorerResults) -> ServingResults:
    return serving_results(results.scenario, serving_settings(form, results.scenario), SERVING_ESTIMATE)


def serving_value(name: str, form, results: ExplorerResults) -> tuple[str, str]:
    """(label, value) of a serving number at the slide's concurrency (expected)."""
    r = slide_serving_results(form, results)
    label = SERVING_LABELS[name]
    if name == "serving_tokens_per_s_per_user":
        return label, f"{r.point.tokens_per_s_per_user:,.1f}"
    if name == "serving_tokens_per_s_per_device":
        return label, f"{r.point.tokens_per_s_per_device:,.0f}"
    if name == "serving_itl_ms":
        return label, f"{r.point.itl_s * 1e3:,.1f}"
    return label, f"{r.targets.max_concurrency:,}"


def slide_scenario_line(slide, form, results: ExplorerResults) -> str:
    """The talk footer's scenario line: a serving slide (its view or a serving number) names its operating point and
    ``expected``, as its chart and numbers do; any other names its static batch under ``bound``."""
    from roofline.tui.views.summary import scenario_summary

    if not (slide.view == "serving" or any(name in SERVING_LABELS for name in slide.numbers)):
        return scenario_summary(results.scenario, "bound")
    operating = f"C={form.concurrency:,}" if form.rate_per_s is None else f"{form.rate_per_s:,.3g} req/s"
    return scenario_summary(results.scenario, SERVING_ESTIMATE, operating)


def serving_chart_args(form, results: ExplorerResults) -> tuple:
    return (chart_data(slide_serving_results(form, results)),)
