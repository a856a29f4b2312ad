"""llama.cpp's prompt path before mid-2024: FP16-accumulate cuBLAS GEMMs, the F16 copy of GGUF weights, the prompt
GEMM fraction from public pp512 runs, and the 512-token micro-batch that bounds the workspace."""

from __future__ import annotations

import dataclasses

import pytest

from roofline.models.engines import (
    DEQUANT_F16_COPY_BYTES_PER_WEIGHT,
    LLAMACPP_CUBLAS_PP512,
    LLAMACPP_METAL_PP512,
    LLAMACPP_MMQ_PP512,
    MMQ_MAX_BATCH_TOKENS,
    engine_profile,
    is_hbm,
    llamacpp_cublas_prompt_fraction,
)
from roofline.models.estimate import compute_and_memory_s, dequant_copy_bytes, micro_batches, scenario_ceilings
from roofline.models.inference import generation_ops
from roofline.models.memory import activation_bytes_per_device
from roofline.models.scenario import Batching, Parallelism, Scenario, released_precisions
from roofline.models.validation import (
    ValidationCase,
    ceilings_with_matmul_fraction,
    predict_under,
    solve_matmul_fraction,
)
from roofline.presets.loader import load_hardware, load_model


def _scenario(hardware: str, weights: str, engine: str, prompt: int = 512, output: int = 1,
              flash: bool = False) -> Scenario:
    model = load_model("llama-2-7b")
    return Scenario(hardware=load_hardware(hardware), model=model,
                    precisions=released_precisions(model, weights=weights, kv="fp16"),
                    batching=Batching(batch_size=1, prompt_tokens=prompt, output_tokens=output,
                                      flash_attention=flash),
                    parallelism=Parallelism(tp=1, pp=1), engine=engine)


@pytest.mark.parametrize(("hardware", "tok_per_s", "source", "fraction"), LLAMACPP_CUBLAS_PP512)
def test_each_prompt_fraction_reproduces_its_run(hardware, tok_per_s, source, fraction):
    """The fraction written in engines.py is the solved one (3 decimals) for its llama-bench pp512 run of LLaMA 7B F16,
    and at it ``expected`` gives the run's tok/s back: the table is derived, not typed in."""
    case = ValidationCase(id="x", family="x", scenario=_scenario(hardware, "fp16", "llamacpp-2023-12"),
                          metric="prefill_tokens_per_s", measured=tok_per_s)
    solved = solve_matmul_fraction(case)
    assert solved == pytest.approx(fraction, abs=5e-4)
    assert predict_under(case.scenario, ceilings_with_matmul_fraction(case.scenario, solved),
                         case.metric) == pytest.approx(tok_per_s, rel=1e-6)
    assert source.startswith("ggml-org/llama.cpp#")


def test_the_profiles_take_the_median_prompt_fraction():
    """0.516, 0.545, 0.546, 1.083 -> (0.545 + 0.546) / 2 = 0.5455, for both cuBLAS-prompt profiles; current builds
    (int8 MMQ for quantised prompts) take their own, from the current scoreboard (below)."""
    assert llamacpp_cublas_prompt_fraction() == pytest.approx(0.5455)
    for engine in ("llamacpp-2023-12", "llamacpp-2024-05"):
        assert engine_profile(engine).prompt_matmul_fraction == pytest.approx(0.5455)
        assert engine_profile(engine).prompt_dequant_to_f16
    assert not engine_profile("llamacpp").prompt_dequant_to_f16


def test_fp16_accumulation_doubles_the_geforce_gemm_rate_only():
    """RTX 4090: FP16-accumulate 330.3 TFLOP/s against the fp16 peak 165.2 (FP32 accumulate). Under llamacpp-2024-05
    the GEMM rate is 330.3e12 x 0.5455; under generic 165.2e12 x 0.775 (no measured fraction for the 4090). An H100 has
    no faster FP16-accumulate rate: the same engine runs at 989.4e12 x 0.545."""
    llama = scenario_ceilings(_scenario("rtx-4090", "fp16", "llamacpp-2024-05"), "expected")
    generic = scenario_ceilings(_scenario("rtx-4090", "fp16", "generic"), "expected")
    h100 = scenario_ceilings(_scenario("h100-sxm", "fp16", "llamacpp-2024-05"), "expected")
    assert llama.matmul_flops_per_s == pytest.approx(330.3e12 * 0.5455)
    assert llama.spec_matmul_flops_per_s == pytest.approx(330.3e12)
    assert generic.matmul_flops_per_s == pytest.approx(165.2e12 * 0.775)
    assert h100.matmul_flops_per_s == pytest.approx(989.4e12 * 0.5455)
    # the bound is every stack's ceiling and keeps the spec fp16 peak
    assert scenario_ceilings(_scenario("rtx-4090", "fp16", "llamacpp-2024-05"), "bound").matmul_flops_per_s == (
        pytest.approx(165.2e12))


def test_a_gguf_prompt_gemm_pays_the_f16_copy_and_a_decode_gemv_does_not():
    """qkv_proj of Llama-2-7B, Q4_0 (4.5 bits a weight), 512 tokens: 4096 x 12288 weights, so the copy adds
    4096 x 12288 x 4 B = 201.3 MB of memory traffic, 201.3e6 / (1008e9 x 0.875) s on an RTX 4090. The same GEMM in a
    decode step (1 token <= 32) reads the quantised weights only."""
    scenario = _scenario("rtx-4090", "q4_0", "llamacpp-2024-05")
    c = scenario_ceilings(scenario, "expected")
    assert c.gguf_prompt_copy_bytes_per_weight == DEQUANT_F16_COPY_BYTES_PER_WEIGHT == 4.0
    ops = generation_ops(scenario)
    qkv = next(op for op in ops.prefill if op.name == "qkv_proj")
    weights = 4096 * 12288
    assert dequant_copy_bytes(qkv, 4.0) == pytest.approx(weights * 4.0)
    no_copy = dataclasses.replace(c, gguf_prompt_copy_bytes_per_weight=0.0)
    extra_s = compute_and_memory_s(qkv, c)[1] - compute_and_memory_s(qkv, no_copy)[1]
    assert extra_s == pytest.approx(weights * 4.0 / (1008e9 * 0.875), rel=1e-9)
    decode_qkv = next(op for op in ops.decode_steps if op.name == "qkv_proj")
    assert MMQ_MAX_BATCH_TOKENS == 32
    assert float(dequant_copy_bytes(decode_qkv, 4.0)) == 0.0


def test_the_copy_only_applies_to_gguf_weights():
    """F16 weights are a native cuBLAS operand: no copy, whatever the engine."""
    scenario = _scenario("rtx-4090", "fp16", "llamacpp-2024-05")
    c = scenario_ceilings(scenario, "expected")
    qkv = next(op for op in generation_ops(scenario).prefill if op.name == "qkv_proj")
    no_copy = dataclasses.replace(c, gguf_prompt_copy_bytes_per_weight=0.0)
    assert compute_and_memory_s(qkv, c) == compute_and_memory_s(qkv, no_copy)


def test_the_workspace_is_the_same_under_every_engine():
    """Memory is physics, not engine behaviour: a 4096-token prompt holds min(B x P, 8192) = 4096 tokens of workspace
    under llama.cpp as under generic (llama.cpp's 512-token n_ubatch needs less; the footprint stays the larger,
    engine-free one). Per token with unfused attention: 2 x 32 heads x 4096 x 2 B of scores, the 16-bit stream
    (2 x 4096) and the widest intermediate (2 x 11008) at 2 B; plus 32,000 fp32 logits."""
    llama = activation_bytes_per_device(_scenario("rtx-4090", "q4_0", "llamacpp-2024-05", prompt=4096), 1)
    generic = activation_bytes_per_device(_scenario("rtx-4090", "q4_0", "generic", prompt=4096), 1)
    assert llama == generic == pytest.approx(4096 * (2 * 32 * 4096 * 2 + (2 * 4096 + 2 * 11008) * 2) + 32000 * 4)


def test_each_micro_batch_streams_the_weights_again():
    """A 4096-token prompt under llama.cpp runs as 8 micro-batches of 512 (n_ubatch), each a whole forward pass: the
    qkv_proj of Llama-2-7B streams its 4096 x 12288 Q4_0 weights (4.5 bits) 8 times, 8 x 28.3 MB; its FLOPs are those
    of 4096 tokens either way. The generic engine streams them once; a 512-token prompt is one micro-batch."""
    def qkv(engine: str, prompt: int, estimate: str = "expected"):
        scenario = _scenario("rtx-4090", "q4_0", engine, prompt=prompt)
        op = next(op for op in generation_ops(scenario).prefill if op.name == "qkv_proj")
        return op, scenario_ceilings(scenario, estimate)

    once = 4096 * 12288 * 4.5 / 8
    (llama, c_llama), (generic, c_generic) = qkv("llamacpp-2024-05", 4096), qkv("generic", 4096)
    # the op is the physics of the pass, the same under every engine: the micro-batches are charged in expected
    assert llama == generic and llama.weight_bytes == pytest.approx(once)
    assert llama.flops == pytest.approx(2 * 4096 * 4096 * 12288)
    assert micro_batches(llama, c_llama) == 8 and micro_batches(generic, c_generic) == 1
    assert micro_batches(llama, qkv("llamacpp-2024-05", 4096, "bound")[1]) == 1
    assert micro_batches(*qkv("llamacpp-2024-05", 512)) == 1
    # expected's memory term streams the weights 8 times at the profile's GGUF share, plus the F16 copy per micro-batch
    c = dataclasses.replace(c_llama, gguf_prompt_copy_bytes_per_weight=0.0, weight_stream_efficiency={})
    assert compute_and_memory_s(llama, c)[1] * c.mem_bw_bytes_per_s == pytest.approx(
        llama.memory_bytes + 7 * once)
    # the F16 copy follows the weights: one per micro-batch of more than 32 tokens
    assert dequant_copy_bytes(llama, 4.0, 8.0) == pytest.approx(8 * 4096 * 12288 * 4.0)


@pytest.mark.parametrize(("hardware", "tok_per_s", "fraction", "hbm"), LLAMACPP_MMQ_PP512)
def test_each_current_build_prompt_fraction_reproduces_its_run(hardware, tok_per_s, fraction, hbm):
    """The CUDA scoreboard's pp512 (Llama-2-7B Q4_0, -fa 0) solved under the current profile, 3 decimals."""
    case = ValidationCase(id="x", family="x", scenario=_scenario(hardware, "q4_0", "llamacpp"),
                          metric="prefill_tokens_per_s", measured=tok_per_s)
    assert solve_matmul_fraction(case) == pytest.approx(fraction, abs=5e-4)
    assert is_hbm(case.scenario.hardware) == hbm


@pytest.mark.parametrize(("hardware", "tok_per_s", "fraction"), LLAMACPP_METAL_PP512)
def test_each_metal_prompt_fraction_reproduces_its_run(hardware, tok_per_s, fraction):
    case = ValidationCase(id="x", family="x", scenario=_scenario(hardware, "q4_0", "llamacpp-metal"),
                          metric="prefill_tokens_per_s", measured=tok_per_s)
    assert solve_matmul_fraction(case) == pytest.approx(fraction, abs=5e-4)


def test_current_llama_cpp_prompts_reach_less_of_a_data_centre_part():
    """GeForce/RTX: 0.469, 0.579, 0.597, 0.742 -> (0.579 + 0.597) / 2 = 0.588; HBM (A100): 0.230. So a Q4_0 prompt
    GEMM on an H100 runs at 989.4e12 x 0.230 under llamacpp, at 0.588 of the RTX 4090's FP16-accumulate 330.3e12;
    Metal: 0.638, 0.708, 0.722, 0.751 -> 0.715."""
    now = engine_profile("llamacpp")
    assert now.prompt_matmul_fraction == pytest.approx(0.588)
    assert now.prompt_matmul_fraction_hbm == pytest.approx(0.230)
    h100 = scenario_ceilings(_scenario("h100-sxm", "q4_0", "llamacpp"), "expected")
    rtx = scenario_ceilings(_scenario("rtx-4090", "q4_0", "llamacpp"), "expected")
    assert h100.matmul_flops_per_s == pytest.approx(989.4e12 * 0.230)
    assert rtx.matmul_flops_per_s == pytest.approx(330.3e12 * 0.588)
    assert engine_profile("llamacpp-metal").prompt_matmul_fraction == pytest.approx(0.715)
    assert engine_profile("llamacpp-metal").matmul_fraction(load_hardware("a100-sxm4-80gb")) == pytest.approx(0.715)
