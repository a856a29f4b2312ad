"""What the Serving view, the serving-mode headline and Compare's serving columns show (no Textual, no plotext).

The serving inputs (the input registry's ``SERVING_INPUTS``) say how a continuous-batching engine serves the
scenario's model on its devices; every number comes from :mod:`roofline.models.serving`:

- the frontier (:func:`~roofline.models.serving.frontier`) over concurrencies from 1 to twice the memory limit (the
  points past it are drawn apart: they do not fit);
- the operating point: the frontier at the chosen concurrency, or :func:`~roofline.models.serving.at_rate` when a
  rate is set (one replica of the scenario's TP x PP devices);
- the targets: :func:`~roofline.models.serving.max_concurrency_for_targets` (ITL and TTFT) and, with a rate,
  :func:`~roofline.models.serving.devices_for_rate`;
- $ and J per million output tokens at the targets' point, at the device's own price (``price_usd_per_hour``) or the
  form's override, and its board power (a ceiling).

A concurrency change re-evaluates the operating point only: the curve, the targets and the devices for the rate are
kept in a :class:`ServingMemo` (a frontier is about 2 ms, the targets about 5 ms, the devices for a rate about 25 ms).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from roofline.models.scenario import Scenario
from roofline.models.serving import (
    DevicePlan,
    Frontier,
    FrontierPoint,
    ServingMix,
    ServingOptions,
    Speculation,
    TargetResult,
    at_rate,
    devices_for_rate,
    frontier,
    kv_cache_plan,
    max_concurrency_for_targets,
)
from roofline.tui.inputs.form import model_kwargs
from roofline.tui.views.chart_series import decade_ticks
from roofline.tui.views.formatting import duration, gib, si

CURVE_POINTS = 48  # concurrencies on the frontier curve (geometric, whole numbers, the memory limit among them)
# headline metric id -> its label in serving mode (the static labels are the Headline's own)
SERVING_LABELS = {"m-per-seq": "tok/s per user", "m-aggregate": "tok/s per device", "m-idle": "ITL ms",
                  "m-ttft": "TTFT ms"}
COMPARE_COLUMNS = ("users/dev @T", "devs @rate", "$/Mtok @T", "J/Mtok @T")


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingSettings:
    """The serving inputs in model units: the operating point (a concurrency, or a rate when set), the targets,
    the request mix and the engine options."""

    concurrency: int
    rate_per_s: float | None
    itl_target_s: float
    ttft_target_s: float
    mix: ServingMix
    options: ServingOptions
    in_use: bool = True  # False: the explorer's serving mode is off (its numbers are the static batch's)


def serving_settings(form: Any, scenario: Scenario) -> ServingSettings:
    """The settings of a :class:`~roofline.tui.inputs.form.ScenarioForm` for its scenario: the mix takes the
    scenario's prompt and output tokens; ``spec_tokens`` 0 is no speculation (else one MTP layer drafts); the
    price is the form's override, else (None) the device's own. A bad combination raises ModelInputError."""
    b = scenario.batching
    spec = (Speculation(tokens=form.spec_tokens, acceptance=form.spec_acceptance) if form.spec_tokens > 0 else None)
    return ServingSettings(
        concurrency=form.concurrency, rate_per_s=form.rate_per_s, itl_target_s=form.itl_target_ms / 1e3,
        ttft_target_s=form.ttft_target_ms / 1e3,
        mix=ServingMix(prompt_tokens=b.prompt_tokens, output_tokens=b.output_tokens,
                       **model_kwargs(form, "ServingMix")),  # prefix tokens and hit rate (the input registry's)
        options=ServingOptions(**model_kwargs(form, "ServingOptions"), speculation=spec))  # price, arrivals, ...


def for_scenario(settings: ServingSettings, scenario: Scenario, *, own_price: bool) -> ServingSettings:
    """The same settings for another scenario (a baseline, a device in Compare): its own prompt and output tokens;
    ``own_price``: the device's preset price rather than the form's override."""
    b = scenario.batching
    mix = replace(settings.mix, prompt_tokens=b.prompt_tokens, output_tokens=b.output_tokens,
                  prefix_tokens=min(settings.mix.prefix_tokens, b.prompt_tokens))
    options = replace(settings.options, price_usd_per_hour=None) if own_price else settings.options
    return replace(settings, mix=mix, options=options)


class ServingMemo:
    """The last few results, found by equality (a scenario holds dicts, so it cannot be hashed)."""

    def __init__(self, size: int = 16) -> None:
        self._items: list[tuple[tuple, Any]] = []
        self._size = size

    def get(self, key: tuple, make: Callable[[], Any]) -> Any:
        for i, (k, value) in enumerate(self._items):
            if k == key:
                if i:
                    self._items.insert(0, self._items.pop(i))
                return value
        value = make()
        self._items.insert(0, (key, value))
        del self._items[self._size:]
        return value


def curve_concurrencies(max_concurrency: int, concurrency: int, points: int = CURVE_POINTS) -> list[int]:
    """Whole concurrencies from 1 to max(2 x the memory limit, the chosen one, 2), geometric, with the memory limit
    itself (the last point that fits) among them."""
    top = max(2 * max_concurrency, concurrency, 2)
    values = {int(v) for v in np.unique(np.round(np.geomspace(1, top, points)))}
    if max_concurrency >= 1:
        values.add(max_concurrency)
    return sorted(values)


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingResults:
    """Everything the serving mode shows for one scenario and one estimate."""

    estimate_name: str
    settings: ServingSettings
    curve: Frontier
    point: FrontierPoint  # the operating point (one replica)
    targets: TargetResult
    devices: DevicePlan | None  # None: no rate set, or no TP degree meets the targets
    baseline_curve: Frontier | None = None
    baseline_point: FrontierPoint | None = None

    @property
    def max_concurrency(self) -> int:
        """Whole requests the KV blocks hold (the memory limit; 0: not one fits)."""
        return self.curve.memory.max_concurrency

    @property
    def limit_point(self) -> FrontierPoint | None:
        """The frontier at the memory limit (None when not one request fits)."""
        return next((p for p in self.curve.points if p.concurrency == self.max_concurrency), None)


def _point(scenario: Scenario, s: ServingSettings, estimate_name: str) -> FrontierPoint:
    if s.rate_per_s is not None:
        return at_rate(scenario, s.mix, s.rate_per_s, estimate_name, s.options)
    return frontier(scenario, s.mix, [s.concurrency], estimate_name, s.options).points[0]


def _curve(scenario: Scenario, s: ServingSettings, estimate_name: str) -> Frontier:
    limit = kv_cache_plan(scenario, s.mix, s.options).max_concurrency
    return frontier(scenario, s.mix, curve_concurrencies(limit, s.concurrency), estimate_name, s.options)


def serving_results(scenario: Scenario, settings: ServingSettings, estimate_name: str,
                    baseline: Scenario | None = None, memo: ServingMemo | None = None) -> ServingResults:
    """The serving numbers of ``scenario`` (and the pinned ``baseline``'s curve and point under the same settings,
    at its own prompt and output tokens); ``memo`` keeps what a concurrency or rate change does not alter."""
    memo = memo or ServingMemo()
    s = settings
    base = (scenario, s.mix, s.options, estimate_name)
    limit = memo.get(("limit", scenario, s.mix, s.options),
                     lambda: kv_cache_plan(scenario, s.mix, s.options)).max_concurrency
    reach = s.concurrency if s.concurrency > 2 * max(limit, 1) else 0  # the grid reaches a concurrency beyond it
    curve = memo.get(("curve", *base, reach), lambda: _curve(scenario, s, estimate_name))
    targets = memo.get(("targets", *base, s.itl_target_s, s.ttft_target_s), lambda: max_concurrency_for_targets(
        scenario, s.mix, itl_s=s.itl_target_s, ttft_s=s.ttft_target_s, estimate_name=estimate_name,
        options=s.options))
    devices = None
    if s.rate_per_s is not None:
        devices = memo.get(("devices", *base, s.itl_target_s, s.ttft_target_s, s.rate_per_s), lambda: devices_for_rate(
            scenario, s.mix, s.rate_per_s, itl_s=s.itl_target_s, ttft_s=s.ttft_target_s, estimate_name=estimate_name,
            options=s.options))
    point = _point(scenario, s, estimate_name)
    baseline_curve = baseline_point = None
    if baseline is not None and baseline != scenario:
        bs = for_scenario(s, baseline, own_price=True)
        baseline_curve = memo.get(("curve", baseline, bs.mix, bs.options, estimate_name, 0),
                                  lambda: _curve(baseline, replace(bs, concurrency=1), estimate_name))
        baseline_point = _point(baseline, bs, estimate_name)
    return ServingResults(estimate_name=estimate_name, settings=s, curve=curve, point=point, targets=targets,
                          devices=devices, baseline_curve=baseline_curve, baseline_point=baseline_point)


# ---- text ------------------------------------------------------------------------------------------------------


def _ms(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "inf"
    return f"{seconds * 1e3:,.1f}" if seconds < 10 else f"{seconds:,.1f} s"


UNBOUNDED_TTFT = "unbounded (queue grows)"  # past what the replica carries: the queue grows without bound


def headline_values(point: FrontierPoint) -> dict[str, tuple[float, str]]:
    """Headline metric id -> (value, exact text) at the operating point (labels: :data:`SERVING_LABELS`)."""
    per_user, per_device = point.tokens_per_s_per_user, point.tokens_per_s_per_device
    ttft = point.ttft_s * 1e3 if math.isfinite(point.ttft_s) else math.inf
    return {
        "m-per-seq": (per_user, f"{per_user:,.1f}"),
        "m-aggregate": (per_device, f"{per_device:,.1f}" if per_device < 1000 else f"{per_device:,.0f}"),
        "m-idle": (point.itl_s * 1e3, _ms(point.itl_s)),
        "m-ttft": (ttft, _ms(point.ttft_s) if math.isfinite(point.ttft_s) else UNBOUNDED_TTFT),
    }


def _latency(seconds: float) -> str:
    """50 ms, 1 s: a target as a person typed it (4 significant figures)."""
    return f"{seconds * 1e3:,.4g} ms" if seconds < 1 else f"{seconds:,.4g} s"


def targets_text(s: ServingSettings) -> str:
    return f"ITL <= {_latency(s.itl_target_s)}, TTFT <= {_latency(s.ttft_target_s)}"


def operating_text(r: ServingResults) -> str:
    """Where the operating point is: ``C=16`` or ``2.5 req/s (C=14.2)``."""
    p = r.point
    if r.settings.rate_per_s is None:
        return f"C={r.settings.concurrency:,}"
    conc = f"C={p.concurrency:,.1f}" if math.isfinite(p.concurrency) else "over capacity"
    return f"{r.settings.rate_per_s:,.3g} req/s ({conc})"


def verdict_markup(r: ServingResults, ceiling_label: str) -> str:
    """The verdict line in serving mode (Rich markup; numbers only, no user text)."""
    p, s = r.point, r.settings
    meets = p.itl_s <= s.itl_target_s and p.ttft_s <= s.ttft_target_s
    misses = [name for name, ok in (("ITL", p.itl_s <= s.itl_target_s), ("TTFT", p.ttft_s <= s.ttft_target_s))
              if not ok]
    verdict = "meets the targets" if meets else f"misses the {' and '.join(misses)} target"
    waiting = p.concurrency - p.decoding_requests
    queue = f", {waiting:,.1f} waiting" if math.isfinite(waiting) and waiting > 0.05 else ""
    return (f"[b]{ceiling_label}[/b], serving at {operating_text(r)} ({arrivals_text(p)}): "
            f"{p.decoding_requests:,.1f} decoding{queue}, step {duration(p.step_time_s)}, "
            f"[b]{p.limited_by}-bound[/b]; {verdict} ({targets_text(s)})")


ARRIVAL_WORDS = {"closed": "closed loop", "poisson": "Poisson arrivals"}


def arrivals_text(point: FrontierPoint) -> str:
    """The arrival model behind a point's TTFT and ITL, and the fixed path per request in its TTFT."""
    words = ARRIVAL_WORDS.get(point.arrivals, point.arrivals)
    if not point.request_overhead_s:
        return words
    return f"{words}, {duration(point.request_overhead_s)} per request in TTFT"


def memory_line(r: ServingResults) -> tuple[float, str]:
    """(share of the KV blocks the operating point holds, the memory bar's text after the bar)."""
    m = r.curve.memory
    held = r.point.concurrency
    share = held / m.max_concurrency if m.max_concurrency else 1.0
    if m.max_concurrency < 1:
        return 1.0, (f"KV blocks/device: DOES NOT FIT: {gib(m.kv_available_bytes)} left for the KV cache holds "
                     "not one request")
    fits = "fits" if r.point.fits else "DOES NOT FIT: more requests than the KV blocks hold"
    return min(share, 1.0), (f"{m.num_blocks:,} blocks of {m.block_size_tokens} tokens ({gib(m.kv_available_bytes)}) "
                             f"hold {m.max_concurrency:,} requests; {fits}")


def _joules_per_mtok(point: FrontierPoint | None) -> str:
    return "-" if point is None or point.joules_per_token is None else si(point.joules_per_token * 1e6, "J")


def _usd_per_mtok(point: FrontierPoint | None) -> str:
    return "-" if point is None or point.usd_per_million_tokens is None else f"${point.usd_per_million_tokens:,.2f}"


def devices_text(r: ServingResults) -> str:
    s = r.settings
    if s.rate_per_s is None:
        return "no rate set"
    d = r.devices
    if d is None:
        return f"{s.rate_per_s:,.3g} req/s: no TP degree of 1-8 meets the targets"
    return (f"{s.rate_per_s:,.3g} req/s: {d.devices:,} device{'s' if d.devices > 1 else ''} "
            f"({d.replicas:,} x TP{d.tp})"
            + (f", ${d.usd_per_hour:,.2f}/h" if d.usd_per_hour is not None else ""))


def summary_line(r: ServingResults) -> str:
    """Below the chart: the targets' concurrency, the devices for the rate, $ and J per million output tokens."""
    t, devices = r.targets, r.curve.devices
    if t.max_concurrency == 0:
        at_targets = f"targets ({targets_text(r.settings)}) missed even at 1 request"
    else:
        per_device = t.max_concurrency / devices
        at_targets = (f"targets ({targets_text(r.settings)}): up to C={t.max_concurrency:,}, "
                      f"{per_device:,.3g} users/device")
    return (f"{at_targets} | {devices_text(r)} | at the targets: {_usd_per_mtok(t.point)} and "
            f"{_joules_per_mtok(t.point)} per Mtok | memory holds {r.max_concurrency:,} requests")


def compare_cells(scenario: Scenario, settings: ServingSettings, estimate_name: str,
                  memo: ServingMemo | None = None) -> tuple[str, str, str, str]:
    """Compare's serving columns (:data:`COMPARE_COLUMNS`) for one device: users per device at the targets, the
    devices for the rate, $ and J per million output tokens at the targets; no numbers where not one request
    fits."""
    memo = memo or ServingMemo()
    s = settings
    plan = memo.get(("limit", scenario, s.mix, s.options), lambda: kv_cache_plan(scenario, s.mix, s.options))
    if plan.max_concurrency < 1:
        return ("-", "-", "-", "-")
    base = (scenario, s.mix, s.options, estimate_name, s.itl_target_s, s.ttft_target_s)
    t = memo.get(("targets", *base), lambda: max_concurrency_for_targets(
        scenario, s.mix, itl_s=s.itl_target_s, ttft_s=s.ttft_target_s, estimate_name=estimate_name,
        options=s.options))
    devices = "-"
    if s.rate_per_s is not None:
        d = memo.get(("devices", *base, s.rate_per_s), lambda: devices_for_rate(
            scenario, s.mix, s.rate_per_s, itl_s=s.itl_target_s, ttft_s=s.ttft_target_s,
            estimate_name=estimate_name, options=s.options))
        devices = "none" if d is None else f"{d.devices:,} ({d.replicas:,}xTP{d.tp})"
    users = f"{t.max_concurrency / scenario.parallelism.devices:,.3g}"
    return (users, devices, _usd_per_mtok(t.point), _joules_per_mtok(t.point))


# ---- chart ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingChartData:
    """The frontier chart in log10 units: x = output tokens/s per device, y = tokens/s per user."""

    fits_xy: tuple[list[float], list[float]]
    beyond_xy: tuple[list[float], list[float]]  # past the memory limit
    baseline_xy: tuple[list[float], list[float]] | None
    point_xy: tuple[float, float]
    point_label: str
    limit_xy: tuple[float, float] | None
    limit_label: str
    targets_xy: tuple[float, float] | None
    targets_label: str
    itl_target_y: float
    x_ticks: tuple[list[float], list[str]]
    y_ticks: tuple[list[float], list[str]]
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    title: str
    # the running engine's last minute (its last point is the live point) and the --measured runs, in the same units
    # (views/live_engine.py: with_engine_series); None: none
    engine_xy: tuple[list[float], list[float]] | None = None
    measured_xy: tuple[list[float], list[float]] | None = None


def _xy(points) -> tuple[list[float], list[float]]:
    return ([math.log10(p.tokens_per_s_per_device) for p in points],
            [math.log10(p.tokens_per_s_per_user) for p in points])


def chart_data(r: ServingResults) -> ServingChartData:
    fits = [p for p in r.curve.points if p.fits]
    beyond = [p for p in r.curve.points if not p.fits]
    baseline = _xy(r.baseline_curve.points) if r.baseline_curve is not None else None
    point = _xy([r.point])
    limit = r.limit_point
    t = r.targets.point
    itl_y = math.log10(1.0 / r.settings.itl_target_s)
    xs = [*_xy(r.curve.points)[0], point[0][0], *(baseline[0] if baseline else [])]
    ys = [*_xy(r.curve.points)[1], point[1][0], itl_y, *(baseline[1] if baseline else [])]
    x_low, x_high = math.floor(min(xs)), math.ceil(max(xs))
    y_low, y_high = math.floor(min(ys)), math.ceil(max(ys))
    x_high, y_high = max(x_high, x_low + 1), max(y_high, y_low + 1)
    return ServingChartData(
        fits_xy=_xy(fits), beyond_xy=_xy(beyond), baseline_xy=baseline,
        point_xy=(point[0][0], point[1][0]),
        point_label=f"here, {operating_text(r)}" if r.settings.in_use else f"{operating_text(r)} (serving mode off)",
        limit_xy=None if limit is None else (_xy([limit])[0][0], _xy([limit])[1][0]),
        limit_label=f"memory limit C={r.max_concurrency:,}",
        targets_xy=None if t is None else (math.log10(t.tokens_per_s_per_device), math.log10(t.tokens_per_s_per_user)),
        targets_label=f"targets met to C={r.targets.max_concurrency:,}",
        itl_target_y=itl_y, x_ticks=decade_ticks(x_low, x_high), y_ticks=decade_ticks(y_low, y_high),
        x_range=(x_low, x_high), y_range=(y_low, y_high + 0.15 * (y_high - y_low)),
        title=f"serving frontier ({r.estimate_name}): tok/s per user against tok/s per device, "
              f"C=1..{r.curve.points[-1].concurrency:,.0f}")
