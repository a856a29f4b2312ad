"""What the Serving view says about the real engine: the live point's one-line verdict, its table rows, its trail
and the measured points of benchmark files, as plain data and text (no Textual).

The verdict reads the live point against the modelled frontier of the explorer's scenario at the live concurrency:
``C=48 running, 63 % of the expected frontier's tokens/s at this concurrency, ITL 31 ms against the 50 ms target``.
Tokens/s compare per device: the engine's output tokens/s over the window / the scenario's TP x PP devices against
the frontier's ``tokens_per_s_per_device`` (:func:`roofline.models.serving.frontier`) at the running requests' mean
over the window, rounded. An engine that stopped answering shows as ``no answer since 12 s``, never as the numbers
it last gave. All text here is plain: a widget shows it as Rich ``Text`` (a model name could hold ``[``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from roofline.presets.bench_files import BenchRun
from roofline.tui.probe.engine_metrics import POLL_INTERVAL_S, EngineStatus, LivePoint

# silent for more than this: the numbers are stale and are not shown (three missed polls)
STALE_AFTER_S = 3 * POLL_INTERVAL_S + 0.5


def _ms(seconds: float) -> str:
    ms = seconds * 1e3
    return f"{ms:.0f} ms" if ms >= 10 else f"{ms:.1f} ms"


def _rate(tokens_per_s: float) -> str:
    return f"{tokens_per_s:,.0f}" if tokens_per_s >= 100 else f"{tokens_per_s:.1f}"


def itl_of(point: LivePoint) -> tuple[float | None, str]:
    """The ITL the verdict quotes: the median when the engine publishes a histogram, else the mean."""
    if point.itl_median_s is not None:
        return point.itl_median_s, ""
    if point.itl_mean_s is not None:
        return point.itl_mean_s, " (mean)"
    return None, ""


def expected_tokens_per_s_per_device(scenario, mix, concurrency: int, options=None) -> float | None:
    """The expected frontier's tokens/s per device at ``concurrency`` (None: the point does not fit), with the
    serving ``options`` the explorer's curve uses (None: the defaults)."""
    from roofline.models.serving import frontier
    from roofline.models.serving.inputs import ServingOptions

    if concurrency < 1:
        return None
    point = frontier(scenario, mix, [concurrency], "expected", options or ServingOptions()).points[0]
    value = float(point.tokens_per_s_per_device)
    return value if point.fits and math.isfinite(value) and value > 0 else None


class ExpectedMemo:
    """The expected frontier's tokens/s per device by concurrency for one scenario and mix (kept while the same
    objects are handed in; another scenario starts afresh). Called on the polling thread (``annotate``)."""

    def __init__(self) -> None:
        self._key: tuple[object, object] | None = None
        self._values: dict[int, float | None] = {}

    def __call__(self, scenario, mix, concurrency: int, options=None) -> float | None:
        if self._key is None or self._key[0] is not scenario or self._key[1] != (mix, options):
            self._key, self._values = (scenario, (mix, options)), {}
        if concurrency not in self._values:
            if len(self._values) > 512:
                self._values.clear()
            self._values[concurrency] = expected_tokens_per_s_per_device(scenario, mix, concurrency, options)
        return self._values[concurrency]


def live_concurrency(status: EngineStatus) -> int:
    """The concurrency the frontier is read at: the running requests' mean over the window, rounded."""
    return 0 if status.point is None else round(status.point.running_mean)


def silence_text(status: EngineStatus, now_s: float) -> str | None:
    """``no answer since 12 s (timed out)`` when the engine is silent past :data:`STALE_AFTER_S`, or has never
    answered; None while it answers."""
    silent = status.silent_for_s(now_s)
    why = f" ({status.error})" if status.error else ""
    if silent is None:
        return f"no answer from {status.endpoint} yet{why}" if status.error else f"asking {status.endpoint}"
    if status.error is not None and silent >= STALE_AFTER_S:
        return f"no answer since {silent:.0f} s{why}"
    return None


def verdict(status: EngineStatus, *, devices: int, itl_target_s: float, expected_per_device: float | None,
            now_s: float) -> str:
    """The one line: where the engine runs against the frontier, or why there is nothing to say."""
    name = status.engine or "engine"
    silence = silence_text(status, now_s)
    if silence is not None:
        return f"{name}: {silence}"
    point = status.point
    if point is None:
        return f"{name}: waiting for the first answer"
    parts = [f"C={point.running:.0f} running"]
    if point.restarted:
        parts.append("engine restarted: counting again")
    if point.output_tokens_per_s is None:
        parts.append(f"measuring (the window fills in {point.window_s:.0f} s)")
    elif point.running_mean < 0.5:
        parts.append("idle")
    elif expected_per_device:
        share = 100 * point.output_tokens_per_s / max(devices, 1) / expected_per_device
        parts.append(f"{share:.0f} % of the expected frontier's tokens/s at this concurrency")
    else:
        parts.append(f"{_rate(point.output_tokens_per_s / max(devices, 1))} tok/s per device (the frontier has no "
                     "point at this concurrency)")
    itl, how = itl_of(point)
    if itl is not None:
        parts.append(f"ITL {_ms(itl)}{how} against the {_ms(itl_target_s)} target")
    elif point.output_tokens_per_s is not None:
        parts.append("ITL not published in this window")
    return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class LiveRow:
    label: str
    value: str


def live_rows(status: EngineStatus, *, devices: int, now_s: float) -> list[LiveRow]:
    """The live table: engine, model, requests, tokens/s, latencies, KV usage ("-": not published)."""
    rows = [LiveRow("engine", f"{status.engine or '?'} at {status.endpoint}"),
            LiveRow("model", status.model or "- (no /v1/models)")]
    silence = silence_text(status, now_s)
    point = status.point
    if silence is not None or point is None:
        return [*rows, LiveRow("state", silence or "waiting for the first answer")]

    def opt(value: float | None, fmt) -> str:
        return "-" if value is None else fmt(value)

    return [*rows,
            LiveRow("running / waiting", f"{point.running:.0f} / {opt(point.waiting, lambda v: f'{v:.0f}')}"),
            LiveRow("output tok/s (per device)", opt(point.output_tokens_per_s,
                                                     lambda v: f"{_rate(v)} ({_rate(v / max(devices, 1))})")),
            LiveRow("tok/s per user", opt(point.tokens_per_s_per_user, _rate)),
            LiveRow("TTFT p50 / p90", f"{opt(point.ttft_median_s, _ms)} / {opt(point.ttft_p90_s, _ms)}"),
            LiveRow("ITL p50 / p90", f"{opt(point.itl_median_s, _ms)} / {opt(point.itl_p90_s, _ms)}"
                    + ("" if point.itl_median_s is not None or point.itl_mean_s is None
                       else f" (mean {_ms(point.itl_mean_s)})")),
            LiveRow("KV cache used", opt(point.kv_usage, lambda v: f"{100 * v:.0f} %")),
            LiveRow("window", f"{point.window_s:.0f} s")]


def trail_points(status: EngineStatus, *, devices: int, now_s: float) -> list[tuple[float, float]]:
    """The trail as (concurrency, output tokens/s per device), oldest first; empty while the engine is silent."""
    if silence_text(status, now_s) is not None:
        return []
    return [(p.running_mean, p.output_tokens_per_s / max(devices, 1)) for p in status.trail
            if p.output_tokens_per_s is not None]


@dataclass(frozen=True, slots=True, kw_only=True)
class MeasuredPoint:
    """A benchmark run on the frontier's axes: requests in flight, output tokens/s per device, mean ITL."""

    label: str
    concurrency: float
    tokens_per_s_per_device: float
    itl_s: float | None


def measured_points(runs: Iterable[BenchRun], *, devices: int) -> list[MeasuredPoint]:
    """The serving runs with a concurrency and a throughput (a rate-only run's concurrency is not recorded: left
    out), sorted by concurrency."""
    points = []
    for run in runs:
        throughput = run.value("output_tokens_per_s")
        if not run.is_serving or run.concurrency is None or throughput is None:
            continue
        itl = run.value("itl_s")
        points.append(MeasuredPoint(label=f"{run.tool} {run.label}", concurrency=float(run.concurrency),
                                    tokens_per_s_per_device=throughput.value / max(devices, 1),
                                    itl_s=None if itl is None else itl.value))
    return sorted(points, key=lambda p: p.concurrency)


def _log_xy(pairs: Iterable[tuple[float, float | None]]) -> tuple[list[float], list[float]]:
    """log10 of (tokens/s per device, tokens/s per user = 1 / ITL) for the pairs with both positive."""
    xs, ys = [], []
    for per_device, itl in pairs:
        if per_device and per_device > 0 and itl and itl > 0:
            xs.append(math.log10(per_device))
            ys.append(math.log10(1.0 / itl))
    return xs, ys


def engine_series(status: EngineStatus | None, measured: Iterable[MeasuredPoint], *, devices: int, now_s: float
                  ) -> tuple[tuple[list[float], list[float]] | None, tuple[list[float], list[float]] | None]:
    """The frontier chart's extra series in its units (log10 tokens/s per device, log10 tokens/s per user with per
    user = 1 / ITL as the frontier has it): the live trail (its last point is the live point), the measured runs."""
    trail = None
    if status is not None and silence_text(status, now_s) is None:
        pairs = [(p.output_tokens_per_s / max(devices, 1), itl_of(p)[0]) for p in status.trail
                 if p.output_tokens_per_s is not None]
        xy = _log_xy(pairs)
        trail = xy if xy[0] else None
    runs = _log_xy((p.tokens_per_s_per_device, p.itl_s) for p in measured)
    return trail, (runs if runs[0] else None)


def model_note(served: str | None, scenario_model_id: str, preset_ids: Iterable[str]) -> str:
    """What the engine serves against the scenario's model: "" when they agree or the name matches no preset;
    else ``the engine serves llama-3.1-70b (meta-llama/Llama-3.1-70B-Instruct); the scenario is llama-3.1-8b``."""
    from roofline.presets.bench_files import model_preset_for

    preset = model_preset_for(served, list(preset_ids))
    if preset is None or preset == scenario_model_id:
        return ""
    return f"the engine serves {preset} ({served}); the scenario is {scenario_model_id}"


def with_engine_series(data, trail: tuple[list[float], list[float]] | None,
                       runs: tuple[list[float], list[float]] | None):
    """The frontier chart's data (views/serving_data.ServingChartData) with the live trail and the measured runs,
    its ranges and decade ticks widened to hold them."""
    import dataclasses

    from roofline.tui.views.chart_series import decade_ticks

    xs = [*(trail[0] if trail else []), *(runs[0] if runs else [])]
    ys = [*(trail[1] if trail else []), *(runs[1] if runs else [])]
    if not xs:
        return dataclasses.replace(data, engine_xy=None, measured_xy=None)
    x_low, x_high = min(data.x_range[0], math.floor(min(xs))), max(data.x_range[1], math.ceil(max(xs)))
    y_low = min(data.y_range[0], math.floor(min(ys)))
    y_high = max(data.y_range[1], math.ceil(max(ys)) + 0.15 * (math.ceil(max(ys)) - y_low))
    return dataclasses.replace(data, engine_xy=trail, measured_xy=runs, x_range=(x_low, x_high),
                               y_range=(y_low, y_high), x_ticks=decade_ticks(x_low, x_high),
                               y_ticks=decade_ticks(y_low, math.floor(y_high)))
