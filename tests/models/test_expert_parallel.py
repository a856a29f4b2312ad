"""Wide expert parallelism, worked by hand: one DeepSeek-V3 MoE layer's all-to-all at EP 32, weights per rank."""

from __future__ import annotations

import pytest

from roofline.models.errors import ModelInputError
from roofline.models.expert_parallel import (
    ExpertParallel,
    all_to_all,
    ep_memory,
    ep_pass,
    statistical_imbalance,
)
from roofline.models.scenario import Scenario, released_precisions
from roofline.presets import load_hardware, load_model

H = 7168  # DeepSeek-V3 hidden size; 256 routed experts, top 8
DISPATCH_B = 1 + 4 / 128  # FP8 + one fp32 scale per 128 channels
# a token's 8 experts miss a given rank's 8 experts (256/32) with prod_{i<8} (248-i)/(256-i) = 0.77291,
# and a given node's 64 experts (8 ranks) with prod_{i<8} (192-i)/(256-i) = 0.096446
P_RANK = 1 - 0.7729125
P_NODE = 1 - 0.0964464


def _scenario(hw_id: str) -> Scenario:
    model = load_model("deepseek-v3")
    return Scenario(hardware=load_hardware(hw_id), model=model, precisions=released_precisions(model))


def test_decode_layer_at_ep32_over_infiniband_by_hand():
    """8 x H200 nodes on 400 Gb/s NDR (50 GB/s one way), EP 32 = 4 nodes, 128 tokens per rank (DeepEP's case).

    expected (DeepEP low-latency kernels, every (token, expert) copy): 128 x 8 = 1,024 copies;
    dispatch 1,024 x 7,168 x 1.03125 = 7,569,408 B, combine 1,024 x 7,168 x 2 = 14,680,064 B; by construction the
    measured 155 us and 273 us come back at 128 tokens; at 64 tokens each is 14 us (one network hop) plus half the
    bytes time: 14 + (155 - 14) / 2 = 84.5 us and 14 + (273 - 14) / 2 = 143.5 us.

    bound: each token once per remote node it touches: 128 x 3 x 0.90355 = 346.97 copies, x 7,168 x 1.03125 B
    = 2.5648 MB over 50 GB/s = 51.30 us; combine at 2 B: 99.48 us.
    """
    s = _scenario("h200")
    cfg = ExpertParallel(ep=32)
    a = all_to_all(s, cfg, 128, "decode", "expected")
    assert a.mode == "low-latency" and a.link.bw_unidirectional_bytes_per_s == 50e9
    assert a.dispatch_bytes == pytest.approx(7_569_408)
    assert a.combine_bytes == pytest.approx(14_680_064)
    assert a.dispatch_s == pytest.approx(155e-6) and a.combine_s == pytest.approx(273e-6)
    half = all_to_all(s, cfg, 64, "decode", "expected")
    assert half.dispatch_s == pytest.approx(84.5e-6) and half.combine_s == pytest.approx(143.5e-6)
    b = all_to_all(s, cfg, 128, "decode", "bound")
    assert b.dispatch_s == pytest.approx(128 * 3 * P_NODE * H * DISPATCH_B / 50e9, rel=1e-5)
    assert b.dispatch_s == pytest.approx(51.30e-6, rel=1e-3)
    assert b.combine_s == pytest.approx(128 * 3 * P_NODE * H * 2 / 50e9, rel=1e-5)


def test_prefill_layer_at_ep32_over_infiniband_by_hand():
    """Normal kernels, 4,096 tokens per rank: logical bytes = tokens x nodes touched (own included) x H x 1.03125 =
    4,096 x 4 x 0.90355 x 7,168 x 1.03125 = 109.43 MB; at DeepEP's EP32 58 GB/s plus 14 us: 1.9007 ms."""
    a = all_to_all(_scenario("h200"), ExpertParallel(ep=32), 4096, "prefill", "expected")
    assert a.mode == "normal"
    assert a.dispatch_bytes == pytest.approx(4096 * 4 * P_NODE * H * DISPATCH_B, rel=1e-5)
    assert a.dispatch_s == pytest.approx(1.9007e-3, rel=1e-4)
    assert a.combine_s == pytest.approx(14e-6 + 4096 * 4 * P_NODE * H * 2 / 57e9, rel=1e-5)


def test_decode_layer_at_ep32_inside_nvl72_by_hand():
    """GB200 NVL72: 32 ranks stay in the 72-GPU NVLink domain (900 GB/s one way).

    expected: 1,024 copies, 7,569,408 B at DeepEP's intranode share 153/200 of 900 GB/s = 688.5 GB/s: 10.994 us,
    plus 8 us NVLink latency = 18.99 us. bound: once per other rank touched, 128 x 31 x 0.22709 = 901.1 copies,
    x 7,168 x 1.03125 B = 6.661 MB over 900 GB/s = 7.40 us. Both far under InfiniBand's 155 us and 51 us.
    """
    s = _scenario("gb200")
    e = all_to_all(s, ExpertParallel(ep=32), 128, "decode", "expected")
    assert e.link.kind == "nvswitch" and e.scale_out_bytes == 0.0
    assert e.dispatch_s == pytest.approx(8e-6 + 7_569_408 / 688.5e9, rel=1e-6)
    assert e.dispatch_s == pytest.approx(18.99e-6, rel=1e-3)
    b = all_to_all(s, ExpertParallel(ep=32), 128, "decode", "bound")
    assert b.dispatch_s == pytest.approx(128 * 31 * P_RANK * H * DISPATCH_B / 900e9, rel=1e-5)
    assert b.dispatch_s == pytest.approx(7.40e-6, rel=2e-3)


def test_faster_nic_scales_the_measured_bandwidth():
    """--fabric ib-xdr (100 GB/s) halves the bytes term of the 128-token decode dispatch: 14 + 141 / 2 = 84.5 us."""
    a = all_to_all(_scenario("h200"), ExpertParallel(ep=32, fabric="ib-xdr"), 128, "decode", "expected")
    assert a.dispatch_s == pytest.approx(84.5e-6)


def test_weights_and_kv_per_rank_by_hand():
    """DeepSeek-V3 routed experts: 653.91e9 parameters at fp8 (1 B): 653.91 GB over 32 ranks = 20.43 GB per rank;
    with 32 redundant slots (288 over 32 = 9 per rank) x 288/256 = 22.99 GB. KV (bf16 latent, 576 elements x 61
    layers x 2 B = 70,272 B per token): 3,000 tokens = 210.8 MB per request, the same under attention DP."""
    s = _scenario("h200")
    m = ep_memory(s, ExpertParallel(ep=32), tokens_per_request=3000)
    experts = s.model.routed_expert_params_total()
    assert m.expert_weights_bytes == pytest.approx(experts / 32)
    assert m.expert_weights_bytes == pytest.approx(20.43e9, rel=1e-3)
    r = ep_memory(s, ExpertParallel(ep=32, redundant_experts=32), tokens_per_request=3000)
    assert r.expert_weights_bytes == pytest.approx(experts * 288 / 256 / 32)
    assert m.kv_bytes_per_request == pytest.approx(576 * 61 * 2 * 3000)
    assert r.max_requests < m.max_requests  # the redundant copies take KV room
    assert m.weights_bytes > m.expert_weights_bytes  # attention, dense layers, shared experts replicated per rank


def test_imbalance_is_the_balls_into_bins_maximum():
    """m = 1,024 copies per rank, 32 ranks: 1 + sqrt(2 x 3.4657 / 1024) = 1.08227; one rank: 1; more copies: less."""
    assert statistical_imbalance(1024, 32) == pytest.approx(1.08227, rel=1e-4)
    assert statistical_imbalance(1024, 1) == 1.0
    assert statistical_imbalance(32768, 32) < statistical_imbalance(1024, 32)


@pytest.mark.parametrize("hw_id", ["h200", "gb200"])
@pytest.mark.parametrize(("phase", "requests"), [("decode", 1), ("decode", 128), ("prefill", 1), ("prefill", 4)])
def test_bound_is_never_slower_than_expected(hw_id, phase, requests):
    s = _scenario(hw_id)
    kwargs = dict(requests_per_rank=requests, context_tokens=2000, prompt_tokens=2000)
    for ep in (8, 32, 72):
        cfg = ExpertParallel(ep=ep)
        bound = ep_pass(s, cfg, phase, estimate_name="bound", **kwargs)
        expected = ep_pass(s, cfg, phase, estimate_name="expected", **kwargs)
        assert bound.time_s <= expected.time_s
        assert bound.imbalance == 1.0 <= expected.imbalance


def test_two_batch_overlap_hides_the_all_to_all():
    """With overlap the step is max(compute, all-to-all); without it their sum."""
    s = _scenario("h200")
    kwargs = dict(requests_per_rank=64, context_tokens=2000)
    on = ep_pass(s, ExpertParallel(ep=32), "decode", **kwargs)
    off = ep_pass(s, ExpertParallel(ep=32, two_batch_overlap=False), "decode", **kwargs)
    assert on.time_s == pytest.approx(max(on.compute_s, on.all_to_all_s))
    assert off.time_s == pytest.approx(off.compute_s + off.all_to_all_s)


def test_bad_layouts_are_refused_in_one_line():
    s = _scenario("h200")
    with pytest.raises(ModelInputError, match="at least one expert per rank"):
        ep_memory(s, ExpertParallel(ep=512), tokens_per_request=100)
    with pytest.raises(ModelInputError, match="one of dp, tp"):
        ExpertParallel(ep=8, attention="sp")
    dense = Scenario(hardware=load_hardware("h200"), model=load_model("llama-3.1-8b"))
    with pytest.raises(ModelInputError, match="no routed experts"):
        ep_pass(dense, ExpertParallel(ep=8), "decode", requests_per_rank=1)
