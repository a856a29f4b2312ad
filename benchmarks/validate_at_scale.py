"""Published at-scale DeepSeek-V3/R1 serving results against one EP rank's ``bound`` and ``expected``.

Run: ``.venv/bin/python benchmarks/validate_at_scale.py``. Each row is a phase measured on its own pool (the other
phase given unlimited resources, as DeepSeek and SGLang measured them): prefill input tokens/s or decode output
tokens/s per GPU, at the layout, batch and lengths the source states. The model is one rank of
:func:`roofline.models.expert_parallel.ep_pass` (DeepEP all-to-all, two-batch overlap as the source ran it).
``bound`` must be at least the measured figure on every row (tests/models/test_disagg.py checks it); the error is
expected / measured - 1. Nothing here is fitted to these rows.

Sources:
- DeepSeek, "Day 6: One More Thing, DeepSeek-V3/R1 Inference System Overview" (deepseek-ai/open-infra-index,
  2025-03-01): H800 nodes, prefill EP32, decode EP144; per node 73.7k input tokens/s in prefill (32,206 excluding
  cache hits, as the SGLang write-up tabulates it) and 14.8k output tokens/s in decode; and DeepSeek's profile data
  (deepseek-ai/profile-data): prefill 62,713 tokens/s per node (16,384 tokens per device, 4,096 input), decode 18,598
  per node (batch 128, KV 4,096, 16 nodes). Decode runs MTP (one draft token; DeepSeek-V3 report 5.4.3: the second
  token is accepted 85-90 % of the time), scored as SGLang simulated it: twice the batch at half the KV length,
  (1 + acceptance) tokens per request per step, acceptance 1 under ``bound``.
- SGLang team, "Deploying DeepSeek with PD Disaggregation and Large-scale Expert Parallelism on 96 H100 GPUs" (LMSYS
  blog, 2025-05-05): prefill EP32 on 4 nodes, 57,674 / 54,543 / 50,302 tokens/s per node at 1K / 2K / 4K prompts
  (16,384 tokens per device); decode EP72 on 9 nodes, 22,282 tokens/s per node at batch 256, KV 2,000.
- SGLang team, "Deploying DeepSeek on GB200 NVL72 with PD and Large Scale EP" Part I (2025-06-16: decode 7,583
  tokens/s per GPU at 2,000-token inputs, 12 trays = EP48) and Part II (2025-09-25: BF16 attention + FP8 MoE 18,471
  input / 9,087 output tokens/s per GPU; FP8 attention + NVFP4 MoE 26,156 / 13,386; prefill 4 and 2 ranks per
  instance, decode EP48, batch to fill the KV cache: 1,408 at 2K). GB200 runs without two-batch overlap (Part I).

Assumed where the source does not say: prefill rows at 16,384 tokens per device (DeepSeek's blog figure has no
input length: 4,096 as its profile); GB200 decode at the largest batch whose KV fits (the source fills the KV
cache) unless it states one; the GB200 prefill instances of 4 and 2 ranks offload weights to host memory (Part II),
which the rank model does not charge, so those rows keep only the compute and communication terms.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace

from roofline.models.expert_parallel import ExpertParallel, ep_memory, ep_pass
from roofline.models.scenario import Precisions, Scenario, released_precisions
from roofline.presets import load_hardware, load_model

MTP_ACCEPTANCE = 0.85  # DeepSeek-V3 technical report, section 5.4.3: 85-90 % for the second token


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    source: str
    hardware: str
    phase: str
    ep: int
    measured_tokens_per_s_per_gpu: float
    prompt_tokens: int = 2000
    tokens_per_device: int = 16_384  # prefill
    batch_per_gpu: int | None = None  # decode; None: the largest that fits
    context_tokens: int = 2000  # decode
    mtp: bool = False
    precision: str = "released"  # or "fp8-attention-nvfp4-moe"
    two_batch_overlap: bool = True


ROWS = (
    Row(source="DeepSeek blog (excl. cache hits), H800 EP32", hardware="h800", phase="prefill", ep=32,
        measured_tokens_per_s_per_gpu=32_206 / 8, prompt_tokens=4096),
    Row(source="DeepSeek profile, H800 EP32", hardware="h800", phase="prefill", ep=32,
        measured_tokens_per_s_per_gpu=62_713 / 8, prompt_tokens=4096),
    Row(source="SGLang 96xH100, EP32, 1K", hardware="h100-sxm", phase="prefill", ep=32,
        measured_tokens_per_s_per_gpu=57_674 / 8, prompt_tokens=1000),
    Row(source="SGLang 96xH100, EP32, 2K", hardware="h100-sxm", phase="prefill", ep=32,
        measured_tokens_per_s_per_gpu=54_543 / 8, prompt_tokens=2000),
    Row(source="SGLang 96xH100, EP32, 4K", hardware="h100-sxm", phase="prefill", ep=32,
        measured_tokens_per_s_per_gpu=50_302 / 8, prompt_tokens=4096),
    Row(source="DeepSeek blog, H800 EP144, MTP", hardware="h800", phase="decode", ep=144,
        measured_tokens_per_s_per_gpu=14_800 / 8, batch_per_gpu=128, context_tokens=4989, mtp=True),
    Row(source="DeepSeek profile, H800 EP128, MTP", hardware="h800", phase="decode", ep=128,
        measured_tokens_per_s_per_gpu=18_598 / 8, batch_per_gpu=128, context_tokens=4096, mtp=True),
    Row(source="SGLang 96xH100, EP72 decode", hardware="h100-sxm", phase="decode", ep=72,
        measured_tokens_per_s_per_gpu=22_282 / 8, batch_per_gpu=256, context_tokens=2000),
    Row(source="SGLang GB200 part I, EP48 decode", hardware="gb200", phase="decode", ep=48,
        measured_tokens_per_s_per_gpu=7_583, context_tokens=2000, two_batch_overlap=False),
    Row(source="SGLang GB200 part II, BF16 attn + FP8 MoE, prefill 4 ranks", hardware="gb200", phase="prefill", ep=4,
        measured_tokens_per_s_per_gpu=18_471, prompt_tokens=2000, two_batch_overlap=False),
    Row(source="SGLang GB200 part II, BF16 attn + FP8 MoE, EP48 decode", hardware="gb200", phase="decode", ep=48,
        measured_tokens_per_s_per_gpu=9_087, context_tokens=2000, two_batch_overlap=False),
    Row(source="SGLang GB200 part II, FP8 attn + NVFP4 MoE, prefill 2 ranks", hardware="gb200", phase="prefill",
        ep=2, measured_tokens_per_s_per_gpu=26_156, prompt_tokens=2000, precision="fp8-attention-nvfp4-moe",
        two_batch_overlap=False),
    Row(source="SGLang GB200 part II, FP8 attn + NVFP4 MoE, EP48 decode", hardware="gb200", phase="decode", ep=48,
        measured_tokens_per_s_per_gpu=13_386, batch_per_gpu=1408, context_tokens=2000,
        precision="fp8-attention-nvfp4-moe", two_batch_overlap=False),
)


def hardware(hw_id: str):
    """Presets, and the H800 as the H100 SXM with its 400 GB/s NVLink (NVIDIA H800 product brief: the export part
    keeps the H100's HBM3 and tensor cores; NVLink cut from 900 to 400 GB/s; DeepEP tests it at ~160 GB/s one way)."""
    if hw_id == "h800":
        base = load_hardware("h100-sxm")
        return replace(base, id="h800", name="NVIDIA H800 SXM (H100 SXM, NVLink 400 GB/s)",
                       interconnect_bw_bytes_per_s=400e9, price_usd_per_hour=None, price_source="")
    return load_hardware(hw_id)


def _precisions(model, name: str) -> Precisions:
    if name == "released":
        return released_precisions(model)
    # SGLang part II: NVFP4 experts (W4A4, quantised in DeepEP) and FP8 KV; the rest of the checkpoint fp8
    return Precisions(weights="fp8", activations="nvfp4", kv="fp8", expert_weights="nvfp4", attention_weights="fp8",
                      embedding_weights="bf16", lm_head_weights="bf16")


def score(row: Row) -> dict[str, float]:
    """Modelled tokens/s per GPU under bound and expected for one row, and the batch used."""
    model = load_model("deepseek-v3")
    s = Scenario(hardware=hardware(row.hardware), model=model, precisions=_precisions(model, row.precision))
    redundant = (-model.moe.num_experts) % row.ep if row.ep >= 8 else 0
    cfg = ExpertParallel(ep=row.ep, redundant_experts=redundant, two_batch_overlap=row.two_batch_overlap)
    out: dict[str, float] = {}
    if row.phase == "prefill":
        prompts = row.tokens_per_device / row.prompt_tokens
        for name in ("bound", "expected"):
            t = float(ep_pass(s, cfg, "prefill", requests_per_rank=prompts, prompt_tokens=row.prompt_tokens,
                              estimate_name=name).time_s)
            out[name] = prompts * row.prompt_tokens / t
        out["batch"] = prompts
        return out
    batch = row.batch_per_gpu
    if batch is None:
        batch = ep_memory(s, cfg, tokens_per_request=row.context_tokens + 100).max_requests
    for name in ("bound", "expected"):
        if row.mtp:
            acceptance = 1.0 if name == "bound" else MTP_ACCEPTANCE
            t = float(ep_pass(s, cfg, "decode", requests_per_rank=2 * batch, context_tokens=row.context_tokens / 2,
                              estimate_name=name).time_s)
            out[name] = batch * (1.0 + acceptance) / t
        else:
            t = float(ep_pass(s, cfg, "decode", requests_per_rank=batch, context_tokens=row.context_tokens,
                              estimate_name=name).time_s)
            out[name] = batch / t
    out["batch"] = batch
    return out


def main() -> None:
    errors = []
    print(f"{'row':62s} {'measured':>9s} {'bound':>9s} {'expected':>9s} {'error':>7s}  bound holds")
    for row in ROWS:
        got = score(row)
        error = got["expected"] / row.measured_tokens_per_s_per_gpu - 1.0
        errors.append(abs(error))
        holds = got["bound"] >= row.measured_tokens_per_s_per_gpu
        print(f"{row.source[:62]:62s} {row.measured_tokens_per_s_per_gpu:9,.0f} {got['bound']:9,.0f} "
              f"{got['expected']:9,.0f} {error:+7.1%}  {'yes' if holds else 'NO'}")
    print(f"median |error| {statistics.median(errors):.1%} over {len(errors)} rows; "
          f"max {max(errors):.1%}")


if __name__ == "__main__":
    main()
