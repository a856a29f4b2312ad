"""The llama.cpp profiles: every decode GEMV share is recomputed from its public benchmark figure and the presets."""

from __future__ import annotations

import pytest

from roofline.models.engines import (
    LLAMACPP_2023_GEMV_SHARE,
    LLAMACPP_TG128,
    engine_profile,
    engines_for_vendor,
    llamacpp_share,
)
from roofline.models.scenario import Batching, Parallelism, Scenario, released_precisions
from roofline.models.validation import ValidationCase, ceilings_with_gemv_share, predict_under, solve_gemv_share
from roofline.presets.loader import load_hardware, load_model


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
    case = ValidationCase(id="x", family="x", scenario=_tg128(hardware), metric="decode_tokens_per_s_per_seq",
                          measured=tok_per_s)
    solved = solve_gemv_share(case)
    assert solved == pytest.approx(share, abs=5e-4)
    c = ceilings_with_gemv_share(case.scenario, solved)
    assert predict_under(case.scenario, c, case.metric) == pytest.approx(tok_per_s, rel=1e-6)


def test_profiles_take_the_median_of_their_backend():
    """CUDA: 0.985, 1.014, 1.064, 1.110, 1.236 -> 1.064; Metal: 0.625, 0.808, 0.816, 0.861 -> (0.808 + 0.816) / 2 =
    0.812; ROCm: (1.012 + 0.467) / 2 = 0.7395."""
    assert engine_profile("llamacpp").decode_gemv_bw_share == llamacpp_share("CUDA") == pytest.approx(1.064)
    assert engine_profile("llamacpp-metal").decode_gemv_bw_share == pytest.approx(0.812)
    assert engine_profile("llamacpp-rocm").decode_gemv_bw_share == pytest.approx(0.7395)


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
    """Apple devices run generic, MLC and llama.cpp Metal; the CUDA-only stacks are not among them."""
    ids = {e.id for e in engines_for_vendor("Apple")}
    assert ids == {"generic", "mlc", "llamacpp-metal"}
    nvidia = {e.id for e in engines_for_vendor("NVIDIA")}
    assert {"generic", "vllm", "sglang", "trtllm", "llamacpp", "mlc"} <= nvidia and "llamacpp-metal" not in nvidia
    assert {e.id for e in engines_for_vendor("AMD")} == {"generic", "gpt-fast", "mlc", "llamacpp-rocm", "rocm-eager"}
