"""Time the aggregated-vs-disaggregated search for DeepSeek-V3 over three device kinds (H200, B200, GB200): the
issue's budget is 2 s for all three.

Run: ``.venv/bin/python benchmarks/bench_disagg.py``. Prints the median of repeated runs (ms) of the disaggregated
search alone, the aggregated TP planner alone, the aggregated EP search alone, and all of them together (what
``roofline plan --disagg`` runs per device and estimate), per device and summed over the three.
"""

from __future__ import annotations

import statistics
import time

from roofline.models.scenario import Scenario, released_precisions
from roofline.models.serving import ServingMix, devices_for_rate
from roofline.models.serving.disagg import aggregated_ep, compare_with_aggregated, search_disagg
from roofline.presets import load_hardware, load_model

DEVICES = ("h200", "b200", "gb200")
RATE_PER_S, ITL_S, TTFT_S = 50.0, 0.050, 2.0


def _median_ms(fn, repeats: int = 5) -> float:
    fn()  # warm
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main() -> None:
    model = load_model("deepseek-v3")
    mix = ServingMix(prompt_tokens=2000, output_tokens=500)
    totals = {"disagg": 0.0, "agg": 0.0, "agg_ep": 0.0, "both": 0.0}
    for hw_id in DEVICES:
        s = Scenario(hardware=load_hardware(hw_id), model=model, precisions=released_precisions(model))
        figures = {
            "disagg": _median_ms(lambda s=s: search_disagg(s, mix, RATE_PER_S, itl_s=ITL_S, ttft_s=TTFT_S)),
            "agg": _median_ms(lambda s=s: devices_for_rate(s, mix, RATE_PER_S, itl_s=ITL_S, ttft_s=TTFT_S)),
            "agg_ep": _median_ms(lambda s=s: aggregated_ep(s, mix, RATE_PER_S, itl_s=ITL_S, ttft_s=TTFT_S)),
            "both": _median_ms(lambda s=s: compare_with_aggregated(s, mix, RATE_PER_S, itl_s=ITL_S, ttft_s=TTFT_S)),
        }
        for key, value in figures.items():
            totals[key] += value
        print(f"{hw_id:6s} disaggregated search {figures['disagg']:7.1f} ms   aggregated TP {figures['agg']:7.1f} ms   "
              f"aggregated EP {figures['agg_ep']:7.1f} ms   all {figures['both']:7.1f} ms")
    print(f"three devices: disaggregated {totals['disagg']:.0f} ms, aggregated TP {totals['agg']:.0f} ms, "
          f"aggregated EP {totals['agg_ep']:.0f} ms, all {totals['both']:.0f} ms (budget 2,000 ms)")


if __name__ == "__main__":
    main()
