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
