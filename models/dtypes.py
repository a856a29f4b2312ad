"""Numeric formats: storage bits per element and the dtype a matmul kernel computes in.

Bits per weight include the scales a format stores beside the values:

- ``int8``: per-channel scales, negligible over a row of thousands: 8.0.
- ``int4``: AWQ/GPTQ layout, groups of 128 with an fp16 scale and a packed 4-bit zero
  point (vllm ``quantization/awq.py``: qweight, qzeros [K/128, N/8] int32, scales fp16):
  4 + 16/128 + 4/128 = 4.15625.
- ``fp4``: OCP MXFP4, blocks of 32 with one 8-bit E8M0 scale: 4 + 8/32 = 4.25
  (OCP Microscaling Formats (MX) v1.0 specification, 2023).
- ``nvfp4``: NVIDIA NVFP4, E2M1 values in blocks of 16 with one FP8 E4M3 scale, plus one FP32 scale per
  tensor (negligible): 4 + 8/16 = 4.5 (NVIDIA Technical Blog, "Introducing NVFP4 for Efficient and Accurate
  Low-Precision Inference", 2025, https://developer.nvidia.com/blog/introducing-nvfp4-for-efficient-and-accurate-low-precision-inference/).

Activations (GEMM inputs, quantised on the fly) come in the float formats a tensor core takes: 16-bit, fp8, and
on Blackwell the two 4-bit formats, MXFP4 (``fp4``) and NVFP4 (``nvfp4``), with the same block scales as weights.
W4A4 (4-bit weights and activations) is what reaches a Blackwell part's fp4 peak; both 4-bit formats use it
(the hardware's ``fp4`` peak, :data:`PEAK_DTYPE`).
- GGUF (ggml ``block_*`` structs, ggml-common.h in ggml-org/llama.cpp):
  ``q8_0`` 34 bytes / 32 weights = 8.5; ``q6_k`` 210 bytes / 256 = 6.5625;
  ``q4_0`` 18 bytes / 32 = 4.5. The ``_k_m`` mixes keep some tensors at a higher type;
  their effective size over a Llama-class model is what llama.cpp's quantize tool reports
  for Llama-3.1-8B (``tools/quantize/README.md``): ``q5_k_m`` 5.70 and ``q4_k_m`` 4.89 bits
  per weight. Embeddings and the LM head are counted at the same rate as every other weight.
- AWQ / GPTQ at a named group size g (AutoAWQ and AutoGPTQ checkpoint layouts as vLLM reads them,
  ``quantization/awq.py`` and ``gptq.py``: packed 4-bit qweight, one fp16 scale and one packed 4-bit zero per
  group of g input rows and output column): 4 + 16/g + 4/g, so ``awq_g128`` = ``gptq_g128`` = 4.15625 (``int4``),
  ``*_g64`` 4.3125, ``gptq_g32`` 4.625. GPTQ's act-order ``g_idx`` (one int32 per input row, 32/N bits a weight)
  is under 0.01 at N >= 4096 and left out. ``marlin_g128``: symmetric GPTQ repacked for the Marlin kernel keeps
  scales only (IST-DASLab/marlin: groupsize 128, fp16 scales, no zeros): 4 + 16/128 = 4.125.
- MLX affine quantisation (``mlx.core.quantize``, mode ``affine``: a scale and a bias per group, both in the
  model's 16-bit dtype; default group 64, bits 4): b + 32/g, so ``mlx_q4`` (g64) 4.5, ``mlx_q4_g32`` 5.0,
  ``mlx_q8`` (g64) 8.5.
- MLC group quantisation (mlc-ai/mlc-llm ``python/mlc_llm/quantization/quantization.py``, ``GroupQuantize``:
  symmetric, one scale per group in the model dtype, values packed into uint32 words): ``mlc_q4f16_1``
  (int4, group 32, fp16 scale) 4 + 16/32 = 4.5; ``mlc_q4f32_1`` (fp32 scale) 4 + 32/32 = 5.0; ``mlc_q3f16_1``
  (int3, ten to a 32-bit word, group 40) 32/10 + 16/40 = 3.6.
- EXL2 (turboderp/exllamav2 ``doc/convert.md``: ``-b`` is the "target average number of bits per weight"; the
  converter picks per-layer settings, group scales included, to meet it): ``exl2_<bpw>`` is that bitrate, at the
  common published steps 2.5 to 8.0. The lm_head takes ``-hb`` (6 by default, "about 6.3 bits") and ExLlamaV2
  keeps the input embedding unquantised; both are counted at the model's rate here (an approximation that
  errs low for the head, by a few percent of the bytes on small-vocabulary models).
- EXL3 (turboderp-org/exllamav3, QTIP-style trellis codes at K bits per weight, fractional rates by mixing K over
  tensors; per-tensor sign vectors add 16 (in + out) / (in x out), under 0.01 bit): ``exl3_<bpw>`` at the common
  steps 2.0 to 8.0.
"""

from __future__ import annotations

from .errors import ModelInputError

WEIGHT_BITS_PER_ELEMENT: dict[str, float] = {
    "fp32": 32.0,
    "bf16": 16.0,
    "fp16": 16.0,
    "fp8": 8.0,
    "int8": 8.0,
    "int4": 4.15625,
    "fp4": 4.25,
    "nvfp4": 4.5,
    "q8_0": 8.5,
    "q6_k": 6.5625,
    "q5_k_m": 5.70,
    "q4_k_m": 4.89,
    "q4_0": 4.5,
    # AWQ / GPTQ at a named group size: 4 + (16-bit scale + 4-bit zero) / group
    "awq_g128": 4.15625,
    "awq_g64": 4.3125,
    "gptq_g128": 4.15625,
    "gptq_g64": 4.3125,
    "gptq_g32": 4.625,
    "marlin_g128": 4.125,
    # MLX affine: bits + (16-bit scale + 16-bit bias) / group
    "mlx_q4": 4.5,
    "mlx_q4_g32": 5.0,
    "mlx_q8": 8.5,
    # MLC group quantisation: packed bits + scale / group
    "mlc_q4f16_1": 4.5,
    "mlc_q4f32_1": 5.0,
    "mlc_q3f16_1": 3.6,
    # EXL2 / EXL3: the converter's target bits per weight
    **{f"exl2_{bpw}": float(bpw) for bpw in ("2.5", "3.0", "3.5", "4.0", "4.65", "5.0", "6.0", "8.0")},
    **{f"exl3_{bpw}": float(bpw) for bpw in ("2.0", "3.0", "4.0", "5.0", "6.0", "8.0")},
}

# The kernel family of each group-quantised format (AWQ/GPTQ group sizes, Marlin, MLX, MLC, EXL2/EXL3), for an
# engine profile that keys its dequantisation factor by family rather than by format.
WEIGHT_FORMAT_KERNEL_FAMILY: dict[str, str] = {
    **dict.fromkeys(("awq_g128", "awq_g64", "gptq_g128", "gptq_g64", "gptq_g32", "marlin_g128"), "int4"),
    **dict.fromkeys(("mlx_q4", "mlx_q4_g32", "mlx_q8"), "mlx"),
    **dict.fromkeys(("mlc_q4f16_1", "mlc_q4f32_1", "mlc_q3f16_1"), "mlc"),
    **{name: name.split("_")[0] for name in WEIGHT_BITS_PER_ELEMENT if name.startswith(("exl2_", "exl3_"))},
}

ACTIVATION_BITS_PER_ELEMENT: dict[str, float] = {
    "fp32": 32.0, "bf16": 16.0, "fp16": 16.0, "fp8": 8.0, "fp4": 4.25, "nvfp4": 4.5,
}

KV_BITS_PER_ELEMENT: dict[str, float] = {
    "fp32": 32.0,
    "bf16": 16.0,
    "fp16": 16.0,
    "fp8": 8.0,
    "int8": 8.0,
    "int4": 4.0,
}

# Float formats a tensor core can take directly as a matmul operand; everything else in
# WEIGHT_BITS_PER_ELEMENT is dequantised to the activation dtype inside the kernel.
_NATIVE_MATMUL_RANK: dict[str, int] = {"fp4": 0, "nvfp4": 0, "fp8": 1, "bf16": 2, "fp16": 2, "fp32": 3}

# The hardware peak a compute dtype runs at, where the two differ: both 4-bit block formats use the fp4 tensor
# cores (B200: "FP4" in NVIDIA's tables covers MXFP4 and NVFP4 alike).
PEAK_DTYPE: dict[str, str] = {"nvfp4": "fp4"}

# Weight formats stored at full precision: a module kept in one of them is not quantised at all (its GEMM
# inputs stay 16-bit too), as fp8/fp4 checkpoints do for the modules their config leaves unconverted.
UNQUANTISED_FORMATS = frozenset({"fp32", "bf16", "fp16"})


def _bytes(table: dict[str, float], dtype: str, what: str) -> float:
    try:
        return table[dtype] / 8.0
    except KeyError:
        known = " ".join(table)
        raise ModelInputError(what, f"unknown dtype {dtype!r} (known: {known})") from None


def weight_bytes_per_param(dtype: str) -> float:
    """Bytes one stored weight takes, scales included."""
    return _bytes(WEIGHT_BITS_PER_ELEMENT, dtype, "weights")


def activation_bytes_per_element(dtype: str) -> float:
    """Bytes per activation element."""
    return _bytes(ACTIVATION_BITS_PER_ELEMENT, dtype, "activations")


def kv_bytes_per_element(dtype: str) -> float:
    """Bytes per KV-cache element."""
    return _bytes(KV_BITS_PER_ELEMENT, dtype, "kv")


# GGUF integer formats: llama.cpp multiplies them with its MMQ kernels, which quantise the
# activations to 8-bit blocks (q8_1) and run int8 dot products, on int8 tensor cores since
# ggml-org/llama.cpp#7676 (q4_0..q8_0) and #7860 (k-quants). So their GEMMs can run at the int8
# peak, which on GeForce parts is 4x the FP32-accumulate bf16 rate (RTX 4090: 660.6 vs 165.2 TOPS).
GGUF_INTEGER_FORMATS = frozenset({"q8_0", "q6_k", "q5_k_m", "q4_k_m", "q4_0"})


def matmul_compute_dtype(weights: str, activations: str) -> str:
    """The dtype whose peak a weight GEMM runs at.

    The kernel computes in the wider of the two operand formats: weight-only quantisation
    (int8, int4, GGUF, or fp8/fp4 weights with bf16 activations) dequantises to the
    activation dtype and runs at its peak; fp8 weights with fp8 activations run at the fp8
    peak; fp32 weights force fp32.
    """
    weight_bytes_per_param(weights)
    activation_bytes_per_element(activations)
    if weights not in _NATIVE_MATMUL_RANK:
        return activations
    return weights if _NATIVE_MATMUL_RANK[weights] > _NATIVE_MATMUL_RANK[activations] else activations


def module_activations(module_weights: str, activations: str) -> str:
    """The GEMM input format of a module whose weights are ``module_weights``: a module left unquantised
    (16/32-bit weights) takes 16-bit inputs even when the rest of the model runs fp8 or fp4 activations."""
    if module_weights in UNQUANTISED_FORMATS and ACTIVATION_BITS_PER_ELEMENT[activations] < 16:
        return "bf16" if module_weights == "fp32" else module_weights
    return activations
