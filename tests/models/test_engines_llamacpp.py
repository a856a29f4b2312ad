"""The llama.cpp profiles: every decode GEMV share is recomputed from its public benchmark figure and the presets."""

from __future__ import annotations

import dataclasses

import pytest

from roofline.models.engines import (
    LLAMACPP_2023_GEMV_SHARE,
    LLAMACPP_TG128,
    LLAMACPP_TG_HBM,
    engine_profile,
    engines_for_vendor,
    is_hbm,
    llamacpp_share,
)
from roofline.models.inference import generation_ops
from roofline.models.scenario import Batching, Parallelism, Scenario, released_precisions
from roofline.models.validation import (
    ValidationCase,
    ceilings_with_gemv_share,
    predict_under,
    scenario_ceilings,
    solve_gemv_share,
)
from roofline.presets.loader import load_hardware, load_model

BACKEND_ENGINE = {"CUDA": "llamacpp", "ROCm": "llamacpp-rocm", "Metal": "llamacpp-metal"}


def _tg128(hardware: str, engine: str = "llamacpp") -> Scenario:
    """llama-bench's tg128: Llama-2-7B Q4_0, 128 tokens generated from an empty context (prompt modelled as 1)."""
    model = load_model("llama-2-7b")
    return Scenario(hardware=load_hardware(hardware), model=model,
                    precisions=released_precisions(model, weights="q4_0", kv="fp16"),
                    batching=Batching(batch_size=1, prompt_tokens=1, output_tokens=128),
                    parallelism=Parallelism(tp=1, pp=1), engine=engine)


@pytest.mark.parametrize(("hardware", "backend", "tok_per_s", "share"), LLAMACPP_TG128)
def test_each_listed_share_is_the_one_that_reproduces_its_run(hardware, backend, tok_per_s, share):
    """The share written in engines.py is the solved one (3 decimals), and at that share ``expected`` reproduces the
    scoreboard's tok/s to the rounding: the table is derived, not typed in."""
    case = ValidationCase(id="x", family="x", scenario=_tg128(hardware, BACKEND_ENGINE[backend]),
                          metric="decode_tokens_per_s_per_seq", measured=tok_per_s)
    solved = solve_gemv_share(case)
    assert solved == pytest.approx(share, abs=5e-4)
    c = ceilings_with_gemv_share(case.scenario, solved)
    assert predict_under(case.scenario, c, case.metric) == pytest.approx(tok_per_s, rel=1e-6)


def test_profiles_take_the_median_of_their_backend():
    """GDDR and unified memory, each run solved under its backend's profile. CUDA: 0.968, 0.996, 1.068, 1.100,
    1.219 -> 1.068; Metal (5.2 us per dispatch): 0.662, 0.844, 0.862, 0.899 -> (0.844 + 0.862) / 2 = 0.853; ROCm (HIP
    graphs, 3.9 us per kernel): the RX 7900 XTX alone, 1.004."""
    assert engine_profile("llamacpp").decode_gemv_bw_share == llamacpp_share("CUDA") == pytest.approx(1.068)
    assert engine_profile("llamacpp-metal").decode_gemv_bw_share == pytest.approx(0.853)
    assert engine_profile("llamacpp-rocm").decode_gemv_bw_share == pytest.approx(1.004)


@pytest.mark.parametrize(("hardware", "backend", "weights", "tok_per_s", "engine", "source", "share"), LLAMACPP_TG_HBM)
def test_each_hbm_share_reproduces_its_run(hardware, backend, weights, tok_per_s, engine, source, share):
    """Each HBM run's share is the solved one under the profile of its build (128 tokens from an empty context)."""
    model = load_model("llama-2-7b")
    scenario = Scenario(hardware=load_hardware(hardware), model=model,
                        precisions=released_precisions(model, weights=weights, kv="fp16"),
                        batching=Batching(batch_size=1, prompt_tokens=1, output_tokens=128),
                        parallelism=Parallelism(tp=1, pp=1), engine=engine)
    case = ValidationCase(id="x", family="x", scenario=scenario, metric="decode_tokens_per_s_per_seq",
                          measured=tok_per_s)
    assert solve_gemv_share(case) == pytest.approx(share, abs=5e-4)
    assert engine_profile(engine).decode_gemv_bw_share_hbm == pytest.approx(share)
    assert source


def test_hbm_devices_take_the_hbm_share():
    """llama.cpp's GEMV kernels reach about half of an A100's or H100's bandwidth against all of a GeForce's: on an
    A100 (HBM2e) the current profile streams q4_0 at 0.606, on an RTX 4090 (GDDR6X) at 1.068; profiles without an HBM
    figure (Metal, generic) use their one share everywhere."""
    a100, rtx = load_hardware("a100-sxm4-80gb"), load_hardware("rtx-4090")
    assert is_hbm(a100) and not is_hbm(rtx) and is_hbm(load_hardware("mi300x"))
    now = engine_profile("llamacpp")
    assert now.weight_stream_efficiency("q4_0", "bf16", a100) == pytest.approx(0.606)
    assert now.weight_stream_efficiency("q4_0", "bf16", rtx) == pytest.approx(1.068)
    assert now.weight_stream_efficiency("q4_0", "bf16") == pytest.approx(1.068)  # no device named: the GDDR share
    assert engine_profile("llamacpp-rocm").gemv_share(load_hardware("mi100")) == pytest.approx(0.465)
    assert engine_profile("llamacpp-metal").gemv_share(a100) == engine_profile("llamacpp-metal").decode_gemv_bw_share


def test_the_2023_profile_keeps_the_old_build_figure():
    """ggml-org/llama.cpp#2641: 7B Q4_1 (5 bits) at 75.91 tok/s on an A100-SXM4-80GB whose achievable bandwidth is
    0.834 x 2039 GB/s: 6.74e9 x 5 / 8 x 75.91 / 1.7005e12 = 0.188."""
    assert engine_profile("llamacpp-2023").decode_gemv_bw_share == LLAMACPP_2023_GEMV_SHARE
    assert pytest.approx(6.74e9 * 5 / 8 * 75.91 / (0.834 * 2039e9)) == LLAMACPP_2023_GEMV_SHARE
    assert pytest.approx(0.188, abs=5e-4) == LLAMACPP_2023_GEMV_SHARE


def test_a_gguf_row_under_the_profile_streams_at_its_share():
    """GGUF formats take no further dequantisation factor (the share was measured with dequantisation inside): the
    q4_0 weight-stream efficiency is the share itself, under every llama.cpp profile."""
    for engine in ("llamacpp", "llamacpp-metal", "llamacpp-rocm", "llamacpp-2023"):
        profile = engine_profile(engine)
        assert profile.weight_stream_efficiency("q4_0", "bf16") == profile.decode_gemv_bw_share


def test_engines_for_a_vendor():
    """Apple devices run generic, MLC, MLX and llama.cpp Metal; the CUDA-only stacks are not among them."""
    ids = {e.id for e in engines_for_vendor("Apple")}
    assert {"generic", "mlc", "mlx", "llamacpp-metal"} <= ids and not ids & {"vllm", "sglang", "trtllm", "llamacpp"}
    nvidia = {e.id for e in engines_for_vendor("NVIDIA")}
    assert {"generic", "vllm", "sglang", "trtllm", "llamacpp", "mlc"} <= nvidia and "llamacpp-metal" not in nvidia
    amd = {e.id for e in engines_for_vendor("AMD")}
    assert {"generic", "gpt-fast", "mlc", "llamacpp-rocm", "rocm-eager"} <= amd and "llamacpp" not in amd


def _decode_step_s(engine: str, weights: str, hardware: str = "rtx-3090") -> float:
    """The mean decode step of llama-bench's tg128 for Llama-2-7B under ``engine``."""
    model = load_model("llama-2-7b")
    scenario = Scenario(hardware=load_hardware(hardware), model=model,
                        precisions=released_precisions(model, weights=weights, kv="fp16"),
                        batching=Batching(batch_size=1, prompt_tokens=1, output_tokens=128),
                        parallelism=Parallelism(tp=1, pp=1), engine=engine)
    return 1.0 / predict_under(scenario, scenario_ceilings(scenario, "expected"), "decode_tokens_per_s_per_seq")


def test_the_late_2023_profile_launches_kernels_one_by_one():
    """llamacpp-2023-12 is the May-2024 profile (current GEMV share, cuBLAS prompt GEMMs) with the host's dispatch per
    kernel (9.6 us, NVIDIA's CUDA Graphs blog) instead of the graph rate (4 us; llama.cpp's CUDA graphs came in May
    2024), and its own HBM share. On a GDDR card (RTX 3090) the decode steps differ by exactly (9.6 - 4) us times the
    kernels of one step."""
    late, may = engine_profile("llamacpp-2023-12"), engine_profile("llamacpp-2024-05")
    rtx = _tg128("rtx-3090")
    assert scenario_ceilings(dataclasses.replace(rtx, engine=late.id), "expected").kernel_overhead_s == \
        pytest.approx(9.6e-6) and late.runtime_mode == "eager-sync" and not late.cuda_graphs
    assert scenario_ceilings(dataclasses.replace(rtx, engine=may.id), "expected").kernel_overhead_s == \
        pytest.approx(4e-6) and may.cuda_graphs
    assert dataclasses.replace(late, id=may.id, name=may.name, runtime_mode=may.runtime_mode,
                               decode_gemv_bw_share_hbm=may.decode_gemv_bw_share_hbm,
                               sources=may.sources, source_dates=may.source_dates, notes=may.notes) == may
    assert late.decode_gemv_bw_share == engine_profile("llamacpp").decode_gemv_bw_share
    kernels = sum(op.count for op in generation_ops(_tg128("rtx-3090")).decode_steps if op.kind != "collective")
    assert 300 < kernels < 400
    difference_s = _decode_step_s("llamacpp-2023-12", "q4_0") - _decode_step_s("llamacpp-2024-05", "q4_0")
    assert difference_s == pytest.approx(kernels * 5.6e-6, rel=1e-6)


def test_the_late_2023_profile_against_independent_runs_of_its_period():
    """ggml-org/llama.cpp#4766 (January 2024, before CUDA graphs), RTX 3090, LLaMA 7B tg128: Q4_0 121.82 tok/s, F16
    48.52 tok/s; no figure of those runs set any factor. By hand, Q4_0: 3.83 GB at 936 GB/s x 0.875 x 1.064 = 4.4 ms
    plus about 355 kernels x 9.6 us = 3.4 ms: 7.8 ms, 128 tok/s, 4 % fast; F16: 13.5 GB -> 15.5 ms + 3.4 ms: 53 tok/s,
    10 % fast. The current-build profile (4 us a kernel) is 20-40 % fast on both."""
    for weights, measured in (("q4_0", 121.82), ("fp16", 48.52)):
        late = 1 / _decode_step_s("llamacpp-2023-12", weights)
        now = 1 / _decode_step_s("llamacpp", weights)
        assert abs(late / measured - 1) < 0.12
        assert abs(late / measured - 1) < abs(now / measured - 1)


def test_mlx_streams_4_bit_weights_at_the_16_bit_rate():
    """mlx: 4-bit weights at the 16-bit rate (ml-explore/mlx#3852 kernel timing), against generic's 0.617 (gpt-fast).
    Llama-3-70B int4 on an M3 Max, batch 1: the two decode steps differ by the weight bytes' extra time alone,
    W x (1 / 0.617 - 1) / bandwidth, W = the step's weight bytes."""
    assert engine_profile("mlx").weight_stream_efficiency("int4", "bf16") == 1.0
    assert engine_profile("mlx").weight_stream_efficiency("int8", "bf16") == pytest.approx(0.765, abs=1e-3)
    model = load_model("llama-3-70b")

    def step_s(engine: str) -> tuple[float, float, float]:
        s = Scenario(hardware=load_hardware("m3-max"), model=model,
                     precisions=released_precisions(model, weights="int4", kv="fp16"),
                     batching=Batching(batch_size=1, prompt_tokens=1, output_tokens=2),
                     parallelism=Parallelism(tp=1, pp=1), engine=engine)
        c = scenario_ceilings(s, "expected")
        weight_bytes = sum(float(op.weight_bytes) * op.count for op in generation_ops(s).decode_steps)
        return 1 / predict_under(s, c, "decode_tokens_per_s_per_seq"), weight_bytes, c.mem_bw_bytes_per_s

    mlx_s, weight_bytes, bw = step_s("mlx")
    generic_s, _, _ = step_s("generic")
    assert 30e9 < weight_bytes < 40e9
    assert generic_s - mlx_s == pytest.approx(weight_bytes * (1 / (862.69 / 1397.31) - 1) / bw, rel=1e-3)
