"""Time a 64-point serving frontier (Llama-3.1-70B, 4x H100, ``expected``): the issue's budget is 20 ms.

Run: ``.venv/bin/python benchmarks/bench_serving.py``. Prints the median of repeated runs (ms) for the frontier
(closed loop and Poisson arrivals), the target solver and the device planner, and the frontier at 300 and 30,000
output tokens side by side: the model is closed-form in the output length, so the two should cost the same.
"""

from __future__ import annotations

import statistics
import time

from roofline.models.scenario import Parallelism, Scenario
from roofline.models.serving import (
    ServingMix,
    ServingOptions,
    devices_for_rate,
    frontier,
    max_concurrency_for_targets,
)
from roofline.presets import load_hardware, load_model


def _median_ms(fn, repeats: int = 30) -> float:
    fn()  # warm
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main() -> None:
    scenario = Scenario(hardware=load_hardware("h100-sxm"), model=load_model("llama-3.1-70b"),
                        parallelism=Parallelism(tp=4))
    mix = ServingMix(prompt_tokens=2048, output_tokens=300)
    concurrencies = list(range(1, 65))
    print(f"frontier, 64 points, expected: {_median_ms(lambda: frontier(scenario, mix, concurrencies)):.2f} ms")
    poisson = ServingOptions(arrivals="poisson")
    print(f"frontier, 64 points, Poisson arrivals: "
          f"{_median_ms(lambda: frontier(scenario, mix, concurrencies, options=poisson)):.2f} ms")
    long_mix = ServingMix(prompt_tokens=2048, output_tokens=30_000)
    short_ms = _median_ms(lambda: frontier(scenario, mix, concurrencies))
    long_ms = _median_ms(lambda: frontier(scenario, long_mix, concurrencies))
    print(f"frontier at 300 vs 30,000 output tokens: {short_ms:.2f} ms vs {long_ms:.2f} ms "
          f"(ratio {long_ms / short_ms:.2f})")
    print(f"max_concurrency_for_targets: "
          f"{_median_ms(lambda: max_concurrency_for_targets(scenario, mix, itl_s=0.05, ttft_s=1.0)):.2f} ms")
    print(f"devices_for_rate (tp 1,2,4,8): "
          f"{_median_ms(lambda: devices_for_rate(scenario, mix, 20.0, itl_s=0.05, ttft_s=1.0), 10):.2f} ms")


if __name__ == "__main__":
    main()
