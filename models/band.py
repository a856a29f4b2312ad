"""The uncertainty band of ``expected``: its spread over the stacks and ceilings it could have been built with.

Construction. For a scenario on a device of vendor V, ``expected`` is recomputed under every combination
of three choices:

- the engine profile: each current profile of :func:`engines.engines_for_vendor` (V) (``generic`` always among
  them; superseded releases left out, :func:`band_engines`), and the scenario's own engine;
- the memory-bandwidth fraction of spec: the preset's measured one where it has one, and the ends of the spread
  measured across devices (:data:`DEFAULT_MEM_BW_FRACTION_RANGE`, 0.774 to 0.904);
- the matmul fraction of spec, per compute dtype: the preset's measured one where it has one, and the ends of the
  spread measured across devices (:data:`DEFAULT_MATMUL_FRACTION_RANGE`, 0.542 to 0.881, 10th to 90th percentile).

``expected_low`` and ``expected_high`` of a figure are the smallest and largest value it takes over those
combinations, numerically: for a time, ``low`` is the fastest case; for a rate, ``low`` is the slowest. Every op's
time is non-increasing in both fractions (FLOPs / rate and bytes / bandwidth, plus fixed costs that do not depend on
them), so for each engine the extremes lie at two corners: both fractions at their lowest candidate, and both at
their highest. Only those corners are computed (two estimates per engine); ``tests/models/test_band.py`` checks
them against the full cross. ``expected`` itself uses one engine of the set and fractions inside both ranges, so
the band always contains it. ``bound`` has no band: it is a ceiling, not an estimate.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .engines import engine_profile, engines_for_vendor
from .estimate import Ceilings, scenario_ceilings
from .hardware import Hardware
from .inference import Estimate, GenerationOps, estimate, generation_ops
from .scenario import Scenario

# How far a device's achieved share of its spec can sit from the estimate's defaults: the spread of the measured
# fractions across the hardware presets that have one (achievable-ceilings.md; tests/models/test_band.py checks
# these against the presets): streaming bandwidth from 0.774 (MI300X) to 0.904 (GH200) over six devices, dense
# GEMM rate from 0.542 to 0.881 (10th to 90th percentile of 28 measurements; MI300X bf16 to A100 fp16). The
# estimate's defaults (0.875, 0.775: achievable-ceilings.md's "~85-90% (bandwidth) and ~75-80% (NVIDIA matmul)")
# lie inside both.
DEFAULT_MEM_BW_FRACTION_RANGE = (0.774, 0.904)
DEFAULT_MATMUL_FRACTION_RANGE = (0.542, 0.881)


def band_engines(scenario: Scenario) -> tuple[str, ...]:
    """The engine ids the band spans: the scenario's own, then every current profile for its device's vendor.

    Profiles of old releases whose kernels current builds replaced (``superseded = true`` in their files: llama.cpp
    of 2023 and May 2024, TensorRT-LLM 0.5's per-query-head decode attention) are left out: a stack chosen today is
    none of them, so they widen the band only when the scenario names one (with them, an 8B model on an H100 ranged
    34-162 tok/s). So are profiles with ``in_band = false`` (the generic mode variants ``eager`` and ``compiled``,
    transformers' modules run op by op, and stacks whose profile has no measured figure beyond its runtime mode, such
    as DeepSpeed-MII or llama.cpp's Vulkan back end): in the band when named. Under ``unknown`` (runtime mode not
    known) the band spans every current profile of the vendor, every runtime mode among them: the widest band the
    modes allow."""
    unknown = engine_profile(scenario.engine).runtime_mode == "unknown"
    ids = [scenario.engine] + [e.id for e in engines_for_vendor(scenario.hardware.vendor)
                               if not e.superseded and (e.in_band or unknown)]
    return tuple(dict.fromkeys(ids))


def mem_bw_fraction_candidates(hw: Hardware) -> tuple[float, ...]:
    """The bandwidth fractions the band spans: the preset's measured one (if any) and the default range's ends."""
    measured = () if hw.achievable_mem_bw_fraction is None else (hw.achievable_mem_bw_fraction,)
    return tuple(sorted({*measured, *DEFAULT_MEM_BW_FRACTION_RANGE}))


def matmul_fraction_candidates(hw: Hardware, dtype: str) -> tuple[float, ...]:
    """The matmul fractions the band spans for ``dtype``: the preset's measured one and the default range's ends."""
    measured = hw.achievable_matmul_fraction.get(dtype)
    return tuple(sorted({*((measured,) if measured else ()), *DEFAULT_MATMUL_FRACTION_RANGE}))


def hardware_at(hw: Hardware, mem_bw_fraction: float, matmul_fraction: Callable[[str], float]) -> Hardware:
    """``hw`` with its achievable fractions replaced: ``mem_bw_fraction``, and ``matmul_fraction(dtype)`` for every
    dtype it has a peak for (what ``estimate.ceilings`` reads for ``expected``)."""
    return dataclasses.replace(hw, achievable_mem_bw_fraction=mem_bw_fraction,
                               achievable_matmul_fraction={d: matmul_fraction(d) for d in hw.dense_peak_flops_per_s})


def corner_hardware(hw: Hardware) -> tuple[Hardware, Hardware]:
    """(slowest, fastest) corners: every fraction at its lowest candidate, then every one at its highest."""
    bw = mem_bw_fraction_candidates(hw)
    low = hardware_at(hw, bw[0], lambda d: matmul_fraction_candidates(hw, d)[0])
    high = hardware_at(hw, bw[-1], lambda d: matmul_fraction_candidates(hw, d)[-1])
    return low, high


def band_scenarios(scenario: Scenario) -> tuple[Scenario, ...]:
    """The scenarios whose ``expected`` spans the band: each band engine at both corners."""
    corners = corner_hardware(scenario.hardware)
    return tuple(dataclasses.replace(scenario, hardware=hw, engine=engine)
                 for engine in band_engines(scenario) for hw in corners)


# Ceilings.engine names the profile the ceilings came from; no timing reads it (estimate.py reads the rates, costs
# and kernel set the profile gave), so two band scenarios whose ceilings differ in it alone time every op the same
_LABEL_FIELDS = frozenset({"engine"})
_TIMED_FIELDS = tuple(f.name for f in dataclasses.fields(Ceilings) if f.name not in _LABEL_FIELDS)


def _timed_terms(c: Ceilings) -> tuple:
    """What an estimate under ``c`` depends on: every field of ``c`` but its label."""
    return tuple(getattr(c, name) for name in _TIMED_FIELDS)


def band_estimates(scenario: Scenario, ops: GenerationOps | None = None) -> tuple[Estimate, ...]:
    """``expected`` under every band scenario (the ops are built once: they depend on neither engine nor
    fractions). Engines whose ceilings are the same but for the profile's name (generic, vLLM and SGLang at one
    corner, say) give the same figures: each distinct ceilings is estimated once and the estimate handed to the
    others with their own ceilings (same numbers; ``tests/models/test_report_speed_equivalence.py``)."""
    ops = generation_ops(scenario) if ops is None else ops
    done: list[tuple[tuple, Estimate]] = []
    out = []
    for s in band_scenarios(scenario):
        c = scenario_ceilings(s, "expected")
        terms = _timed_terms(c)
        same = next((e for t, e in done if t == terms), None)
        if same is None:
            shared = GenerationOps(scenario=s, prefill=ops.prefill, decode_steps=ops.decode_steps)
            same = estimate(s, "expected", shared)
            done.append((terms, same))
        out.append(same if same.ceilings == c else dataclasses.replace(same, ceilings=c))
    return tuple(out)


def estimate_figures(e: Estimate, batch: int, prompt_tokens: int) -> dict[str, dict[str, float]]:
    """The figures a band is given for, keyed as in the report's ``expected`` (report.py): per phase."""
    d = e.decode
    return {
        "prefill": {"ttft_s": e.ttft_s, "tokens_per_s": batch * prompt_tokens / e.prefill.time_s},
        "decode": {"step_time_s": d.step_time_s, "first_step_time_s": d.first_step_time_s,
                   "last_step_time_s": d.last_step_time_s, "tokens_per_s_per_seq": d.tokens_per_s_per_seq,
                   "tokens_per_s": d.tokens_per_s},
        "generation": {"time_s": e.generation_time_s, "output_tokens_per_s": e.output_tokens_per_s},
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class Band:
    """``expected``'s low and high figures (:func:`estimate_figures` keys) and what they span."""

    low: dict[str, dict[str, float]]
    high: dict[str, dict[str, float]]
    engines: tuple[str, ...]
    mem_bw_fractions: tuple[float, ...]
    matmul_fractions: tuple[float, ...]


def span(values: Sequence[float]) -> tuple[float, float]:
    """(smallest, largest) of the values."""
    return min(values), max(values)


def expected_band(scenario: Scenario, ops: GenerationOps | None = None) -> Band:
    """The band of every :func:`estimate_figures` figure (module docstring)."""
    b = scenario.batching
    figures = [estimate_figures(e, b.batch_size, b.prompt_tokens) for e in band_estimates(scenario, ops)]
    low: dict[str, dict[str, float]] = {}
    high: dict[str, dict[str, float]] = {}
    for phase, keys in figures[0].items():
        low[phase], high[phase] = {}, {}
        for key in keys:
            low[phase][key], high[phase][key] = span([f[phase][key] for f in figures])
    hw = scenario.hardware
    return Band(low=low, high=high, engines=band_engines(scenario), mem_bw_fractions=mem_bw_fraction_candidates(hw),
                matmul_fractions=matmul_fraction_candidates(hw, hw.matmul_peak(scenario.precisions.compute_dtype)[0]))


def band_ceilings(scenario: Scenario) -> tuple[Ceilings, ...]:
    """The ``expected`` ceilings of every band scenario: a sweep builds its ops once (they depend on neither engine
    nor fractions) and times them under each of these."""
    return tuple(scenario_ceilings(s, "expected") for s in band_scenarios(scenario))


def sweep_span(values: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(smallest, largest) at each point of a sweep: ``values`` holds one array per band scenario, all of one shape
    (a sweep's step times at each batch or context). Per point this is :func:`span`: each point's time is
    non-increasing in both fractions, so its extremes lie at the corners as for a single figure."""
    stacked = np.stack([np.asarray(v, dtype=float) for v in values])
    return stacked.min(axis=0), stacked.max(axis=0)


def metric_band(scenario: Scenario, predict_one: Callable[[Scenario, Estimate], float],
                ops: GenerationOps | None = None) -> tuple[float, float]:
    """(low, high) of one prediction ``predict_one(scenario, expected estimate)`` over the band (validation.py
    passes a metric's prediction)."""
    return span([predict_one(scenario, e) for e in band_estimates(scenario, ops)])
