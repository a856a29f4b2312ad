"""Issue 27's serving mechanisms, each worked by hand: the closed loop's steady cycle, ITL without the request's own
prompt, the fixed per-request path, Poisson arrivals at a concurrency, the burst and the band."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from roofline.models.engines import engine_profile
from roofline.models.errors import ModelInputError
from roofline.models.estimate import pass_totals, scenario_ceilings
from roofline.models.serving import (
    ServingMix,
    ServingOptions,
    at_rate,
    burst_ttft_s,
    frontier,
    mixed_step_ops,
    request_overhead_s,
)
from roofline.models.serving.band import serving_band
from tests.conftest import scenario as _scenario

NO_FIXED = ServingOptions(request_overhead_s=0.0)


def scenario(hw_id: str, model_id: str, *, tp: int = 1, engine: str | None = None):
    s = _scenario(hw_id, model_id, tp=tp)
    return s if engine is None else replace(s, engine=engine)


def _step(s, estimate_name="expected", **kw) -> float:
    return float(pass_totals(mixed_step_ops(s, **kw), scenario_ceilings(s, estimate_name)).time_s)


def test_closed_loop_group_prefills_together_and_decodes_alone():
    """Llama-3.1-8B on one H100, P = 1000, G = 100, C = 4, budget 8192. The decodes leave B' = 8192 - 4 = 8188
    tokens, which hold 8.19 prompts, so all 4 requests form one group: they arrive together, their 4,000 prompt
    tokens prefill in one step with no one else decoding (TTFT = that step), and no other group's prompt ever rides
    in their decode steps (ITL = the 4-decode step at the mean context 1050). e2e = TTFT + 99 ITL; output tokens/s
    = C * G / e2e (Little's law)."""
    s = scenario("h100-sxm", "llama-3.1-8b")
    mix = ServingMix(prompt_tokens=1000, output_tokens=100)
    p = frontier(s, mix, [4], options=NO_FIXED).points[0]
    kw = dict(context_tokens=1050.0, prompt_tokens=1000)
    group_step = _step(s, decode_requests=0.0, prefill_prompts=4.0, **kw)
    decode_step = _step(s, decode_requests=4.0, prefill_prompts=0.0, **kw)
    assert p.arrivals == "closed" and p.prefill_group == 4.0 and p.prefill_chunks == 1
    assert p.ttft_s == pytest.approx(group_step, rel=1e-12)
    assert p.itl_s == pytest.approx(decode_step, rel=1e-12)
    assert p.mixed_step_share == 0.0
    assert p.e2e_s == pytest.approx(group_step + 99 * decode_step, rel=1e-12)
    assert p.tokens_per_s_per_device == pytest.approx(4 * 100 / p.e2e_s, rel=1e-12)


def test_closed_loop_groups_of_one_budget_and_the_others_prefill_in_some_decode_steps():
    """C = 16, same mix: B' = 8192 - 16 = 8176 holds g = 8.176 prompts, so groups of 8.176 arrive together and
    prefill in one step beside the other 16 - 8.176 = 7.824 decoding (TTFT = that step). Over a request's 99 decode
    steps the others bring 7.824 * 1000 * 99/100 = 7,745.8 prompt tokens in chunks of 8,176: k = 0.9474 of its steps
    carry a full chunk beside the 16 decodes, the rest decode only: ITL = ((99 - k) t_dec + k t_mix) / 99."""
    s = scenario("h100-sxm", "llama-3.1-8b")
    mix = ServingMix(prompt_tokens=1000, output_tokens=100)
    p = frontier(s, mix, [16], options=NO_FIXED).points[0]
    g = 8176 / 1000
    kw = dict(context_tokens=1050.0, prompt_tokens=1000)
    assert p.prefill_group == pytest.approx(g)
    assert p.ttft_s == pytest.approx(_step(s, decode_requests=16 - g, prefill_prompts=g, **kw), rel=1e-12)
    k = (16 - g) * 1000 * 0.99 / 8176
    assert k == pytest.approx(0.94736, rel=1e-4)
    t_dec = _step(s, decode_requests=16.0, prefill_prompts=0.0, **kw)
    t_mix = _step(s, decode_requests=16.0, prefill_prompts=g, **kw)
    assert p.itl_s == pytest.approx(((99 - k) * t_dec + k * t_mix) / 99, rel=1e-12)
    assert p.mixed_step_share == pytest.approx(k / 99)


@pytest.mark.parametrize("model_id", ["llama-3.1-8b", "mixtral-8x7b"])
def test_itl_at_one_request_is_its_decode_step_flat_in_the_prompt(model_id):
    """At C = 1 no other request prefills, so ITL is the one-request decode step at context P + G/2, whatever the
    prompt; from 128 to 8,192 prompt tokens it moves only by the KV read (an 8B model: 128 KiB a token against 16 GB
    of weights, a few per cent). Mixtral's prompt tokens no longer switch on every expert in its decode steps."""
    tp = 2 if model_id == "mixtral-8x7b" else 1
    s = scenario("h100-sxm", model_id, tp=tp)
    itls = []
    for prompt in (128, 1024, 8192):
        mix = ServingMix(prompt_tokens=prompt, output_tokens=256)
        p = frontier(s, mix, [1], options=NO_FIXED).points[0]
        alone = _step(s, decode_requests=1.0, prefill_prompts=0.0, context_tokens=prompt + 128.0,
                      prompt_tokens=prompt)
        assert p.itl_s == pytest.approx(alone, rel=1e-12)
        itls.append(p.itl_s)
    assert max(itls) / min(itls) < 1.10


def test_fixed_path_per_request_is_the_engine_profiles_once_in_ttft_and_never_in_bound():
    """vLLM's profile: 12.4 - 4.2 = 8.2 ms (tenstorrent/tt-inference-server#340). TTFT and e2e carry it once,
    ITL not at all; bound has none; an engine without a figure (generic) has 0."""
    s = scenario("h100-sxm", "llama-3.1-8b", engine="vllm")
    mix = ServingMix(prompt_tokens=512, output_tokens=128)
    assert engine_profile("vllm").request_overhead_s == pytest.approx(8.2e-3)
    assert request_overhead_s(s, "expected") == pytest.approx(8.2e-3)
    assert request_overhead_s(s, "bound") == 0.0
    assert request_overhead_s(scenario("h100-sxm", "llama-3.1-8b"), "expected") == 0.0
    with_fixed = frontier(s, mix, [1]).points[0]
    without = frontier(s, mix, [1], options=NO_FIXED).points[0]
    assert with_fixed.ttft_s - without.ttft_s == pytest.approx(8.2e-3, rel=1e-9)
    assert with_fixed.e2e_s - without.e2e_s == pytest.approx(8.2e-3, rel=1e-9)
    assert with_fixed.itl_s == without.itl_s
    assert with_fixed.request_overhead_s == pytest.approx(8.2e-3)
    assert frontier(s, mix, [1], "bound").points[0].request_overhead_s == 0.0


def test_poisson_at_a_concurrency_is_the_rate_whose_littles_law_concurrency_it_is():
    """arrivals="poisson" at C: the open loop's rate lambda with lambda * e2e = C; at that rate at_rate gives the
    same TTFT and ITL (M/D/1 queueing, groups of one: decoding requests see single-prompt chunks)."""
    s = scenario("h100-sxm", "llama-3.1-8b")
    mix = ServingMix(prompt_tokens=1000, output_tokens=200)
    p = frontier(s, mix, [16], options=ServingOptions(arrivals="poisson")).points[0]
    assert p.arrivals == "poisson" and p.prefill_group == 1.0
    assert p.requests_per_s * p.e2e_s == pytest.approx(16, rel=1e-6)
    q = at_rate(s, mix, p.requests_per_s)
    assert q.ttft_s == pytest.approx(p.ttft_s, rel=1e-3) and q.itl_s == pytest.approx(p.itl_s, rel=1e-3)
    with pytest.raises(ModelInputError):
        ServingOptions(arrivals="bursty")


def test_burst_queues_the_prompts_for_the_budget():
    """8 prompts of 10,000 tokens at once, budget 8192: x = 10000/8192 = 1.2207 steps a prompt; request k's first
    token comes with step ceil(k x): 2, 3, 4, 5, 7, 8, 9, 10 (mean 6.0); the model's closed form max(ceil(x),
    x (C + 1)/2 + 1/2) = 5.993 steps, each a full budget of prefill (0.8192 of a prompt) with nothing decoding."""
    s = scenario("h100-sxm", "llama-3.1-8b")
    mix = ServingMix(prompt_tokens=10_000, output_tokens=100)
    x = 10_000 / 8192
    assert np.mean([math.ceil(k * x) for k in range(1, 9)]) == 6.0
    steps = x * 9 / 2 + 0.5
    full = _step(s, decode_requests=0.0, prefill_prompts=8192 / 10_000, context_tokens=10_050.0, prompt_tokens=10_000)
    assert burst_ttft_s(s, mix, 8, options=NO_FIXED) == pytest.approx(steps * full, rel=1e-12)
    # a burst that fits one step is one step of all its prompts: the steady closed loop's group
    small = ServingMix(prompt_tokens=500, output_tokens=100)
    assert burst_ttft_s(s, small, 4, options=NO_FIXED) == pytest.approx(
        frontier(s, small, [4], options=NO_FIXED).points[0].ttft_s, rel=1e-12)


@pytest.mark.parametrize(("hw", "model_id", "tp", "engine"), [
    ("h100-sxm", "llama-3.1-8b", 1, "vllm"), ("h200", "mixtral-8x7b", 2, "sglang"),
    ("h100-sxm", "llama-3.1-70b", 4, "trtllm")])
@pytest.mark.parametrize("metric", ["ttft_s", "itl_s", "output_tokens_per_s_per_device"])
def test_the_serving_band_brackets_expected(hw, model_id, tp, engine, metric):
    """The band spans the stacks and arrival patterns; expected (closed loop, its engine, its fractions) is one of
    its cases, so low <= expected <= high, and for a rate the band is the stacks' spread alone."""
    s = scenario(hw, model_id, tp=tp, engine=engine)
    mix = ServingMix(prompt_tokens=2000, output_tokens=300)
    key = {"output_tokens_per_s_per_device": "tokens_per_s_per_device"}.get(metric, metric)
    expected = getattr(frontier(s, mix, [16]).points[0], key)
    low, high = serving_band(s, mix, metric, 16)
    assert low <= expected * (1 + 1e-12) and expected <= high * (1 + 1e-12)
    at = getattr(at_rate(s, mix, 1.0), key)
    low_r, high_r = serving_band(s, mix, metric, 16, rate_per_s=1.0)
    assert low_r <= at * (1 + 1e-12) and at <= high_r * (1 + 1e-12)


def test_a_poisson_arrival_prefills_its_whole_prompt_however_low_the_rate():
    """At 0.01 requests/s (about 0.01 requests in the engine on average) an arrival still brings one whole prompt:
    TTFT = half a mean step + the M/D/1 wait (nearly 0) + one step holding the 4,000-token prompt, about the
    one-request closed loop's TTFT (the same prefill step, and the half step on top)."""
    s = scenario("h100-sxm", "llama-3.1-8b")
    mix = ServingMix(prompt_tokens=4000, output_tokens=200)
    low = at_rate(s, mix, 0.01, options=NO_FIXED)
    one = frontier(s, mix, [1], options=NO_FIXED).points[0]
    prefill = _step(s, decode_requests=0.0, prefill_prompts=1.0, context_tokens=4100.0, prompt_tokens=4000)
    assert low.prefill_group == 1.0 and one.ttft_s == pytest.approx(prefill, rel=1e-12)
    assert low.ttft_s == pytest.approx(prefill + 0.5 * low.step_time_s, rel=1e-3)
