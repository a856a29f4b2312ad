"""The model alone: one full scenario and 1,024-point sweeps, for a dense and two MoE models.

Run: .venv/bin/python benchmarks/bench_model.py   (or benchmarks/run_all.py for everything)

- full scenario: ``estimate(scenario, "expected")``: prefill plus every one of the 4,095 decode
  steps of a 4,096-token generation (1,024-token prompt, batch 8, H100 SXM), all ops.
  Target: under 2 ms median.
- batch sweep: ``batch_sweep`` over batches 1..1,024 (each the exact mean over all 4,095 decode
  contexts, plus the largest batch that fits and the compute-bound crossover). Target: 5 ms.
- context sweep: ``context_sweep`` over 1,024 contexts from 1 to 128k. Target: 5 ms.

Each figure is the median (and p95) of 200 timed calls after one warm-up call, measured with
``time.perf_counter`` in this process. Models: Llama-3.1-8B (dense, GQA), Mixtral-8x7B (MoE),
DeepSeek-V3 (MoE with MLA and a dense prefix, the largest op list).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

from roofline.models.inference import estimate
from roofline.models.scenario import Batching, Parallelism, Scenario, released_precisions
from roofline.models.sweeps import batch_sweep, context_sweep
from roofline.presets import load_hardware, load_model

MODELS = {"llama-3.1-8b": "dense", "mixtral-8x7b": "MoE", "deepseek-v3": "MoE+MLA"}
SCENARIO_TARGET_MS = 2.0
SWEEP_TARGET_MS = 5.0
POINTS = 1024


def _scenario(model_id: str) -> Scenario:
    model = load_model(model_id)
    return Scenario(hardware=load_hardware("h100-sxm"), model=model, precisions=released_precisions(model),
                    batching=Batching(batch_size=8, prompt_tokens=1024, output_tokens=4096),
                    parallelism=Parallelism(tp=1, pp=1))


def time_ms(call: Callable[[], object], runs: int) -> tuple[float, float]:
    """(median, p95) wall time of ``call`` in ms, after one untimed warm-up call."""
    call()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1e3)
    samples.sort()
    return statistics.median(samples), samples[min(len(samples) - 1, int(0.95 * len(samples)))]


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="timed calls per figure")
    args = parser.parse_args(argv)
    batches = np.arange(1, POINTS + 1, dtype=float)
    contexts = np.linspace(1, 128 * 1024, POINTS)
    rows = []
    for model_id, kind in MODELS.items():
        s = _scenario(model_id)
        cases = [
            ("full scenario (4,096-token generation)", lambda s=s: estimate(s, "expected"), SCENARIO_TARGET_MS),
            (f"batch sweep ({POINTS} batches)", lambda s=s: batch_sweep(s, batches, "expected"), SWEEP_TARGET_MS),
            (f"context sweep ({POINTS} contexts)", lambda s=s: context_sweep(s, contexts, "expected"),
             SWEEP_TARGET_MS),
        ]
        for label, call, target in cases:
            median, p95 = time_ms(call, args.runs)
            rows.append({"benchmark": "model", "metric": f"{model_id} ({kind}): {label}, median", "value": median,
                         "unit": "ms", "target": target, "ok": median < target, "p95": p95})
    return rows


if __name__ == "__main__":
    for row in main():
        print(f"{row['metric']:70} {row['value']:7.2f} ms (p95 {row['p95']:.2f})  target < {row['target']} ms  "
              f"{'pass' if row['ok'] else 'FAIL'}")
