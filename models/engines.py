"""Serving-engine profiles: what a stack changes in the ``expected`` estimate (never in ``bound``).

The profiles are data files, ``presets/engines/<id>.toml`` (one per stack, each factor with its ``source`` and
``date``), read by ``presets/`` (the only file reader) and handed in once through :func:`use_profiles`; this module
holds the :class:`Engine` schema, the registry they are looked up in (:func:`engine_profile`), and the public runs and
pure functions that solved figures are derived from (a test recomputes each solved figure of the TOML from its runs).

A profile holds, per engine:

- ``runtime_mode``: how kernels are launched (``graph``, ``compiled``, ``eager`` from Python, ``eager-sync``, or
  ``unknown``), which kernels.py turns into kernels per op and a cost per kernel on the device's platform;
- ``unfused_modules``: the stack runs framework modules op by op (transformers), counted by kernels.py;
- ``kernel_overhead_s``: a measured per-kernel cost of this stack that replaces its mode's (``None``: the mode's);
- ``superseded`` / ``in_band``: whether the band (band.py) spans this profile when the scenario names another;
- ``kv_reads_per_query_head``: decode attention reads each KV head once per query head of its GQA group (early
  TensorRT-LLM masked MHA) instead of once per KV head;
- ``decode_gemv_bw_share``: share of the achievable memory bandwidth its weight-streaming GEMMs reach (1.0: the
  device's measured streaming rate);
- ``dequant_efficiency``: streaming efficiency per weight-format family (:func:`weight_format_family`) of its
  weight-only kernels, replacing the generic 8-bit / narrower factors for the families it names;
- ``gemm_fp16_accumulate``: its 16-bit GEMMs ask cuBLAS for FP16 accumulation (``CUBLAS_COMPUTE_16F``), so they
  run at the device's FP16-accumulate rate where it exceeds the FP32-accumulate one (GeForce);
- ``prompt_dequant_to_f16``: a GEMM over GGUF weights and more than :data:`MMQ_MAX_BATCH_TOKENS` tokens first
  dequantises the weights into an F16 buffer (one write and one read of 2 bytes a weight more), then runs one cuBLAS
  GEMM;
- ``prompt_matmul_fraction``: the share of the tensor peak (the FP16-accumulate one where it applies) its GEMMs
  reach, in place of the device's measured GEMM fraction; ``None``: the device's;
- ``prompt_matmul_fraction_hbm``: the same on HBM devices, where the profile has its own figure;
- ``prefill_chunk_tokens``: the most prompt tokens one pass holds (llama.cpp's ``n_ubatch``), which bounds the
  prefill workspace; ``None``: the estimate's default chunk;
- ``custom_all_reduce_latency_s``: small-message latency of its own all-reduce where it runs one (NVLink-class
  links, or two GPUs over PCIe), ``None``: the topology's (NCCL) latency;
- ``vendors``: the device vendors the stack runs on (what the uncertainty band, :func:`engines_for_vendor`, spans).

Every figure carries its source; a factor without a public figure keeps the generic value, and the profile's
``notes`` say so. ``generic`` (the default, :data:`DEFAULT_ENGINE`) is graph-captured with the generic factors (the
dataclass defaults: models used without presets get it alone); ``gpt-fast`` is the same factors compiled, because
they were measured on gpt-fast; ``unknown`` (:data:`UNKNOWN_ENGINE`) is a stack whose mode is not known.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from .dtypes import GGUF_INTEGER_FORMATS, WEIGHT_BITS_PER_ELEMENT
from .errors import ModelInputError
from .hardware import Hardware
from .kernels import RUNTIME_MODES  # noqa: F401 (the schema's modes, read by presets/)

# Per-kernel costs by runtime mode and platform: kernels.LAUNCH_COST_S.

# Weight-only streaming efficiency, gpt-fast's A100 Llama-2-7B (README; measured-dev GF-01..03): effective weight
# bandwidth 1397 GB/s at bf16, 1069 GB/s at int8 (0.765) and 863 GB/s at int4 (0.617). The only engine factors
# fitted on the development set (see validation.leave_one_family_out).
WEIGHT_ONLY_STREAM_EFFICIENCY_8BIT = 1069.20 / 1397.31
WEIGHT_ONLY_STREAM_EFFICIENCY_4BIT = 862.69 / 1397.31

# Marlin (IST-DASLab/marlin README, Frantar et al. arXiv:2408.11743): FP16xINT4 "close to ideal (4x) speedups up
# to batchsizes of 16-32 tokens": the 4-bit weights stream at the 16-bit kernel's rate. Taken at its word (1.0);
# a claim, not a measured fraction. vLLM and SGLang run GPTQ/AWQ int4 checkpoints through Marlin on Ampere+.
MARLIN_INT4_EFFICIENCY = 1.0
# MLC-LLM q4f16_1 (4 bits + an fp16 scale per 32 weights = 4.5 bits): Llama-2-7B decode on an RTX 4090 at
# 191.0 tok/s (mlc-ai/llm-perf-bench PR #1, MLC commit 502f680): 6.74e9 * 4.5 / 8 = 3.79 GB per token ->
# 724 GB/s, 0.82 of the generic achievable 0.875 * 1008 GB/s (the rtx-4090 preset has no measured fraction). The
# whole step is counted as weight streaming, so this is a floor on the kernel's efficiency.
MLC_Q4F16_EFFICIENCY = 6.74e9 * 4.5 / 8 * 191.0 / (0.875 * 1008e9)
# llama.cpp CUDA on an A100-SXM4-80GB: Llama-7B Q4_1 (5 bits per weight) decode at 75.91 tok/s
# (ggml-org/llama.cpp#2641, build 992, Aug 2023): 6.74e9 * 5 / 8 = 4.21 GB per token -> 320 GB/s, 0.188 of the
# preset's achievable 0.834 * 2039 GB/s. The whole step counts as streaming. Kept as ``llamacpp-2023``: later builds
# (MMVQ, CUDA graphs, 2024) are several times faster, and this share made held-out llama.cpp rows 68.8 % off.
LLAMACPP_2023_GEMV_SHARE = 6.74e9 * 5 / 8 * 75.91 / (0.834 * 2039e9)

# llama.cpp CUDA GEMMs (ggml-cuda, ggml_cuda_op_mul_mat_cublas): cublasGemmEx with CUBLAS_COMPUTE_16F for F16 weights
# and for dequantised quantised ones, in builds from 2023 (ggml commit ff904332, 2023-11-03) to mid-2024 and after
# (ggml 2173cbe6, 2024-06-26); a proposal to switch to FP32 accumulation was closed unmerged
# (ggml-org/llama.cpp#3816). On GeForce parts FP16 accumulation runs at twice the FP32-accumulate tensor rate.
# From ggml-org/llama.cpp#3776 (October 2023) until #8075 (June 2024) a quantised GEMM over more than 32 tokens
# (MMQ_MAX_BATCH_SIZE) on a tensor-core GPU dequantised the weights into an F16 buffer and ran cuBLAS; from #8075 on,
# int8 tensor-core MMQ kernels take quantised weights at every batch size.
MMQ_MAX_BATCH_TOKENS = 32
# llama.cpp evaluates a prompt in micro-batches of n_ubatch = 512 tokens (ggml-org/llama.cpp#6017, March 2024: "By
# default ... n_ubatch is 512"; before it, one batch of n_batch = 512).
LLAMACPP_UBATCH_TOKENS = 512
# llama.cpp's prompt processing through cuBLAS (builds of late 2023 to June 2024): llama-bench pp512 of LLaMA 7B F16,
# one GPU, from public runs that are not rows of the held-out files: (device preset, tok/s, source, solved fraction).
# Each fraction is the tensor-peak share (FP16-accumulate peak on GeForce) at which ``expected`` under
# ``llamacpp-2023-12`` (unfused attention, 512-token prompt, 1 token out, compute and memory times adding) equals the
# figure (validation.solve_matmul_fraction; tests/models/test_engines_llamacpp_prompt.py recomputes them). Three devices
# sit at 0.51-0.55; the RTX 4090 solves above 1 (an effective factor: it beats the model's additive times). The
# same runs' quantised pp512 solve 4-7 % lower with the F16 copy counted (3090 Q4_0 0.479, A100 Q8_0 0.477, 3090 Ti
# Q4_0 0.532): the copy accounts for the rest.
LLAMACPP_CUBLAS_PP512: tuple[tuple[str, float, str, float], ...] = (
    ("rtx-3090", 4184.85, "ggml-org/llama.cpp#4766 (Jan 2024, master column, JohannesGaessler)", 0.516),
    ("rtx-3090-ti", 4851.38, "ggml-org/llama.cpp#3816 (Oct 2023, build 1433)", 0.546),
    ("rtx-4090", 11048.22, "ggml-org/llama.cpp#4766 (Jan 2024, ggerganov)", 1.083),
    ("a100-pcie-80gb", 8668.24, "ggml-org/llama.cpp#6017 (Mar 2024, one A100 80GB PCIe, ggerganov)", 0.545),
)


# Current llama.cpp builds run quantised prompts through their own int8 tensor-core kernels (MMQ, since
# ggml-org/llama.cpp#8075). The CUDA scoreboard's pp512 (Llama-2-7B Q4_0, -fa 0, one GPU; discussions #15013, figures
# as transcribed in third-party copies of the thread, each run's commit in the thread) solved under ``llamacpp``
# (validation.solve_matmul_fraction): about 0.6 of the (FP16-accumulate on GeForce) tensor peak on GeForce and RTX
# cards, 0.23 on an A100 (variant not stated; PCIe and SXM solve the same). The H100 run (9918 tok/s) is left out:
# its PCIe or SXM variant is not stated (0.22 or 0.15). (device preset, tok/s, solved fraction, HBM).
LLAMACPP_MMQ_PP512: tuple[tuple[str, float, float, bool], ...] = (
    ("rtx-5090", 14073.41, 0.597, False),   # commit 8cf6b42
    ("rtx-4090", 11992.70, 0.742, False),   # commit 2241453
    ("rtx-6000-ada", 9229.23, 0.469, False),   # commit b8e09f0
    ("rtx-3090", 5174.69, 0.579, False),   # commit c76b420
    ("a100-sxm4-80gb", 4849.53, 0.230, True),   # commit 5143fa8
)
# The Metal scoreboard's pp512 (ggml-org/llama.cpp discussions #4167, LLaMA 7B v2 Q4_0, build 8e672ef, November 2023)
# solved under ``llamacpp-metal``: (device preset, tok/s, solved fraction).
LLAMACPP_METAL_PP512: tuple[tuple[str, float, float], ...] = (
    ("m1-max", 530.06, 0.708),   # 32-core GPU
    ("m2-ultra", 1238.48, 0.638),   # 76-core GPU
    ("m3-max", 759.70, 0.751),   # 40-core GPU
    ("m4-max", 885.68, 0.722),   # 40-core GPU
)


def llamacpp_mmq_prompt_fraction(hbm: bool) -> float:
    """The median solved fraction of :data:`LLAMACPP_MMQ_PP512`'s runs on HBM devices, or on the others."""
    return _median([fraction for _, _, fraction, on_hbm in LLAMACPP_MMQ_PP512 if on_hbm == hbm])


def llamacpp_metal_prompt_fraction() -> float:
    """The median solved fraction of :data:`LLAMACPP_METAL_PP512`."""
    return _median([fraction for _, _, fraction in LLAMACPP_METAL_PP512])


def llamacpp_cublas_prompt_fraction() -> float:
    """The median solved fraction of :data:`LLAMACPP_CUBLAS_PP512`."""
    return _median([fraction for _, _, _, fraction in LLAMACPP_CUBLAS_PP512])


# The F16 copy: 2 bytes a weight written by the dequantisation kernel and 2 read again by the GEMM.
DEQUANT_F16_COPY_BYTES_PER_WEIGHT = 4.0


# Current llama.cpp builds: llama-bench's standard test (Llama-2-7B Q4_0, 3.56 GiB, -ngl 99, -fa 0, tg128: 128
# tokens from an empty context), one GPU, from the backends' public scoreboards: CUDA
# https://github.com/ggml-org/llama.cpp/discussions/15013 and ROCm .../discussions/15021 (figures as transcribed,
# with each run's llama.cpp commit, in a third-party catalogue's seed table, accessed 2026-08-12), Metal
# https://github.com/ggml-org/llama.cpp/discussions/4167 (M-series table, "LLaMA 7B v2"). Each share is the decode
# GEMV bandwidth share at which ``expected`` under its backend's profile (prompt 1, output 128, f16 KV, decode tok/s)
# equals the figure (validation.solve_gemv_share; tests/models/test_engines_llamacpp.py recomputes every one from the
# presets). A share above 1 means llama.cpp beats the generic assumptions on that device (the default achievable
# fraction 0.875 of spec bandwidth and 4 us per kernel): it is an effective factor, not a bandwidth fraction.
# (device preset, backend, tg128 tok/s, solved share). None of these runs is a row of the held-out files.
LLAMACPP_TG128: tuple[tuple[str, str, float, float], ...] = (
    ("rtx-5090", "CUDA", 290.02, 1.219),   # commit 8cf6b42
    ("rtx-4090", "CUDA", 186.21, 1.100),   # commit 2241453
    ("rtx-6000-ada", "CUDA", 176.07, 1.068),   # commit b8e09f0
    ("rtx-3090-ti", "CUDA", 171.19, 0.996),   # commit 9c35706
    ("rtx-3090", "CUDA", 158.16, 0.968),   # commit c76b420
    ("rx-7900-xtx", "ROCm", 167.11, 1.004),   # commit 2f0c2db
    ("m1-max", "Metal", 61.19, 0.844),   # 32-core GPU
    ("m2-ultra", "Metal", 94.27, 0.662),   # 76-core GPU
    ("m3-max", "Metal", 66.31, 0.899),   # 40-core GPU
    ("m4-max", "Metal", 83.06, 0.862),   # 40-core GPU
)


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


# The same kernels on HBM devices reach a much smaller share of their bandwidth (the maintainers: the CUDA code "was
# never tuned for A100/H100", ggml-org/llama.cpp#4747). Batch-1 decode runs on HBM parts, each solved under the
# profile of its build: (device preset, backend, weights, tok/s, profile, source, solved share). None is a row of the
# held-out files. The H100 of the CUDA scoreboard (267.81 tok/s) is left out: its PCIe or SXM variant is not stated
# (0.94 or 0.55).
LLAMACPP_TG_HBM: tuple[tuple[str, str, str, float, str, str, float], ...] = (
    ("a100-sxm4-80gb", "CUDA", "q4_0", 190.88, "llamacpp",
     "discussions #15013, A100 80GB (variant not stated; PCIe solves 0.587), commit 5143fa8, tg128", 0.606),
    ("h100-pcie", "CUDA", "q4_k_m", 163.83, "llamacpp-2024-05",
     "ggml-org/llama.cpp#6763 (April 2024, H100 PCIe, Llama-2-7B Q4_K_M, with CUDA graphs)", 0.499),
    ("a100-pcie-80gb", "CUDA", "fp16", 74.77, "llamacpp-2023-12",
     "ggml-org/llama.cpp#6017 (March 2024, one A100 80GB PCIe, LLaMA 7B F16 tg128)", 0.791),
    ("mi100", "ROCm", "q4_0", 110.48, "llamacpp-rocm", "discussions #15021, commit 9c35706, tg128", 0.465),
)


def llamacpp_share(backend: str) -> float:
    """The median solved share of one backend's scoreboard runs on GDDR and unified memory
    (:data:`LLAMACPP_TG128`)."""
    return _median([share for _, b, _, share in LLAMACPP_TG128 if b == backend])


def llamacpp_hbm_share(profile: str) -> float:
    """The HBM share of one build's profile: the median of :data:`LLAMACPP_TG_HBM`'s runs solved under it (one run
    per build today)."""
    return _median([share for *_, engine, _, share in LLAMACPP_TG_HBM if engine == profile])


# MLX (Apple's array framework, mlx-lm), affine group-wise 4-bit weights (group 64: 4.5 bits a weight). Kernel
# timings with fresh weights each run: one 5120 x 17408 layer at batch 1 streams its 4-bit weights at about 398 GB/s
# on an M3 Max (ml-explore/mlx#3852, MLX 0.32: the 400 GB/s spec), its bf16 weights at 80 % of spec on an M3 Ultra
# (ml-explore/mlx#4265): the 4-bit kernel streams at least as fast as the 16-bit one, so 1.0 (as Marlin's). Whole-model
# runs on one M2 Ultra give 0.89 (Llama-3-70B 4-bit 14.9 tok/s x 39.1 GB = 583 GB/s, MLX 0.13, mlx-examples#776;
# bf16 4.7 tok/s x 139 GB = 653 GB/s five months later, mlx-examples#1069), with the MLX version changed between them.
MLX_INT4_EFFICIENCY = 1.0

# Custom all-reduce latency, small messages (<= 32 KB) on H100 NVLink, TP 2-8, without CUDA graphs
# (sgl-project/sglang#2904): vLLM's kernel 8.5-11.8 us, SGLang's (adapted from TensorRT-LLM's) 3.7-7.8 us. The
# midpoints of the <= 4 KB rows: 9 us and 5 us.
VLLM_CUSTOM_ALL_REDUCE_LATENCY_S = 9e-6
SGLANG_CUSTOM_ALL_REDUCE_LATENCY_S = 5e-6

# The fixed path of one request (HTTP, tokenising, scheduling, detokenising): TTFT at one request in flight and a
# prompt whose prefill is negligible, less one decode step (TPOT, the first token's own forward pass, which the serving
# model already counts). vLLM: Qwen3-0.6B on an A100, ISL 128 / OSL 128, concurrency 1: TTFT 12.4 ms, TPOT 4.2 ms
# (tenstorrent/tt-inference-server#340, GPU reference sweep, 2025-06-24). SGLang 0.4.6 and TensorRT-LLM 1.1: gpt2
# fp16 (prefill negligible) on an RTX 4070, trace replay at its heaviest load (wineandchord.com "LLM inference from
# scratch 076"): SGLang TTFT p50 7.80 ms, TensorRT-LLM TTFT p90 6.30 ms (its p50 is not given); figures under load, so
# upper ends of the idle path.
VLLM_REQUEST_OVERHEAD_S = 12.4e-3 - 4.2e-3
SGLANG_REQUEST_OVERHEAD_S = 7.80e-3
TRTLLM_REQUEST_OVERHEAD_S = 6.30e-3
_REQUEST_VLLM = "tenstorrent/tt-inference-server#340: Qwen3-0.6B, A100, ISL 128, C=1: TTFT 12.4 ms - TPOT 4.2 ms"
_REQUEST_SGLANG = ("wineandchord.com 'LLM inference from scratch 076': SGLang 0.4.6, gpt2, TTFT p50 7.80 ms under "
                   "load (an upper end)")
_REQUEST_TRTLLM = ("wineandchord.com 'LLM inference from scratch 076': TensorRT-LLM 1.1, gpt2, TTFT p90 6.30 ms under "
                   "load (an upper end)")

def is_hbm(hardware: Hardware) -> bool:
    """Whether the device's memory is HBM (its preset's ``memory_type``: HBM, HBM2, HBM2e, HBM3, HBM3e)."""
    return hardware.memory_type.upper().startswith("HBM")


def weight_format_family(weight_dtype: str, compute_dtype: str) -> str:
    """The kernel family a weight format runs through: ``native`` when the weights are an operand of the kernel
    (16/32-bit, or the compute dtype itself), ``gguf`` for llama.cpp's block formats, else the dtype."""
    if weight_dtype == compute_dtype or weight_dtype in ("fp32", "bf16", "fp16"):
        return "native"
    if weight_dtype in GGUF_INTEGER_FORMATS:
        return "gguf"
    return weight_dtype


def generic_weight_only_efficiency(weight_dtype: str, compute_dtype: str) -> float:
    """The generic rule: 1.0 for native operands; the 8-bit factor for 8-bit and wider formats, the 4-bit one for
    narrower (gpt-fast's figures, above)."""
    if weight_format_family(weight_dtype, compute_dtype) == "native":
        return 1.0
    if WEIGHT_BITS_PER_ELEMENT[weight_dtype] >= 8:
        return WEIGHT_ONLY_STREAM_EFFICIENCY_8BIT
    return WEIGHT_ONLY_STREAM_EFFICIENCY_4BIT


@dataclass(frozen=True, slots=True, kw_only=True)
class Engine:
    """One serving stack's kernel and runtime traits (see the module docstring)."""

    id: str
    name: str
    # how the stack launches its kernels (kernels.py charges each kernel by it): graph, compiled, eager, host-loop, or
    # unknown (the band spans every mode)
    runtime_mode: str = "graph"
    # the stack runs framework modules op by op (Hugging Face transformers in eager PyTorch: an RMSNorm is eight
    # kernels, kernels.UNFUSED_KERNELS) instead of fused custom kernels
    unfused_modules: bool = False
    # a measured per-kernel cost of this stack replacing its runtime mode's (kernels.LAUNCH_COST_S); None: the mode's
    kernel_overhead_s: float | None = None
    kv_reads_per_query_head: bool = False
    decode_gemv_bw_share: float = 1.0
    decode_gemv_bw_share_hbm: float | None = None
    dequant_efficiency: dict[str, float] = field(default_factory=dict)
    custom_all_reduce_latency_s: float | None = None
    gemm_fp16_accumulate: bool = False
    prompt_dequant_to_f16: bool = False
    prefill_chunk_tokens: int | None = None
    prompt_matmul_fraction: float | None = None
    prompt_matmul_fraction_hbm: float | None = None
    vendors: tuple[str, ...] = ("NVIDIA",)
    # the fixed path of one request outside the forward passes (HTTP, tokenising, scheduling, detokenising): added
    # once to TTFT by the serving model (models/serving/), never to bound; 0: no public figure
    request_overhead_s: float = 0.0
    # a release current builds replaced: the band leaves it out unless the scenario names it
    superseded: bool = False
    # in other profiles' bands (False: a generic mode variant or a framework run op by op, which widen the band only
    # when named or under ``unknown``)
    in_band: bool = True
    # factor -> where its value comes from, and the date of that source (presets/engines/*.toml)
    sources: dict[str, str] = field(default_factory=dict)
    source_dates: dict[str, str] = field(default_factory=dict)
    notes: str = ""

    @property
    def cuda_graphs(self) -> bool:
        """Whether the stack replays captured graphs (the graph and compiled runtime modes)."""
        return self.runtime_mode in ("graph", "compiled")

    def matmul_fraction(self, hardware: Hardware | None = None) -> float | None:
        """The GEMM share of the tensor peak this engine reaches on ``hardware`` (its HBM figure on an HBM device
        where it has one); ``None``: the device's own measured fraction applies."""
        if self.prompt_matmul_fraction_hbm is not None and hardware is not None and is_hbm(hardware):
            return self.prompt_matmul_fraction_hbm
        return self.prompt_matmul_fraction

    def gemv_share(self, hardware: Hardware | None = None) -> float:
        """The decode GEMV bandwidth share on ``hardware``: the HBM figure on an HBM device where the profile has one,
        else the profile's share."""
        if self.decode_gemv_bw_share_hbm is not None and hardware is not None and is_hbm(hardware):
            return self.decode_gemv_bw_share_hbm
        return self.decode_gemv_bw_share

    def weight_stream_efficiency(self, weight_dtype: str, compute_dtype: str,
                                 hardware: Hardware | None = None) -> float:
        """Streaming efficiency of this engine's GEMMs over ``weight_dtype`` weights: its format-family figure
        (else the generic rule) times its decode GEMV bandwidth share on ``hardware``."""
        family = weight_format_family(weight_dtype, compute_dtype)
        dequant = self.dequant_efficiency.get(family)
        if dequant is None:
            dequant = generic_weight_only_efficiency(weight_dtype, compute_dtype)
        return dequant * self.gemv_share(hardware)

    def uses_generic_dequant(self, weight_dtype: str, compute_dtype: str) -> bool:
        """Whether this engine's figure for ``weight_dtype`` is the generic (development-set-fitted) factor."""
        family = weight_format_family(weight_dtype, compute_dtype)
        return family != "native" and family not in self.dequant_efficiency


DEFAULT_ENGINE = "generic"
UNKNOWN_ENGINE = "unknown"
# Without profiles handed in (models used on their own), the default profile alone: every factor at its generic value.
GENERIC = Engine(id=DEFAULT_ENGINE, name="generic (graph-captured decode, gpt-fast-measured dequantisation)",
                 vendors=("NVIDIA", "AMD", "Apple", "Intel", "Google"))

# The profiles are data (presets/engines/*.toml), read by presets/ and handed in here once through
# :func:`use_profiles` (a loader called on the first lookup, so importing costs nothing); models/ never reads a file.
_profiles: dict[str, Engine] = {}
_load_profiles: Callable[[], Mapping[str, Engine]] | None = None


def use_profiles(load: Callable[[], Mapping[str, Engine]]) -> None:
    """Hand in the engine profiles: ``load()`` returns them by id and is called once, on the first lookup."""
    global _load_profiles
    _load_profiles = load
    _profiles.clear()


def profiles() -> Mapping[str, Engine]:
    """Every engine profile by id (the default profile alone when none were handed in)."""
    if not _profiles:
        loaded = dict(_load_profiles()) if _load_profiles is not None else {}
        default = loaded.pop(DEFAULT_ENGINE, GENERIC)
        _profiles.update({DEFAULT_ENGINE: default, **loaded})
    return _profiles


def engine_ids() -> tuple[str, ...]:
    """Every engine id with a profile."""
    return tuple(profiles())


def close_engine_ids(name: str, limit: int = 3) -> list[str]:
    """Profile ids close to ``name`` (difflib ratio >= 0.5, plus ids that start with or contain it), best first."""
    ids = engine_ids()
    wanted = name.strip().lower()
    ranked = [i for i in ids if wanted and (i.startswith(wanted) or wanted in i)]
    ranked += [i for i in difflib.get_close_matches(wanted, ids, n=limit, cutoff=0.5) if i not in ranked]
    return ranked[:limit]


def unknown_engine_message(name: object) -> str:
    """One line: ``name`` has no profile, the closest ids, and ``unknown`` for a stack without one."""
    close = close_engine_ids(name) if isinstance(name, str) else []
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    return (f"no engine profile {str(name)[:60]!r} ({hint}'{UNKNOWN_ENGINE}' for a stack without one; known: "
            f"{', '.join(engine_ids())})")


def engines_for_vendor(vendor: str) -> tuple[Engine, ...]:
    """The profiles whose stack runs on ``vendor``'s devices (generic always among them, ``unknown`` never)."""
    return tuple(e for e in profiles().values()
                 if e.id != UNKNOWN_ENGINE and (vendor in e.vendors or e.id == DEFAULT_ENGINE))


def engine_profile(engine_id: str) -> Engine:
    """The profile of ``engine_id``; a ModelInputError naming ``engine`` for an unknown id."""
    try:
        return profiles()[engine_id]
    except (KeyError, TypeError):
        raise ModelInputError("engine", unknown_engine_message(engine_id)) from None
