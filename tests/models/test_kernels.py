"""Runtime mode as a mechanism (kernels.py): kernels per layer per architecture kind, each charged its platform's
sourced cost per kernel in its mode. Worked by hand: one Llama-3.1-8B decode layer (eager against graph-captured
against compiled) and one DeepSeek-V3 MoE layer's kernels."""

from __future__ import annotations

import dataclasses

import pytest

from roofline.models import kernels
from roofline.models.estimate import fixed_cost_s, scenario_ceilings
from roofline.models.inference import estimate
from roofline.models.ops import layer_group_ops
from roofline.models.scenario import Batching, Parallelism, Scenario, released_precisions
from roofline.presets.loader import load_hardware, load_model


def _scenario(hardware: str, model_id: str, engine: str = "generic", tp: int = 1, weights: str | None = "bf16"):
    model = load_model(model_id)
    return Scenario(hardware=load_hardware(hardware), model=model,
                    precisions=released_precisions(model, weights=weights),
                    batching=Batching(batch_size=1, prompt_tokens=1024, output_tokens=64),
                    parallelism=Parallelism(tp=tp), engine=engine)


def _layer_fixed_s(scenario: Scenario, group: int = 0) -> tuple[float, float]:
    """(kernels, fixed s) of one decode layer of ``group`` under the scenario's expected ceilings (collectives left
    out: they pay their own latency)."""
    layers = scenario.model.layer_groups[group].count
    ops = [op for op in layer_group_ops(scenario, "decode", group, batch=1.0, context=1025.0)
           if op.kind != "collective"]
    c = scenario_ceilings(scenario, "expected")
    n = kernels.kernels_per_layer(ops, layers, c.kernel_set)
    return n, sum(op.count * fixed_cost_s(op, c) for op in ops) / layers


def test_a_llama_decode_layer_eager_against_graph_captured():
    """Llama-3.1-8B, one decode layer on an H100.

    Graph-captured (generic, vLLM-class fused kernels): 2 RMSNorms, qkv_proj, rope, attention, o_proj, 2 residual
    adds, gate_up, activation, down = 11 kernels x 4.0 us (NVIDIA CUDA Graphs blog) = 44 us.
    Compiled (gpt-fast, torch.compile): the 2 residual adds fuse into the next RMSNorm: 9 x 4.0 us = 36 us.
    Eager transformers (modeling_llama, one PyTorch op per kernel): 2 x 8 (RMSNorm) + 3 (q, k, v) + 10 (rotary on q
    and k) + 3 (two cache cats, sdpa) + 1 (o_proj) + 2 (adds) + 2 (gate, up) + 2 (SiLU, multiply) + 1 (down) = 40
    kernels x 7.0 us (PyTorch's H100 cost model, meta-pytorch/autoparallel#146) = 280 us: 6.4x the graph's.
    Over 32 layers the eager step pays (280 - 44) x 32 = 7.55 ms more.
    """
    graph = _scenario("h100-sxm", "llama-3.1-8b")
    compiled = dataclasses.replace(graph, engine="gpt-fast")
    eager = dataclasses.replace(graph, engine="transformers")
    assert _layer_fixed_s(graph) == (11, pytest.approx(44e-6))
    assert _layer_fixed_s(compiled) == (9, pytest.approx(36e-6))
    assert _layer_fixed_s(eager) == (40, pytest.approx(280e-6))
    step_graph = estimate(graph, "expected").decode.step_time_s
    step_eager = estimate(eager, "expected").decode.step_time_s
    outer = (8 + 1 + 1) * 7e-6 - 3 * 4e-6  # final norm (8), embedding, lm_head under eager; 3 kernels under graph
    assert step_eager - step_graph == pytest.approx((280e-6 - 44e-6) * 32 + outer, rel=1e-9)


def test_a_deepseek_v3_moe_layer_counts_its_routing_kernels():
    """DeepSeek-V3 on 8 x H200 (TP 8), one MoE decode layer, graph-captured:

    2 RMSNorms; MLA: q_a_proj, q_a_norm, q_b_proj, kv_a_proj, kv_a_norm, rope, q absorb (W_UK), attention over the
    latent, v absorb (W_UV), o_proj (10); 2 residual adds; router GEMM + top-k softmax (2); token alignment +
    grouped GEMM gate_up (2); activation (1); grouped GEMM down + weighted sum (2); the shared expert's gate_up,
    activation, down (3): 24 kernels, plus 2 all-reduces (collectives, at their latency).
    Fixed cost: 23 x 4.0 us + the alignment at its 8.2 us minimum (vllm-project/vllm#29642) = 100.2 us per layer.
    """
    s = _scenario("h200", "deepseek-v3", tp=8, weights=None)
    moe_group = next(i for i, g in enumerate(s.model.layer_groups) if g.moe)
    n, fixed = _layer_fixed_s(s, moe_group)
    assert n == 24
    assert fixed == pytest.approx(23 * 4e-6 + 8.2e-6)
    layers = s.model.layer_groups[moe_group].count
    collectives = [op for op in layer_group_ops(s, "decode", moe_group, batch=1.0, context=1025.0)
                   if op.kind == "collective"]
    assert sum(op.count for op in collectives) / layers == 2


def test_the_mode_cost_follows_the_platform():
    """Graph replay: CUDA 4.0 us, HIP graphs 3.9 us (ROCm/rocm-systems#10834), Metal 5.2 us per dispatch
    (antonellof/ferrox#149); a platform without a figure takes CUDA's and says so."""
    assert scenario_ceilings(_scenario("mi300x", "llama-3.1-8b"), "expected").kernel_overhead_s == pytest.approx(3.9e-6)
    assert scenario_ceilings(_scenario("m2-ultra", "llama-3.1-8b"), "expected").kernel_overhead_s == \
        pytest.approx(5.2e-6)
    cost, source = kernels.launch_cost("graph", "xla")
    assert cost == 4e-6 and source.startswith("no xla figure")
    assert kernels.platform(load_hardware("gaudi3")) == "hpu"
    assert kernels.platform(load_hardware("tpu-v5e")) == "xla"


def test_bound_pays_no_kernel_at_all():
    """bound's per-kernel cost is 0, so even the alignment's minimum run time is not charged."""
    s = _scenario("h200", "deepseek-v3", tp=8, weights=None)
    c = scenario_ceilings(s, "bound")
    moe_group = next(i for i, g in enumerate(s.model.layer_groups) if g.moe)
    assert all(fixed_cost_s(op, c) == 0.0
               for op in layer_group_ops(s, "decode", moe_group, batch=1.0, context=1025.0))


def test_every_mode_and_platform_cost_names_a_source():
    for (mode, where), (cost, source) in kernels.LAUNCH_COST_S.items():
        assert mode in kernels.RUNTIME_MODES and where in kernels.PLATFORMS
        assert 0 < cost < 1e-4 and len(source) > 20


def test_every_profile_and_mode_is_in_the_reports_assumptions():
    """report's assumptions name each profile's runtime mode with its per-kernel source, and every factor of its file
    with the source and date."""
    from roofline.models.engines import engine_ids, engine_profile
    from roofline.models.report import expected_assumption_rows

    for engine in engine_ids():
        rows = {r["name"]: r for r in expected_assumption_rows(_scenario("h100-sxm", "llama-3.1-8b", engine=engine))}
        profile = engine_profile(engine)
        assert f"runtime mode {profile.runtime_mode}" in rows["kernel_overhead_s"]["source"], engine
        for key, source in profile.sources.items():
            assert source in rows[f"engine factor ({key})"]["source"], (engine, key)


def test_a_profile_figure_replaces_its_modes_cost():
    """llama.cpp's Vulkan back end records the graph into command buffers at 0.876 us a dispatch
    (ROCm/rocm-systems#10834): its file's kernel_overhead_us replaces HIP graphs' 3.9 us on an MI300X."""
    c = scenario_ceilings(_scenario("mi300x", "llama-3.1-8b", engine="llamacpp-vulkan"), "expected")
    assert c.kernel_overhead_s == pytest.approx(0.88e-6) and c.runtime_mode == "graph"
