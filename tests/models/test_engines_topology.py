"""Engine profiles and TP topology: numbers derived by hand, and the default that keeps the earlier estimate."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline.models.engines import (
    DEFAULT_ENGINE,
    WEIGHT_ONLY_STREAM_EFFICIENCY_4BIT,
    engine_ids,
    engine_profile,
)
from roofline.models.errors import ModelInputError
from roofline.models.estimate import (
    ceilings,
    compute_and_memory_s,
    expected_assumptions,
    scenario_ceilings,
    time_op,
)
from roofline.models.inference import estimate
from roofline.models.ops import build_ops
from roofline.models.topology import (
    TOPOLOGIES,
    default_topology,
    ring_all_reduce_s,
    ring_bottleneck,
    ring_links,
)
from roofline.models.validation import generation_times

from ..conftest import hardware, scenario


def _with(s, **changes):
    return dataclasses.replace(s, **changes)


# --- the default engine and derived topology keep the estimate as it was ---------------------------------------

# From a run of the code before engines and topologies (commit 0f4304f, inference.estimate "expected"):
# (hardware, model, scenario options) -> (prefill s, mean decode step s).
BEFORE = [
    # H100 SXM, Llama-3.1-8B, P = 1024, G = 256, batch 1. By hand: the step streams the weights less the embedding
    # table, (8.03e9 - 128256 * 4096) * 2 B = 15.01 GB, at 0.887 * 3350 GB/s = 2971 GB/s: 5.05 ms; 11 kernels per
    # layer * 32 + 3 = 355 kernels at 4 us: 1.42 ms; KV at the mean context ~1152: 32 * 1152 * 8 * 256 * 2 B =
    # 151 MB, 0.05 ms. About 6.52 ms; the rest is activations and the small ops' compute (times add).
    ("h100-sxm", "llama-3.1-8b", {}, 0.028934328067321373, 0.0065460875439849915),
    # TP 2 on the A100 PCIe NVLink bridge: the preset's 600 GB/s link, as before
    ("a100-pcie-80gb", "llama-3.1-8b", {"tp": 2, "prompt": 512, "output": 64}, 0.024192605744930738,
     0.006439677783975142),
    # a PCIe-only card at TP 4: the preset's PCIe figure and 40 us, as before
    ("l40s", "llama-3.1-8b", {"tp": 4, "prompt": 512, "output": 64}, 0.03525822829487847, 0.009107622893189124),
    # Infinity Fabric at TP 8; HIP graphs at 3.9 us per kernel (kernels.py): 80 x 11 + 3 = 883 kernels, each 0.1 us
    # below the earlier 4 us, so 88.3 us less than the earlier 1.4303735190514046 s and 0.010123398523810924 s
    ("mi300x", "llama-3.1-70b", {"tp": 8, "batch": 16, "prompt": 2048, "output": 128},
     1.4303735190514046 - 883 * 0.1e-6, 0.010123398523810924 - 883 * 0.1e-6),
    # int4 weight-only: the generic 0.617 dequantisation factor
    ("a100-sxm4-80gb", "llama-2-7b", {"weights": "int4", "prompt": 5, "output": 200}, 0.0049650047057895955,
     0.0047779827599842405),
]


@pytest.mark.parametrize(("hw", "model", "options", "prefill_s", "step_s"), BEFORE)
def test_default_engine_and_topology_give_the_earlier_numbers(hw, model, options, prefill_s, step_s):
    s = scenario(hw, model, **options)
    assert s.engine == DEFAULT_ENGINE == "generic" and s.topology is None
    prefill, step, _ = generation_times(s, scenario_ceilings(s, "expected"))
    assert prefill == pytest.approx(prefill_s, rel=1e-12)
    assert step == pytest.approx(step_s, rel=1e-12)
    e = estimate(s, "expected")  # the estimate's own path agrees
    assert e.prefill.time_s == pytest.approx(prefill_s, rel=1e-12)
    assert e.decode.step_time_s == pytest.approx(step_s, rel=1e-12)


def test_h100_step_matches_its_hand_derivation():
    s = scenario("h100-sxm", "llama-3.1-8b")
    weights_s = (8.03e9 - 128256 * 4096) * 2 / (0.887 * 3350e9)
    kernels_s = (11 * 32 + 3) * 4e-6
    kv_s = 32 * 1152 * 8 * 256 * 2 / (0.887 * 3350e9)
    _, step, _ = generation_times(s, scenario_ceilings(s, "expected"))
    assert step == pytest.approx(weights_s + kernels_s + kv_s, rel=0.01)


def test_gpt_fast_is_the_generic_profile_compiled():
    """gpt-fast runs torch.compile with CUDA graphs: the generic factors in the compiled runtime mode."""
    generic, gpt_fast = engine_profile("generic"), engine_profile("gpt-fast")
    assert gpt_fast.runtime_mode == "compiled"
    assert dataclasses.replace(gpt_fast, id="generic", name=generic.name, notes=generic.notes, runtime_mode="graph",
                               vendors=generic.vendors) == generic


def test_bound_ignores_the_engine():
    hw = hardware("h100-sxm")
    base = ceilings(hw, "bf16", "bound")
    for engine in engine_ids():
        assert dataclasses.replace(ceilings(hw, "bf16", "bound", engine=engine), engine="generic") == base


def test_unknown_engine_and_topology_name_their_field():
    s = scenario("h100-sxm", "llama-3.1-8b")
    with pytest.raises(ModelInputError) as err:
        _with(s, engine="nope")
    assert err.value.field == "engine" and "vllm" in str(err.value)
    with pytest.raises(ModelInputError) as err:
        _with(s, topology="token-ring")
    assert err.value.field == "topology" and "nvlink-bridge" in str(err.value)


# --- engine factors, by hand -----------------------------------------------------------------------------------


def test_eager_launch_cost_on_a_small_decode_step():
    """Llama-3.1-8B decode on one MI300X: 32 layers x 11 kernels (2 norms, qkv, rope, attention, o_proj, 2 residual
    adds, gate_up, activation, down) + embedding, final norm, lm_head = 355 kernels. The ROCm eager profile pays
    11 us per kernel (pytorch/pytorch#196920) instead of HIP graphs' 3.9 us (ROCm/rocm-systems#10834): the step grows
    by 355 x 7.1 us = 2.5205 ms and by nothing else."""
    s = scenario("mi300x", "llama-3.1-8b", prompt=128, output=2)
    ops = build_ops(s, "decode", batch=1.0, context=129.0)
    kernels = sum(op.count for op in ops if op.kind != "collective")
    assert kernels == 11 * 32 + 3
    generic = scenario_ceilings(s, "expected")
    eager = scenario_ceilings(_with(s, engine="rocm-eager"), "expected")
    assert eager.kernel_overhead_s == pytest.approx(11e-6) and eager.runtime_mode == "eager"
    assert generic.kernel_overhead_s == pytest.approx(3.9e-6) and generic.runtime_mode == "graph"
    step = sum(op.count * time_op(op, generic).time_s for op in ops)
    step_eager = sum(op.count * time_op(op, eager).time_s for op in ops)
    assert step_eager - step == pytest.approx(355 * 7.1e-6, rel=1e-9)


def test_query_head_kv_reads_multiply_attention_kv_bytes_by_the_gqa_group():
    """Llama-3.1-8B: 32 query heads, 8 KV heads (group 4), head dim 128, bf16 KV. At context 1000 and batch 1 the
    decode attention reads 1000 * 8 * (128 + 128) * 2 B = 4,096,000 B of KV per layer. Read once per query head
    (TensorRT-LLM 0.5) that is 4x: 12,288,000 B more, at the expected bandwidth 0.887 * 3350 GB/s."""
    s = scenario("h100-sxm", "llama-3.1-8b")
    attention = next(op for op in build_ops(s, "decode", batch=1.0, context=1000.0) if op.kind == "attention")
    assert attention.kv_read_bytes == 1000 * 8 * 256 * 2 == 4_096_000
    per_kv_head = scenario_ceilings(_with(s, engine="trtllm"), "expected")
    per_query_head = scenario_ceilings(_with(s, engine="trtllm-0.5"), "expected")
    _, memory_s = compute_and_memory_s(attention, per_kv_head)
    _, memory_q_s = compute_and_memory_s(attention, per_query_head)
    assert memory_q_s - memory_s == pytest.approx(12_288_000 / (0.887 * 3350e9), rel=1e-9)
    # the GEMMs are untouched
    qkv = next(op for op in build_ops(s, "decode", batch=1.0, context=1000.0) if op.name == "qkv_proj")
    assert compute_and_memory_s(qkv, per_kv_head) == compute_and_memory_s(qkv, per_query_head)


def test_engine_dequantisation_replaces_the_generic_factor_per_format():
    """int4 weights on bf16: generic 0.617 (gpt-fast); vLLM's Marlin 1.0; llama.cpp's GGUF kernels take its
    measured GEMV share (the Aug-2023 build's 0.188 of the achievable bandwidth) and no further factor."""
    generic = engine_profile("generic")
    assert generic.weight_stream_efficiency("int4", "bf16") == WEIGHT_ONLY_STREAM_EFFICIENCY_4BIT
    assert engine_profile("vllm").weight_stream_efficiency("int4", "bf16") == 1.0
    assert engine_profile("vllm").weight_stream_efficiency("int8", "bf16") == generic.weight_stream_efficiency(
        "int8", "bf16")
    share = 6.74e9 * 5 / 8 * 75.91 / (0.834 * 2039e9)
    assert share == pytest.approx(0.188, abs=0.001)
    assert engine_profile("llamacpp-2023").weight_stream_efficiency("q4_0", "bf16") == pytest.approx(share)
    assert engine_profile("llamacpp-2023").weight_stream_efficiency("bf16", "bf16") == pytest.approx(share)


def test_a_slower_engine_is_never_faster_than_the_bound():
    s = scenario("a100-sxm4-80gb", "llama-2-7b", weights="int4", prompt=5, output=20)
    _, bound_step, _ = generation_times(s, scenario_ceilings(s, "bound"))
    for engine in engine_ids():
        e = _with(s, engine=engine)
        _, step, _ = generation_times(e, scenario_ceilings(e, "expected"))
        assert step > bound_step


# --- topology, by hand -----------------------------------------------------------------------------------------


def test_a100_pcie_tp4_on_bridge_pairs_is_slower_per_collective_byte_than_tp2():
    """A100 PCIe cards joined in pairs by an NVLink 3 bridge (600 GB/s both ways, 300 one way) on a PCIe 4.0 x16
    host (32 GB/s one way). Decode, batch 1, Llama-3.1-8B: an all-reduce of M = 4096 * 2 B = 8192 B.
    TP 2, on the bridge: 2 * 1/2 * 8192 B = 8192 B at 0.8 * 300 GB/s = 34.1 ns, plus 8 us: 8.034 us.
    TP 4, ring 0-1 (bridge), 1-2 (PCIe), 2-3 (bridge), 3-0 (PCIe): the PCIe steps set the pace,
    2 * 3/4 * 8192 B = 12288 B at 0.8 * 32 GB/s = 480 ns, plus 40 us: 40.48 us."""
    hw = hardware("a100-pcie-80gb")
    assert default_topology(hw) == "nvlink-bridge"
    kinds = [link.kind for link in ring_links(hw, 4)]
    assert kinds == ["nvlink-bridge", "pcie-host", "nvlink-bridge", "pcie-host"]
    times = {}
    for tp in (2, 4):
        s = scenario("a100-pcie-80gb", "llama-3.1-8b", tp=tp, prompt=128, output=2)
        c = scenario_ceilings(s, "expected")
        op = next(op for op in build_ops(s, "decode", batch=1.0, context=129.0) if op.name == "all-reduce (mlp)")
        times[tp] = (time_op(op, c).time_s, op.comm_bytes, c)
        assert time_op(op, c).time_s == pytest.approx(ring_all_reduce_s(8192, tp, ring_bottleneck(hw, tp), 0.8))
    assert times[2][1] == 8192 and times[4][1] == 12288
    assert times[2][0] == pytest.approx(8192 / 240e9 + 8e-6, rel=1e-12)
    assert times[4][0] == pytest.approx(12288 / 25.6e9 + 40e-6, rel=1e-12)
    # per collective byte: the link itself, 1/(0.8 * 300 GB/s) vs 1/(0.8 * 32 GB/s)
    assert times[4][2].link_bw_bytes_per_s == pytest.approx(25.6e9)
    assert times[2][2].link_bw_bytes_per_s == pytest.approx(240e9)


def test_stated_topology_overrides_the_preset():
    """An NVSwitch box has no PCIe hop; stating pcie-switch on H100 PCIe cards gives PCIe 5.0 (64 GB/s one way)
    at the PLX latency of 20 us for every TP size."""
    s = scenario("h100-pcie", "llama-3.1-8b", tp=4, prompt=128, output=2)
    c = scenario_ceilings(_with(s, topology="pcie-switch"), "expected")
    assert c.link_kind == "pcie-switch"
    assert c.link_bw_bytes_per_s == pytest.approx(0.8 * 64e9)
    assert c.collective_latency_s == pytest.approx(20e-6)


def test_custom_all_reduce_replaces_the_latency_where_it_runs():
    """vLLM's custom all-reduce (9 us) on NVSwitch and on two PCIe GPUs; NCCL's latency for four PCIe GPUs."""
    nv = scenario("h100-sxm", "llama-3.1-8b", tp=4, prompt=128, output=2)
    assert scenario_ceilings(_with(nv, engine="vllm"), "expected").collective_latency_s == pytest.approx(9e-6)
    pcie2 = scenario("l40s", "llama-3.1-8b", tp=2, prompt=128, output=2)
    pcie4 = scenario("l40s", "llama-3.1-8b", tp=4, prompt=128, output=2)
    assert scenario_ceilings(_with(pcie2, engine="vllm"), "expected").collective_latency_s == pytest.approx(9e-6)
    assert scenario_ceilings(_with(pcie4, engine="vllm"), "expected").collective_latency_s == pytest.approx(40e-6)


@pytest.mark.parametrize("hw_id", ["a100-pcie-80gb", "h100-pcie", "h100-nvl", "rtx-3090", "l40s", "h100-sxm",
                                   "mi300x", "tpu-v5e"])
def test_default_topologies_of_presets(hw_id):
    expected = {"a100-pcie-80gb": "nvlink-bridge", "h100-pcie": "nvlink-bridge", "h100-nvl": "nvlink-bridge",
                "rtx-3090": "nvlink-bridge", "l40s": "pcie-host", "h100-sxm": "nvswitch", "mi300x": "xgmi",
                "tpu-v5e": "fabric"}
    assert default_topology(hardware(hw_id)) == expected[hw_id]


@settings(max_examples=40, deadline=None)
@given(hw_id=st.sampled_from(["a100-pcie-80gb", "h100-nvl", "rtx-3090", "l40s", "h100-sxm", "mi300x"]),
       topology=st.sampled_from((None, *TOPOLOGIES)), tp=st.integers(2, 8))
def test_a_larger_ring_is_never_faster_per_byte(hw_id, topology, tp):
    """Adding devices to a ring can only add slower links: its bottleneck bandwidth never rises with tp."""
    hw = hardware(hw_id)
    assert ring_bottleneck(hw, tp + 1, topology).bw_unidirectional_bytes_per_s <= \
        ring_bottleneck(hw, tp, topology).bw_unidirectional_bytes_per_s


def test_assumptions_name_the_engine_and_the_ring_only_when_asked():
    hw = hardware("a100-pcie-80gb")
    default = expected_assumptions(hw, "bf16", ("int4",))
    assert [r.name for r in default] == [
        "mem_bw_fraction", "matmul_fraction (bf16)", "vector_fraction (fp32)", "attention_kernel_efficiency",
        "compute_memory_overlap", "weight_only_stream_efficiency (int4)", "kernel_overhead_s",
        "collective_latency_s", "link_bw_fraction"]
    rows = {r.name: r for r in expected_assumptions(hw, "bf16", ("int4",), engine="trtllm-0.5", tp=4)}
    assert rows["link_bw (pcie-host)"].value == 32e9
    assert rows["collective_latency_s"].value == 40e-6 and "pcie-host" in rows["collective_latency_s"].source
    assert "TensorRT-LLM#407" in rows["decode_kv_reads"].source
