"""A serving engine's live operating point from its Prometheus ``/metrics``, polled about once a second.

What is read, per engine (recognised from its metric-name prefix; only documented names, listed in :data:`ENGINES`):

- vLLM: ``vllm:num_requests_running`` / ``_waiting``, ``vllm:kv_cache_usage_perc`` (older ``gpu_cache_usage_perc``),
  the ``vllm:generation_tokens_total`` counter, the ``vllm:time_to_first_token_seconds`` and
  ``vllm:inter_token_latency_seconds`` (older ``time_per_output_token_seconds``) histograms;
- SGLang: ``sglang:num_running_reqs`` / ``num_queue_reqs``, ``sglang:token_usage``, ``generation_tokens_total``,
  ``time_to_first_token_seconds``, ``inter_token_latency_seconds`` (older ``time_per_output_token_seconds``);
- TGI: ``tgi_batch_current_size`` / ``tgi_queue_size``, output tokens from the ``tgi_request_generated_tokens``
  histogram's sum (counted when a request ends), ``tgi_request_mean_time_per_token_duration``; no TTFT, no KV usage;
- TensorRT-LLM: ``trtllm_num_requests_running`` / ``_waiting``, ``trtllm_kv_cache_utilization``,
  ``trtllm_generation_tokens_total``, ``trtllm_time_to_first_token_seconds``, ``trtllm_time_per_output_token_seconds``;
- llama.cpp: ``llamacpp:requests_processing`` / ``requests_deferred``, ``llamacpp:kv_cache_usage_ratio`` (older
  builds), ``llamacpp:tokens_predicted_total``; no histograms: the mean step is the increase of
  ``tokens_predicted_seconds_total`` (every slot's generating time) over that of the tokens, no median or p90.

Sources: vllm-project/vllm ``vllm/v1/metrics/loggers.py`` (PrometheusStatLogger); sgl-project/sglang
``python/sglang/srt/metrics/collector.py``; huggingface/text-generation-inference ``docs/source/reference/metrics.md``;
NVIDIA/TensorRT-LLM ``tensorrt_llm/metrics/collector.py`` (``trtllm_`` prefix; trtllm-serve's own ``/metrics`` answers
JSON iteration statistics, docs/source/commands/trtllm-serve.rst, so give the URL of the path serving the Prometheus
text); ggml-org/llama.cpp ``tools/server`` (``--metrics``, ``llamacpp:`` names). Label sets (engines, DP ranks) are
summed; KV usage is their mean.

Quantiles over the last window, as PromQL's ``histogram_quantile(q, increase(..._bucket[window]))`` computes them:
the bucket counts' increase between the oldest and the newest snapshot in the window, then the bucket holding rank
``q x total`` and linear interpolation inside it, between its lower bound (the previous bucket's ``le``; 0 for the
first bucket) and its upper bound; a rank in the ``+Inf`` bucket answers the highest finite bound; no observation in
the window answers nothing (PromQL's NaN). A counter or bucket that goes backwards is an engine restart: the window
restarts from the new snapshot.

Safety (the engine is another process, maybe hostile): only the URL the user gives is asked (its ``/metrics`` and
``/v1/models``, nothing scanned), plain http or https; a bearer token only from the environment variable
:data:`TOKEN_ENV` (never stored, never shown); no proxy (the token goes to the engine or nowhere); a deadline per poll
(:data:`POLL_TIMEOUT_S` for the whole answer, checked between reads that each wait at most half of it, so a server
that trickles bytes holds a poll 1.5 x the timeout at most); a cap on the answer
(:data:`MAX_RESPONSE_BYTES`); a redirect to another host, port or scheme refused; anything but Prometheus text refused.
Polling runs in a thread (:class:`EnginePoller`); results reach the UI through the callback the caller gives, which
must hand them to the UI thread (Textual: ``post_message``), never touch widgets itself.
"""

from __future__ import annotations

import json
import math
import os
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

TOKEN_ENV = "ROOFLINE_ENGINE_TOKEN"
POLL_INTERVAL_S = 1.0
POLL_TIMEOUT_S = 2.0
MAX_RESPONSE_BYTES = 4 * 1024 * 1024  # vLLM with a few engines and LoRA labels answers ~100-300 KB
WINDOW_S = 10.0  # the quantiles' and rates' window (PromQL increase(...[10s]))
TRAIL_S = 60.0  # the live point's trail
_MAX_REDIRECTS = 3
_CHUNK_BYTES = 64 * 1024
_ACCEPTED_TYPES = ("text/plain", "application/openmetrics-text")


@dataclass(frozen=True, slots=True)
class EngineNames:
    """The metric names one engine publishes (module docstring's table); ``None``: not published."""

    engine: str
    prefix: str
    running: str
    waiting: str | None
    kv_usage: tuple[str, ...]
    output_tokens: str  # a counter (``_total`` sample), or a histogram's ``_sum`` when it ends in ``_sum``
    ttft: str | None
    itl: tuple[str, ...]
    step_seconds: str | None = None  # llama.cpp: seconds spent generating (a counter), for the mean step


ENGINES = (
    EngineNames("vLLM", "vllm:", "vllm:num_requests_running", "vllm:num_requests_waiting",
                ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"), "vllm:generation_tokens_total",
                "vllm:time_to_first_token_seconds",
                ("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds")),
    EngineNames("SGLang", "sglang:", "sglang:num_running_reqs", "sglang:num_queue_reqs", ("sglang:token_usage",),
                "sglang:generation_tokens_total", "sglang:time_to_first_token_seconds",
                ("sglang:inter_token_latency_seconds", "sglang:time_per_output_token_seconds")),
    EngineNames("TGI", "tgi_", "tgi_batch_current_size", "tgi_queue_size", (), "tgi_request_generated_tokens_sum",
                None, ("tgi_request_mean_time_per_token_duration",)),
    EngineNames("TensorRT-LLM", "trtllm_", "trtllm_num_requests_running", "trtllm_num_requests_waiting",
                ("trtllm_kv_cache_utilization",), "trtllm_generation_tokens_total",
                "trtllm_time_to_first_token_seconds", ("trtllm_time_per_output_token_seconds",)),
    EngineNames("llama.cpp", "llamacpp:", "llamacpp:requests_processing", "llamacpp:requests_deferred",
                ("llamacpp:kv_cache_usage_ratio",), "llamacpp:tokens_predicted_total", None, (),
                step_seconds="llamacpp:tokens_predicted_seconds_total"),
)


class EngineAnswerError(Exception):
    """An answer that is not usable (one line: what was wrong with it)."""


# ---- the endpoint -----------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Endpoint:
    """The URLs asked: the metrics URL (the user's URL + ``/metrics``, or the user's URL itself when its path
    ends in ``metrics``) and the same origin's ``/v1/models``."""

    metrics_url: str
    models_url: str
    origin: tuple[str, str, int]

    @property
    def display(self) -> str:
        scheme, host, port = self.origin
        return f"{scheme}://{host}:{port}"


def endpoint_for(url: str) -> Endpoint:
    """The endpoint of a URL the user typed; ``ValueError`` (one line) for anything but a plain http(s) URL."""
    text = url.strip()
    if not text or len(text) > 2048 or any(not c.isprintable() or c.isspace() for c in text):
        raise ValueError("engine URL: not a URL (empty, too long, or with spaces or control characters)")
    if "://" not in text:
        text = "http://" + text
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"engine URL: scheme {parts.scheme!r} is not http or https")
    if parts.username or parts.password:
        raise ValueError(f"engine URL: no user or password in the URL (give a token in ${TOKEN_ENV})")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise ValueError("engine URL: the port is not a number from 0 to 65535") from None
    if not parts.hostname:
        raise ValueError("engine URL: no host")
    host = parts.hostname
    netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    base = f"{parts.scheme}://{netloc}"
    path = parts.path.rstrip("/")
    metrics = f"{base}{path}" if path.endswith("metrics") else f"{base}{path}/metrics"
    return Endpoint(metrics_url=metrics, models_url=f"{base}/v1/models", origin=(parts.scheme, host.lower(), port))


def _origin_of(url: str) -> tuple[str, str, int]:
    parts = urllib.parse.urlsplit(url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        port = -1
    return parts.scheme, (parts.hostname or "").lower(), port


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Redirects within the engine's origin only (vLLM answers ``/metrics`` with a 307 to ``/metrics/``)."""

    max_redirections = _MAX_REDIRECTS

    def __init__(self, origin: tuple[str, str, int]) -> None:
        super().__init__()
        self.origin = origin

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: ANN001 - urllib's signature
        target = urllib.parse.urljoin(req.full_url, newurl)
        if _origin_of(target) != self.origin:
            scheme, host, port = _origin_of(target)
            raise EngineAnswerError(f"redirect to another host refused ({scheme}://{host[:60]}:{port})")
        return super().redirect_request(req, fp, code, msg, headers, target)


def _opener(endpoint: Endpoint) -> urllib.request.OpenerDirector:
    # ProxyHandler({}): no proxy from the environment, so the token is never handed to a third host
    return urllib.request.build_opener(urllib.request.ProxyHandler({}), _SameOriginRedirects(endpoint.origin))


def fetch(endpoint: Endpoint, url: str, *, accept: tuple[str, ...], timeout_s: float = POLL_TIMEOUT_S,
          max_bytes: int = MAX_RESPONSE_BYTES, opener: urllib.request.OpenerDirector | None = None) -> str:
    """The body of ``url`` as text, within ``timeout_s`` for the whole answer and ``max_bytes``;
    :class:`EngineAnswerError` (one line) for anything else: no answer, an HTTP error, a wrong content type."""
    deadline = time.monotonic() + timeout_s
    headers = {"Accept": ", ".join(accept), "User-Agent": "roofline-explorer"}
    token = os.environ.get(TOKEN_ENV, "").strip()
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, headers=headers, method="GET")
    try:
        response = (opener or _opener(endpoint)).open(request, timeout=timeout_s / 2)
    except EngineAnswerError:
        raise
    except urllib.error.HTTPError as err:
        raise EngineAnswerError(f"HTTP {err.code} {str(err.reason)[:60]}") from None
    except urllib.error.URLError as err:
        reason = err.reason
        if isinstance(reason, EngineAnswerError):
            raise reason from None
        raise EngineAnswerError(_network_reason(reason)) from None
    except (OSError, ValueError) as err:  # a timeout, a reset, a malformed status line
        raise EngineAnswerError(_network_reason(err)) from None
    with response:
        kind = (response.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind and kind not in accept:
            raise EngineAnswerError(f"wrong content type {kind[:40]!r} (expected {' or '.join(accept)})")
        length = response.headers.get("Content-Length")
        if length and length.isdigit() and int(length) > max_bytes:
            raise EngineAnswerError(f"answer too large ({int(length):,} bytes; the limit is {max_bytes:,})")
        chunks, total = [], 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise EngineAnswerError(f"timed out after {timeout_s:g} s (the answer kept trickling)")
            try:  # each read waits at most the socket timeout (half the poll's), the loop checks the deadline
                chunk = response.read1(_CHUNK_BYTES)
            except (OSError, ValueError) as err:
                raise EngineAnswerError(_network_reason(err)) from None
            if not chunk:
                break
            total += len(chunk)
            if total > max_bytes:
                raise EngineAnswerError(f"answer too large (more than {max_bytes:,} bytes)")
            chunks.append(chunk)
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError:
        raise EngineAnswerError("the answer is not UTF-8 text") from None


def _network_reason(err: object) -> str:
    if isinstance(err, TimeoutError | socket.timeout):
        return "timed out"
    if isinstance(err, ConnectionRefusedError):
        return "connection refused"
    text = str(err).splitlines()[0] if str(err) else type(err).__name__
    return text[:100]


# ---- parsing ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Snapshot:
    """One answer, summed over label sets: gauges, counters and histograms by name (SI units as published)."""

    time_s: float
    engine: str
    values: Mapping[str, float]
    histograms: Mapping[str, tuple[tuple[float, float], ...]]  # name -> ((le, cumulative count), ...) sorted

    def value(self, name: str | None) -> float | None:
        return None if name is None else self.values.get(name)


def _clean(text: str) -> str:
    """Printable only: an engine's label or model name never carries terminal control sequences onward."""
    return "".join(c for c in text if c.isprintable())[:200]


def parse_metrics(text: str, time_s: float, content_type: str = "text/plain") -> Snapshot:
    """A :class:`Snapshot` of Prometheus text (``prometheus_client``'s parser); :class:`EngineAnswerError` for text
    that is not the exposition format or comes from no engine this reader knows."""
    if content_type == "application/openmetrics-text":
        from prometheus_client.openmetrics.parser import text_string_to_metric_families
    else:
        from prometheus_client.parser import text_string_to_metric_families
    values: dict[str, float] = {}
    buckets: dict[str, dict[float, float]] = {}
    try:
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                name, value = sample.name, float(sample.value)
                if not math.isfinite(value) and not (name.endswith("_bucket")):
                    continue  # a NaN gauge (no data yet) reads as absent
                if name.endswith("_bucket") and "le" in sample.labels:
                    base = name[: -len("_bucket")]
                    le = float(sample.labels["le"])
                    per = buckets.setdefault(base, {})
                    per[le] = per.get(le, 0.0) + (value if math.isfinite(value) else 0.0)
                else:
                    values[name] = values.get(name, 0.0) + value
                    if family.type == "gauge":
                        values[f"{name}#n"] = values.get(f"{name}#n", 0.0) + 1.0
    except (ValueError, KeyError, IndexError, TypeError) as err:
        raise EngineAnswerError(f"not Prometheus text ({_clean(str(err))[:80]})") from None
    engine = next((e for e in ENGINES if any(k.startswith(e.prefix) for k in (*values, *buckets))), None)
    if engine is None:
        raise EngineAnswerError("no metric of a known engine (vllm:, sglang:, tgi_, trtllm_, llamacpp:)")
    histograms = {k: tuple(sorted(v.items())) for k, v in buckets.items()}
    return Snapshot(time_s=time_s, engine=engine.engine, values=values, histograms=histograms)


def names_for(engine: str) -> EngineNames:
    return next(e for e in ENGINES if e.engine == engine)


def _first(snapshot: Snapshot, names: Iterable[str]) -> str | None:
    return next((n for n in names if n in snapshot.values or n in snapshot.histograms), None)


def _gauge_mean(snapshot: Snapshot, name: str | None) -> float | None:
    if name is None or name not in snapshot.values:
        return None
    return snapshot.values[name] / max(snapshot.values.get(f"{name}#n", 1.0), 1.0)


# ---- histogram quantiles ----------------------------------------------------------------------------------------
def bucket_increase(old: tuple[tuple[float, float], ...], new: tuple[tuple[float, float], ...]
                    ) -> tuple[tuple[float, float], ...] | None:
    """The per-bucket increase of cumulative counts ``new - old`` (same bounds); None when a count went down (a
    restart) or the bounds changed."""
    if [le for le, _ in old] != [le for le, _ in new]:
        return None
    out = []
    for (le, a), (_, b) in zip(old, new, strict=True):
        if b < a:
            return None
        out.append((le, b - a))
    return tuple(out)


def histogram_quantile(q: float, buckets: tuple[tuple[float, float], ...]) -> float | None:
    """PromQL's ``histogram_quantile`` over cumulative ``(le, count)`` pairs sorted by ``le`` (the ``+Inf`` bucket
    last): linear interpolation inside the bucket holding rank ``q x total``; ``None`` for no observation."""
    if not buckets or not 0.0 <= q <= 1.0:
        return None
    total = buckets[-1][1]
    if not total > 0:
        return None
    rank = q * total
    for i, (le, count) in enumerate(buckets):
        if count >= rank:
            if math.isinf(le):
                return buckets[i - 1][0] if i > 0 else None  # PromQL: the highest finite bound
            lower, below = (0.0, 0.0) if i == 0 else buckets[i - 1]
            if i == 0 and le <= 0:
                return le
            in_bucket = count - below
            return le if in_bucket <= 0 else lower + (le - lower) * (rank - below) / in_bucket
    return None


# ---- the live point ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class LivePoint:
    """The engine's operating point over the last window (``None``: not published, or nothing in the window).

    ``running`` is the latest reading (requests decoding, the concurrency), ``running_mean`` its mean over the
    window; ``output_tokens_per_s`` is the output-token counter's increase / the window; per user = that /
    ``running_mean``. TTFT and ITL medians and p90 from the histograms' increases (module docstring).
    """

    time_s: float
    window_s: float
    engine: str
    running: float
    running_mean: float
    waiting: float | None
    output_tokens_per_s: float | None
    tokens_per_s_per_user: float | None
    ttft_median_s: float | None
    ttft_p90_s: float | None
    itl_median_s: float | None
    itl_p90_s: float | None
    itl_mean_s: float | None
    kv_usage: float | None
    restarted: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineStatus:
    """What a poll leaves: the point (the last good one), when the engine last answered, and why the latest poll
    failed (``None``: it answered). ``trail``: the points of the last :data:`TRAIL_S` seconds, oldest first."""

    endpoint: str
    engine: str | None
    model: str | None
    point: LivePoint | None
    trail: tuple[LivePoint, ...]
    answered_at_s: float | None
    polled_at_s: float
    error: str | None = None
    # what the poller's ``annotate`` computed for this status on the polling thread (the explorer: the expected
    # frontier at the live concurrency, ~2 ms of model work kept off the UI thread); None: no annotate, or it failed
    annotation: object = None

    def silent_for_s(self, now_s: float | None = None) -> float | None:
        """Seconds since the last good answer (None: never answered)."""
        if self.answered_at_s is None:
            return None
        return max((time.monotonic() if now_s is None else now_s) - self.answered_at_s, 0.0)


def _delta(old: Snapshot, new: Snapshot, name: str | None) -> float | None:
    if name is None or name not in old.values or name not in new.values:
        return None
    return new.values[name] - old.values[name]


def _is_restart(old: Snapshot, new: Snapshot) -> bool:
    """A counter (a ``_total``, ``_count`` or ``_sum`` sample) or a bucket lower than before: the engine restarted."""
    if old.engine != new.engine:
        return True
    for name, value in new.values.items():
        if name.endswith(("_total", "_count", "_sum")) and name in old.values and value < old.values[name]:
            return True
    return any(bucket_increase(old.histograms[n], h) is None for n, h in new.histograms.items()
               if n in old.histograms)


def live_point(window: list[Snapshot], restarted: bool = False) -> LivePoint:
    """The point of a window of snapshots (oldest first, at least one)."""
    new = window[-1]
    old = window[0]
    names = names_for(new.engine)
    span = new.time_s - old.time_s
    running = new.value(names.running) or 0.0
    running_values = [s.value(names.running) for s in window if s.value(names.running) is not None]
    running_mean = sum(running_values) / len(running_values) if running_values else running
    tokens_per_s = None
    produced = _delta(old, new, names.output_tokens)
    if produced is not None and span > 0:
        tokens_per_s = max(produced, 0.0) / span
    per_user = tokens_per_s / running_mean if tokens_per_s is not None and running_mean > 0 else None

    def quantiles(name: str | None) -> tuple[float | None, float | None, float | None]:
        if name is None or name not in new.histograms or name not in old.histograms or span <= 0:
            return None, None, None
        increase = bucket_increase(old.histograms[name], new.histograms[name])
        if increase is None:
            return None, None, None
        count = _delta(old, new, f"{name}_count")
        total = _delta(old, new, f"{name}_sum")
        mean = total / count if count and total is not None and count > 0 else None
        return histogram_quantile(0.5, increase), histogram_quantile(0.9, increase), mean

    ttft_median, ttft_p90, _ = quantiles(names.ttft)
    itl_median, itl_p90, itl_mean = quantiles(_first(new, names.itl))
    if names.step_seconds is not None:  # llama.cpp: seconds generating / tokens generated, over all slots
        seconds, tokens = _delta(old, new, names.step_seconds), produced
        if seconds is not None and tokens and tokens > 0:
            itl_mean = seconds / tokens
    kv_name = _first(new, names.kv_usage)
    return LivePoint(time_s=new.time_s, window_s=span, engine=new.engine, running=running,
                     running_mean=running_mean, waiting=new.value(names.waiting), output_tokens_per_s=tokens_per_s,
                     tokens_per_s_per_user=per_user, ttft_median_s=ttft_median, ttft_p90_s=ttft_p90,
                     itl_median_s=itl_median, itl_p90_s=itl_p90, itl_mean_s=itl_mean,
                     kv_usage=_gauge_mean(new, kv_name), restarted=restarted)


@dataclass
class LiveWindow:
    """The snapshots of the last :data:`WINDOW_S` seconds and the points of the last :data:`TRAIL_S`; a restart
    (a counter going backwards) starts the window again from the new snapshot."""

    window_s: float = WINDOW_S
    trail_s: float = TRAIL_S
    snapshots: deque[Snapshot] = field(default_factory=deque)
    trail: deque[LivePoint] = field(default_factory=deque)

    def add(self, snapshot: Snapshot) -> LivePoint:
        restarted = bool(self.snapshots) and _is_restart(self.snapshots[-1], snapshot)
        if restarted:
            self.snapshots.clear()
        self.snapshots.append(snapshot)
        while len(self.snapshots) > 2 and snapshot.time_s - self.snapshots[1].time_s >= self.window_s:
            self.snapshots.popleft()
        point = live_point(list(self.snapshots), restarted)
        self.trail.append(point)
        while self.trail and point.time_s - self.trail[0].time_s > self.trail_s:
            self.trail.popleft()
        return point


# ---- polling ----------------------------------------------------------------------------------------------------
def served_model(endpoint: Endpoint, opener: urllib.request.OpenerDirector | None = None,
                 timeout_s: float = POLL_TIMEOUT_S) -> str | None:
    """The first model id of the OpenAI-compatible ``/v1/models`` (``data[0].id``); None where the engine has no such
    route or answers something else."""
    try:
        text = fetch(endpoint, endpoint.models_url, accept=("application/json",), timeout_s=timeout_s,
                     max_bytes=256 * 1024, opener=opener)
        doc = json.loads(text)
    except (EngineAnswerError, ValueError, RecursionError):
        return None
    data = doc.get("data") if isinstance(doc, dict) else None
    first = data[0] if isinstance(data, list) and data else None
    name = first.get("id") if isinstance(first, dict) else None
    return _clean(name) if isinstance(name, str) and name else None


class EngineMonitor:
    """Polls one endpoint: :meth:`poll` asks ``/metrics`` once and returns the :class:`EngineStatus` (never
    raises for a bad answer: the status says what was wrong). Not thread-safe: one poller calls it."""

    def __init__(self, url: str, *, timeout_s: float = POLL_TIMEOUT_S, window_s: float = WINDOW_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.endpoint = endpoint_for(url)
        self.timeout_s = timeout_s
        self.clock = clock
        self.window = LiveWindow(window_s=window_s)
        self._opener = _opener(self.endpoint)
        self.model: str | None = None
        self._model_asked = False
        self._status = EngineStatus(endpoint=self.endpoint.display, engine=None, model=None, point=None, trail=(),
                                    answered_at_s=None, polled_at_s=clock())

    @property
    def status(self) -> EngineStatus:
        return self._status

    def poll(self) -> EngineStatus:
        now = self.clock()
        try:
            text = fetch(self.endpoint, self.endpoint.metrics_url, accept=_ACCEPTED_TYPES,
                         timeout_s=self.timeout_s, opener=self._opener)
            snapshot = parse_metrics(text, now)
        except EngineAnswerError as err:
            self._status = replace(self._status, polled_at_s=now, error=_clean(str(err)))
            return self._status
        point = self.window.add(snapshot)
        if not self._model_asked or point.restarted:
            self._model_asked = True
            self.model = served_model(self.endpoint, self._opener, self.timeout_s)
        self._status = EngineStatus(endpoint=self.endpoint.display, engine=snapshot.engine, model=self.model,
                                    point=point, trail=tuple(self.window.trail), answered_at_s=now,
                                    polled_at_s=now, error=None)
        return self._status


class EnginePoller:
    """A daemon thread calling ``monitor.poll()`` every ``interval_s`` and handing each status to ``deliver``
    (called on the polling thread: the caller's ``deliver`` must pass it to the UI thread, e.g. Textual's
    ``post_message``). ``annotate(status)``, when given, runs on the polling thread too and its result rides in
    ``status.annotation`` (an exception there leaves None: polling goes on). :meth:`stop` ends it within one poll's
    timeout."""

    def __init__(self, monitor: EngineMonitor, deliver: Callable[[EngineStatus], None],
                 interval_s: float = POLL_INTERVAL_S,
                 annotate: Callable[[EngineStatus], object] | None = None) -> None:
        self.monitor = monitor
        self.deliver = deliver
        self.interval_s = interval_s
        self.annotate = annotate
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="roofline-engine-poll", daemon=True)

    def start(self) -> EnginePoller:
        self._thread.start()
        return self

    def stop(self, join_s: float | None = None) -> None:
        self._stop.set()
        if join_s is not None and self._thread.is_alive():
            self._thread.join(join_s)

    @property
    def running(self) -> bool:
        return self._thread.is_alive() and not self._stop.is_set()

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            status = self.monitor.poll()
            if self._stop.is_set():
                break
            if self.annotate is not None:
                try:
                    status = replace(status, annotation=self.annotate(status))
                except Exception:  # noqa: BLE001 - a model error must not end the polling; the view says "-"
                    status = replace(status, annotation=None)
            self.deliver(status)
            self._stop.wait(max(self.interval_s - (time.monotonic() - started), 0.05))
