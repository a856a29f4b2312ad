"""Live engine metrics (tui/probe/engine_metrics.py) without a network: recorded sequences in each engine's
documented exposition format and metric names, parsed with prometheus_client's parser; quantiles worked by hand as
PromQL's histogram_quantile does; a restart (counts going backwards) restarts the window; the verdict's text."""

from __future__ import annotations

import pytest

from roofline.tui.probe.engine_metrics import (
    EngineAnswerError,
    EngineStatus,
    LiveWindow,
    bucket_increase,
    endpoint_for,
    histogram_quantile,
    parse_metrics,
)
from roofline.tui.views.live_engine import live_rows, trail_points, verdict

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
# vLLM's bucket bounds (vllm/v1/metrics/loggers.py): TTFT and ITL
TTFT_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
                40.0, 80.0, 160.0, 640.0, 2560.0)
ITL_BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0,
               80.0)


def _labels(labels: dict[str, str], **more: str) -> str:
    items = {**labels, **more}
    return "{" + ",".join(f'{k}="{v}"' for k, v in items.items()) + "}" if items else ""


def _number(value: float) -> str:
    return repr(float(value))


def histogram(name: str, labels: dict[str, str], bounds, observations: list[tuple[float, int]]) -> str:
    """Prometheus text of a histogram holding ``observations`` ((value, how many), ...), as prometheus_client
    writes one: HELP, TYPE, cumulative ``_bucket`` lines with ``le``, ``+Inf``, ``_count``, ``_sum``."""
    lines = [f"# HELP {name} Histogram.", f"# TYPE {name} histogram"]
    total = sum(n for _, n in observations)
    for le in bounds:
        count = sum(n for v, n in observations if v <= le)
        lines.append(f"{name}_bucket{_labels(labels, le=_number(le))} {_number(count)}")
    lines.append(f"{name}_bucket{_labels(labels, le='+Inf')} {_number(total)}")
    lines.append(f"{name}_count{_labels(labels)} {_number(total)}")
    lines.append(f"{name}_sum{_labels(labels)} {_number(sum(v * n for v, n in observations))}")
    return "\n".join(lines)


def metric(kind: str, name: str, labels: dict[str, str], value: float) -> str:
    return f"# HELP {name} .\n# TYPE {name} {kind}\n{name}{_labels(labels)} {_number(value)}"


def recording(engine: str, step: int, *, running: float = 48, tokens_per_step: int = 2000,
              itl_s: float = 0.031, ttft_s: float = 0.2, requests_per_step: int = 10, base_step: int = 0) -> str:
    """The /metrics answer of ``engine`` after ``step`` seconds of steady load: ``tokens_per_step`` output tokens
    and as many inter-token gaps of ``itl_s`` a second, ``requests_per_step`` first tokens at ``ttft_s``."""
    n = step + base_step
    tokens = n * tokens_per_step
    itl = [(itl_s, n * tokens_per_step)]
    ttft = [(ttft_s, n * requests_per_step)]
    if engine == "vllm":  # vllm/v1/metrics/loggers.py; labels model_name, engine
        labels = {"model_name": MODEL, "engine": "0"}
        parts = [metric("gauge", "vllm:num_requests_running", labels, running),
                 metric("gauge", "vllm:num_requests_waiting", labels, 3),
                 metric("gauge", "vllm:kv_cache_usage_perc", labels, 0.42),
                 metric("counter", "vllm:prompt_tokens_total", labels, n * 10240),
                 metric("counter", "vllm:generation_tokens_total", labels, tokens),
                 histogram("vllm:time_to_first_token_seconds", labels, TTFT_BUCKETS, ttft),
                 histogram("vllm:inter_token_latency_seconds", labels, ITL_BUCKETS, itl)]
    elif engine == "sglang":  # python/sglang/srt/metrics/collector.py; label model_name
        labels = {"model_name": MODEL}
        parts = [metric("gauge", "sglang:num_running_reqs", labels, running),
                 metric("gauge", "sglang:num_queue_reqs", labels, 3),
                 metric("gauge", "sglang:token_usage", labels, 0.42),
                 metric("gauge", "sglang:gen_throughput", labels, tokens_per_step),
                 metric("counter", "sglang:prompt_tokens_total", labels, n * 10240),
                 metric("counter", "sglang:generation_tokens_total", labels, tokens),
                 histogram("sglang:time_to_first_token_seconds", labels, TTFT_BUCKETS, ttft),
                 histogram("sglang:inter_token_latency_seconds", labels, ITL_BUCKETS, itl)]
    elif engine == "tgi":  # docs/source/reference/metrics.md; no labels on these
        generated = [(float(tokens_per_step // requests_per_step), n * requests_per_step)]
        parts = [metric("gauge", "tgi_batch_current_size", {}, running),
                 metric("gauge", "tgi_queue_size", {}, 3),
                 metric("counter", "tgi_request_count", {}, n * requests_per_step),
                 histogram("tgi_request_generated_tokens", {}, (1.0, 10.0, 100.0, 1000.0), generated),
                 histogram("tgi_request_mean_time_per_token_duration", {}, ITL_BUCKETS, itl)]
    elif engine == "trtllm":  # tensorrt_llm/metrics/collector.py; labels model_name, engine_type
        labels = {"model_name": MODEL, "engine_type": "trtllm"}
        parts = [metric("gauge", "trtllm_num_requests_running", labels, running),
                 metric("gauge", "trtllm_num_requests_waiting", labels, 3),
                 metric("gauge", "trtllm_kv_cache_utilization", labels, 0.42),
                 metric("counter", "trtllm_generation_tokens_total", labels, tokens),
                 histogram("trtllm_time_to_first_token_seconds", labels, TTFT_BUCKETS, ttft),
                 histogram("trtllm_time_per_output_token_seconds", labels, ITL_BUCKETS, itl)]
    elif engine == "llamacpp":  # tools/server: '# HELP llamacpp:<name>', '# TYPE llamacpp:<name> <type>', no labels
        parts = [metric("counter", "llamacpp:prompt_tokens_total", {}, n * 10240),
                 metric("counter", "llamacpp:prompt_seconds_total", {}, n * 0.4),
                 metric("counter", "llamacpp:tokens_predicted_total", {}, tokens),
                 # every busy slot's generating time: 48 slots x 1 s a second
                 metric("counter", "llamacpp:tokens_predicted_seconds_total", {}, n * tokens_per_step * itl_s),
                 metric("counter", "llamacpp:n_decode_total", {}, n * 32),
                 metric("gauge", "llamacpp:requests_processing", {}, running),
                 metric("gauge", "llamacpp:requests_deferred", {}, 3)]
    else:
        raise ValueError(engine)
    return "\n".join(parts) + "\n"


ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "tgi": "TGI", "trtllm": "TensorRT-LLM", "llamacpp": "llama.cpp"}


def replay(engine: str, steps: int = 11, **kw) -> LiveWindow:
    window = LiveWindow()
    for step in range(steps):
        window.add(parse_metrics(recording(engine, step, **kw), float(step)))
    return window


def test_quantile_worked_by_hand():
    """Cumulative counts 0, 10, 60, 90, 100 at le 0.01, 0.025, 0.05, 0.075, 0.1 (+Inf 100). Median: rank 50 lies
    in (0.025, 0.05] holding 50 (10 below): 0.025 + 0.025 x (50 - 10) / 50 = 0.045. p90: rank 90 in (0.05, 0.075]
    holding 30 (60 below): 0.05 + 0.025 x 30 / 30 = 0.075."""
    buckets = ((0.01, 0.0), (0.025, 10.0), (0.05, 60.0), (0.075, 90.0), (0.1, 100.0), (float("inf"), 100.0))
    assert histogram_quantile(0.5, buckets) == pytest.approx(0.045)
    assert histogram_quantile(0.9, buckets) == pytest.approx(0.075)


def test_quantile_edges_as_promql():
    """A rank in +Inf answers the highest finite bound; a rank in the first bucket interpolates from 0; nothing
    observed answers nothing (PromQL's NaN)."""
    assert histogram_quantile(0.99, ((0.1, 10.0), (float("inf"), 100.0))) == 0.1
    assert histogram_quantile(0.5, ((0.1, 10.0), (0.2, 10.0), (float("inf"), 10.0))) == pytest.approx(0.05)
    assert histogram_quantile(0.5, ((0.1, 0.0), (float("inf"), 0.0))) is None


def test_bucket_increase_refuses_counts_going_down():
    assert bucket_increase(((0.1, 5.0), (float("inf"), 9.0)), ((0.1, 7.0), (float("inf"), 12.0))) == (
        (0.1, 2.0), (float("inf"), 3.0))
    assert bucket_increase(((0.1, 5.0), (float("inf"), 9.0)), ((0.1, 1.0), (float("inf"), 2.0))) is None


@pytest.mark.parametrize("engine", sorted(ENGINE_NAMES))
def test_each_engine_is_recognised_and_read(engine):
    """Eleven answers a second apart: the window spans 10 s; 2000 output tokens a second -> 2000 tok/s, per user
    2000 / 48 = 41.7; every gap of 31 ms falls in vLLM's (0.025, 0.05] bucket, so the median is 0.025 + 0.025 x 0.5
    = 37.5 ms and p90 0.025 + 0.025 x 0.9 = 47.5 ms; every first token of 200 ms in (0.1, 0.25]: median 0.175 s.
    llama.cpp publishes no histogram: its mean step is 2000 x 0.031 s / 2000 tokens = 31 ms."""
    point = replay(engine).trail[-1]
    assert point.engine == ENGINE_NAMES[engine]
    assert point.window_s == 10.0 and point.running == 48
    if engine == "tgi":  # output tokens counted when a request ends: the histogram's sum, 200 x 10 a second
        assert point.output_tokens_per_s == pytest.approx(2000)
    else:
        assert point.output_tokens_per_s == pytest.approx(2000)
    assert point.tokens_per_s_per_user == pytest.approx(2000 / 48)
    if engine == "llamacpp":
        assert point.itl_median_s is None and point.itl_mean_s == pytest.approx(0.031)
        assert point.ttft_median_s is None
    else:
        assert point.itl_median_s == pytest.approx(0.0375)
        assert point.itl_p90_s == pytest.approx(0.0475)
        assert point.itl_mean_s == pytest.approx(0.031)
    if engine in ("vllm", "sglang", "trtllm"):
        assert point.ttft_median_s == pytest.approx(0.175)
        assert point.kv_usage == pytest.approx(0.42)
    if engine == "tgi":
        assert point.ttft_median_s is None and point.kv_usage is None


def test_the_first_answer_has_no_rates():
    point = replay("vllm", steps=1).trail[-1]
    assert point.output_tokens_per_s is None and point.itl_median_s is None and point.running == 48


def test_a_counter_going_backwards_restarts_the_window():
    """Steps 0..5 of one engine, then it restarts (counts from 0 again): the new point is flagged, its window is
    the new snapshot alone (no rate), and the next one measures from the restart."""
    window = replay("vllm", steps=6, base_step=100)
    restarted = window.add(parse_metrics(recording("vllm", 0), 6.0))
    assert restarted.restarted and restarted.output_tokens_per_s is None
    after = window.add(parse_metrics(recording("vllm", 1), 7.0))
    assert not after.restarted and after.output_tokens_per_s == pytest.approx(2000)


def test_a_histogram_going_backwards_alone_is_a_restart():
    window = replay("sglang", steps=3, base_step=50)
    text = recording("sglang", 3, base_step=50).replace(
        'sglang:inter_token_latency_seconds_bucket{model_name="' + MODEL + '",le="0.05"}', "X", 1)
    assert "X" in text
    old_count = repr(float(53 * 2000))
    text = text.replace("X " + old_count, 'sglang:inter_token_latency_seconds_bucket{model_name="' + MODEL
                        + '",le="0.05"} 5.0')
    point = window.add(parse_metrics(text, 3.0))
    assert point.restarted


def test_the_trail_keeps_the_last_minute():
    window = replay("vllm", steps=90)
    assert len(window.trail) == 61 and window.trail[0].time_s == 29.0


@pytest.mark.parametrize(("text", "fragment"), [
    ("<html><body>It works</body></html>", "not Prometheus text"),
    ("# TYPE node_cpu_seconds_total counter\nnode_cpu_seconds_total 3\n", "no metric of a known engine"),
    ("vllm:num_requests_running{model_name=\"m\" 4\n", "not Prometheus text"),
])
def test_garbage_is_one_line(text, fragment):
    with pytest.raises(EngineAnswerError, match=fragment) as info:
        parse_metrics(text, 0.0)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("url", "metrics", "models"), [
    ("127.0.0.1:8000", "http://127.0.0.1:8000/metrics", "http://127.0.0.1:8000/v1/models"),
    ("http://localhost:30000/", "http://localhost:30000/metrics", "http://localhost:30000/v1/models"),
    ("http://[::1]:8000/prometheus/metrics", "http://[::1]:8000/prometheus/metrics", "http://[::1]:8000/v1/models"),
])
def test_endpoint_urls(url, metrics, models):
    endpoint = endpoint_for(url)
    assert (endpoint.metrics_url, endpoint.models_url) == (metrics, models)


@pytest.mark.parametrize(("url", "fragment"), [
    ("file:///etc/passwd", "not http or https"), ("http://user:pw@host/", "no user or password"),
    ("http://host:99999/", "port"), ("http://a b/", "spaces"), ("", "not a URL"),
])
def test_bad_urls_are_refused(url, fragment):
    with pytest.raises(ValueError, match=fragment):
        endpoint_for(url)


def _status(window: LiveWindow, *, answered: float, polled: float, error: str | None = None) -> EngineStatus:
    return EngineStatus(endpoint="http://127.0.0.1:8000", engine="vLLM", model=MODEL, point=window.trail[-1],
                        trail=tuple(window.trail), answered_at_s=answered, polled_at_s=polled, error=error)


def test_verdict_line():
    """48 running, 2000 tok/s on 1 device against an expected 3175 tok/s per device at C=48: 63 %; ITL median
    37.5 ms (shown 38 ms) against the 50 ms target."""
    status = _status(replay("vllm"), answered=10.0, polled=10.0)
    line = verdict(status, devices=1, itl_target_s=0.050, expected_per_device=3175.0, now_s=10.2)
    assert line == ("C=48 running, 63 % of the expected frontier's tokens/s at this concurrency, ITL 38 ms against "
                    "the 50 ms target")


def test_verdict_of_a_silent_engine_shows_no_numbers():
    """Last answer at 10 s, polls failing since, now 22 s: 'no answer since 12 s', never the old 63 %."""
    status = _status(replay("vllm"), answered=10.0, polled=22.0, error="connection refused")
    line = verdict(status, devices=1, itl_target_s=0.05, expected_per_device=3175.0, now_s=22.0)
    assert line == "vLLM: no answer since 12 s (connection refused)"
    assert trail_points(status, devices=1, now_s=22.0) == []
    assert [r.value for r in live_rows(status, devices=1, now_s=22.0)][-1].startswith("no answer since 12 s")


def test_llama_cpp_verdict_quotes_the_mean():
    status = _status(replay("llamacpp"), answered=10.0, polled=10.0)
    line = verdict(status, devices=1, itl_target_s=0.05, expected_per_device=None, now_s=10.0)
    assert "ITL 31 ms (mean) against the 50 ms target" in line and "frontier has no point" in line


def test_rows_and_trail():
    status = _status(replay("vllm"), answered=10.0, polled=10.0)
    rows = {r.label: r.value for r in live_rows(status, devices=2, now_s=10.0)}
    assert rows["output tok/s (per device)"] == "2,000 (1,000)"
    assert rows["ITL p50 / p90"] == "38 ms / 48 ms" and rows["KV cache used"] == "42 %"
    trail = trail_points(status, devices=2, now_s=10.0)
    assert trail[-1] == (48.0, 1000.0) and len(trail) == 10  # the first answer has no rate


def test_expected_memo_computes_once_per_concurrency(monkeypatch):
    import roofline.tui.views.live_engine as live

    calls = []
    monkeypatch.setattr(live, "expected_tokens_per_s_per_device",
                        lambda scenario, mix, c, options=None: calls.append(c) or 100.0 * c)
    memo = live.ExpectedMemo()
    scenario, mix = object(), ("mix", 1)
    assert [memo(scenario, mix, c) for c in (48, 48, 49, 48)] == [4800.0, 4800.0, 4900.0, 4800.0]
    assert calls == [48, 49]
    memo(object(), mix, 48)  # another scenario: computed afresh
    assert calls == [48, 49, 48]


def test_expected_per_device_is_the_frontiers_point():
    """The verdict's reference is models.serving.frontier's expected tokens/s per device at that concurrency."""
    from roofline.models.scenario import Scenario
    from roofline.models.serving import frontier
    from roofline.models.serving.inputs import ServingMix, ServingOptions
    from roofline.presets import load_hardware, load_model
    from roofline.tui.views.live_engine import expected_tokens_per_s_per_device

    scenario = Scenario(hardware=load_hardware("h100-sxm"), model=load_model("llama-3.1-8b"))
    mix = ServingMix(prompt_tokens=1024, output_tokens=256)
    direct = frontier(scenario, mix, [48], "expected", ServingOptions()).points[0].tokens_per_s_per_device
    assert expected_tokens_per_s_per_device(scenario, mix, 48) == pytest.approx(direct)
    assert expected_tokens_per_s_per_device(scenario, mix, 0) is None


def test_engine_series_on_the_frontiers_axes():
    """Per user is 1 / ITL, as the frontier has it: the live trail's last point is (log10 2000/2, log10 1/0.0375)."""
    import math

    from roofline.tui.views.live_engine import MeasuredPoint, engine_series

    status = _status(replay("vllm"), answered=10.0, polled=10.0)
    measured = [MeasuredPoint(label="run", concurrency=16, tokens_per_s_per_device=1326.3, itl_s=0.01187),
                MeasuredPoint(label="no itl", concurrency=4, tokens_per_s_per_device=500.0, itl_s=None)]
    trail, runs = engine_series(status, measured, devices=2, now_s=10.0)
    assert trail[0][-1] == pytest.approx(math.log10(1000.0)) and trail[1][-1] == pytest.approx(math.log10(1 / 0.0375))
    assert runs == ([pytest.approx(math.log10(1326.3))], [pytest.approx(math.log10(1 / 0.01187))])
    silent = _status(replay("vllm"), answered=10.0, polled=30.0, error="timed out")
    assert engine_series(silent, [], devices=2, now_s=30.0) == (None, None)


def test_model_note():
    from roofline.tui.views.live_engine import model_note

    ids = ["llama-3.1-8b", "llama-3.1-70b"]
    assert model_note("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b", ids) == ""
    assert model_note("meta-llama/Llama-3.1-70B-Instruct", "llama-3.1-8b", ids) == (
        "the engine serves llama-3.1-70b (meta-llama/Llama-3.1-70B-Instruct); the scenario is llama-3.1-8b")
    assert model_note("my-own-model", "llama-3.1-8b", ids) == "" and model_note(None, "llama-3.1-8b", ids) == ""
