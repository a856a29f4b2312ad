"""The whole answer for one scenario as plain data (SI units): the ``report --format json`` contract.

Keys are stable; new keys may be added, none renamed. Per-op ``flops``, ``*_bytes`` and
``time_s`` are per occurrence and per device; ``total_time_s`` = ``count`` x ``time_s``.
``expected_low`` and ``expected_high`` sit beside ``expected`` with its prefill, decode and generation figures (the
uncertainty band, band.py: smallest and largest value over the vendor's engine profiles and the measured / default
ceilings fractions); ``expected_band`` says what the band spans.
"""

from __future__ import annotations

from typing import Any

from .band import expected_band
from .context_sums import decode_context_range
from .engines import DEFAULT_ENGINE, engine_profile, weight_format_family
from .estimate import ESTIMATES, expected_assumptions, scenario_ceilings, time_op
from .gap import decode_gap
from .inference import Estimate, compute_bound_batch, estimate, generation_ops, mean_decode_context
from .memory import memory_footprint
from .ops import build_ops
from .scenario import Scenario
from .topology import default_topology, ring_bottleneck

SCHEMA_VERSION = 1


def _phase_dict(p) -> dict[str, Any]:
    return {
        "time_s": p.time_s,
        "flops": p.flops,
        "memory_bytes": p.memory_bytes,
        "weight_bytes": p.weight_bytes,
        "kv_read_bytes": p.kv_read_bytes,
        "kv_write_bytes": p.kv_write_bytes,
        "activation_bytes": p.activation_bytes,
        "idle_core_pct": p.idle_core_pct,
        "mbu_pct": p.mbu_pct,
        "arithmetic_intensity_flops_per_byte": p.arithmetic_intensity_flops_per_byte,
        "limited_by": p.limited_by,
    }


def _estimate_dict(e: Estimate, batch: int, prompt_tokens: int) -> dict[str, Any]:
    d = e.decode
    return {
        "ceilings": {
            "compute_dtype": e.ceilings.compute_dtype,
            "matmul_flops_per_s": e.ceilings.matmul_flops_per_s,
            "mem_bw_bytes_per_s": e.ceilings.mem_bw_bytes_per_s,
            "link_bw_bytes_per_s": e.ceilings.link_bw_bytes_per_s,
            "kernel_overhead_s": e.ceilings.kernel_overhead_s,
            "collective_latency_s": e.ceilings.collective_latency_s,
        },
        "prefill": {
            **_phase_dict(e.prefill),
            "ttft_s": e.ttft_s,
            "tokens_per_s": batch * prompt_tokens / e.prefill.time_s,
        },
        "decode": {
            **_phase_dict(d.phase),
            "steps": d.steps,
            "step_time_s": d.step_time_s,
            "first_step_time_s": d.first_step_time_s,
            "last_step_time_s": d.last_step_time_s,
            "tokens_per_s_per_seq": d.tokens_per_s_per_seq,
            "tokens_per_s": d.tokens_per_s,
        },
        "generation": {"time_s": e.generation_time_s, "output_tokens_per_s": e.output_tokens_per_s},
    }


def _ops(scenario: Scenario) -> list[dict[str, Any]]:
    b = scenario.batching
    bound = scenario_ceilings(scenario, "bound")
    expected = scenario_ceilings(scenario, "expected")
    first_context = float(decode_context_range(scenario)[0])
    rows: list[dict[str, Any]] = []
    for phase, context in (("prefill", 0.0), ("decode", first_context)):
        ops = build_ops(scenario, phase, batch=b.batch_size, context=context)
        timed = [(op, time_op(op, bound), time_op(op, expected)) for op in ops]
        phase_time = sum(op.count * float(t.time_s) for op, t, _ in timed)
        for op, t, te in timed:
            rows.append({
                "phase": phase,
                "name": op.name,
                "kind": op.kind,
                "count": op.count,
                "context_tokens": context if phase == "decode" else b.prompt_tokens,
                "flops": float(op.flops),
                "weight_bytes": float(op.weight_bytes),
                "activation_bytes": float(op.activation_bytes),
                "kv_read_bytes": float(op.kv_read_bytes),
                "kv_write_bytes": float(op.kv_write_bytes),
                "comm_bytes": float(op.comm_bytes),
                "arithmetic_intensity_flops_per_byte": float(op.arithmetic_intensity_flops_per_byte)
                if op.kind != "collective" else None,
                "limited_by": t.limited_by,
                "time_s": float(t.time_s),
                "total_time_s": op.count * float(t.time_s),
                "share_of_phase_pct": 100.0 * op.count * float(t.time_s) / phase_time,
                "expected_time_s": float(te.time_s),
            })
    return rows


def decode_gap_dict(scenario: Scenario) -> dict[str, Any]:
    bound_step, terms, expected_step = decode_gap(scenario)
    return {"bound_step_s": bound_step, "expected_step_s": expected_step,
            "terms": [{"label": t.label, "seconds": t.seconds, "detail": t.detail} for t in terms]}


def expected_assumption_rows(scenario: Scenario) -> list[dict[str, Any]]:
    """The parameters ``expected`` used, with values and sources (``bound``: spec, no overheads)."""
    prec, tp = scenario.precisions, scenario.parallelism.tp
    rows = expected_assumptions(scenario.hardware, prec.compute_dtype, (prec.weights, prec.expert_weights_or_weights),
                                engine=scenario.engine, tp=tp if tp > 1 else None, topology=scenario.topology)
    out = [{"name": a.name, "value": a.value, "unit": a.unit, "source": a.source} for a in rows]
    profile = engine_profile(scenario.engine)
    for dtype in dict.fromkeys((prec.weights, prec.expert_weights_or_weights)):
        # an engine figure of exactly 1.0 (Marlin int4, llama.cpp GGUF) leaves no efficiency row above: name it
        family = weight_format_family(dtype, prec.compute_dtype)
        named = f"weight_only_stream_efficiency ({dtype})"
        if family in profile.dequant_efficiency and all(r["name"] != named for r in out):
            out.append({"name": named, "value": profile.weight_stream_efficiency(dtype, prec.compute_dtype,
                                                                                 scenario.hardware),
                        "unit": "of the 16-bit rate",
                        "source": f"engine {profile.id}: {profile.sources.get(family, 'engine profile')}"})
    for key, source in profile.sources.items():  # every factor of the profile's file, with its source and date
        value = profile.dequant_efficiency[key] if key in profile.dequant_efficiency else getattr(profile, key, None)
        if isinstance(value, bool | int | float):
            out.append({"name": f"engine factor ({key})", "value": float(value), "unit": "as in the profile's SI field",
                        "source": f"engine {profile.id} ({profile.source_dates.get(key, 'undated')}): {source}"})
    if scenario.parallelism.pp > 1:
        out.append({"name": "pipeline_schedule", "value": 1.0 / scenario.parallelism.pp,
                    "unit": "busy share per device",
                    "source": "one batch, no micro-batching: the stages run one after another, each device idles "
                              "while the others work (a pipeline bubble of (pp-1)/pp)"})
    return out


def warnings_for(scenario: Scenario) -> list[str]:
    b, m = scenario.batching, scenario.model
    notes = []
    final_context = b.prompt_tokens + b.output_tokens
    if m.max_position_embeddings and final_context > m.max_position_embeddings:
        notes.append(f"context {final_context} exceeds the model's max_position_embeddings "
                     f"{m.max_position_embeddings}")
    gguf = scenario.precisions.gguf_weight_formats
    int8_peak = scenario.hardware.dense_peak_flops_per_s.get("int8")
    if gguf and scenario_ceilings(scenario, "bound").integer_gemm_flops_per_s:
        notes.append(f"{'/'.join(sorted(gguf))} GEMMs: bound at the int8 peak ({int8_peak / 1e12:,.0f} TOPS; "
                     "llama.cpp MMQ runs int8 dot products), expected at the "
                     f"{scenario.precisions.compute_dtype} rate")
    return notes


def engine_dict(scenario: Scenario) -> dict[str, Any]:
    """The serving engine ``expected`` assumes (engines.py): id, name, whether it is the default, its traits."""
    e = engine_profile(scenario.engine)
    return {"id": e.id, "name": e.name, "default": e.id == DEFAULT_ENGINE, "cuda_graphs": e.cuda_graphs,
            "runtime_mode": e.runtime_mode, "unfused_modules": e.unfused_modules,
            "kernel_overhead_s": scenario_ceilings(scenario, "expected").kernel_overhead_s,
            "kv_reads_per_query_head": e.kv_reads_per_query_head,
            "decode_gemv_bw_share": e.decode_gemv_bw_share, "decode_gemv_bw_share_hbm": e.decode_gemv_bw_share_hbm,
            "decode_gemv_bw_share_here": e.gemv_share(scenario.hardware),
            "gemm_fp16_accumulate": e.gemm_fp16_accumulate, "prompt_dequant_to_f16": e.prompt_dequant_to_f16,
            "prompt_matmul_fraction": e.prompt_matmul_fraction, "prefill_chunk_tokens": e.prefill_chunk_tokens,
            "notes": e.notes, "unknown_note": unknown_engine_note(scenario)}


def unknown_engine_note(scenario: Scenario) -> str:
    """One line when the scenario names no engine profile (``unknown``): what expected and its band then assume."""
    if engine_profile(scenario.engine).runtime_mode != "unknown":
        return ""
    c = scenario_ceilings(scenario, "expected")
    return (f"engine unknown: no profile named, so the runtime mode is not known; expected charges each kernel the "
            f"geometric middle of {c.kernel_overhead_s * 1e6:.1f} us (fused kernels, cheapest mode) and "
            f"{c.kernel_overhead_high_s * 1e6:.1f} us (unfused modules, dearest mode), and its band spans every "
            f"current profile and runtime mode for {scenario.hardware.vendor} (name an engine to narrow it)")


def topology_dict(scenario: Scenario) -> dict[str, Any]:
    """How the TP group is linked (topology.py): the stated or derived topology and the ring's slowest link
    (``None`` link figures for one device: no collective runs)."""
    hw, tp = scenario.hardware, scenario.parallelism.tp
    stated = scenario.topology
    link = ring_bottleneck(hw, tp, stated) if tp > 1 else None
    return {"id": stated or default_topology(hw), "derived_from_preset": stated is None, "tp": tp,
            "ring_link": link.kind if link else None,
            "ring_link_bw_bytes_per_s": link.bw_unidirectional_bytes_per_s if link else None,
            "ring_link_latency_s": link.latency_s if link else None}


def scenario_report(scenario: Scenario, *, include_ops: bool = True) -> dict[str, Any]:
    hw, m, b, par, prec = (scenario.hardware, scenario.model, scenario.batching, scenario.parallelism,
                           scenario.precisions)
    bound = scenario_ceilings(scenario, "bound")
    mem = memory_footprint(scenario)
    crossover = compute_bound_batch(scenario)
    report: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "hardware": {
            "id": hw.id,
            "name": hw.name,
            "devices": par.devices,
            "tp": par.tp,
            "pp": par.pp,
            "compute_dtype": bound.compute_dtype,
            "peak_flops_per_s": bound.matmul_flops_per_s,
            "mem_bw_bytes_per_s": hw.mem_bw_bytes_per_s,
            "ridge_flops_per_byte": bound.ridge_flops_per_byte,
            "memory_capacity_bytes": hw.memory_capacity_bytes,
            "interconnect_bw_bytes_per_s": hw.interconnect_bw_bytes_per_s,
            "source": hw.source,
        },
        "model": {
            "id": m.id,
            "name": m.name,
            "params": m.params,
            "active_params": m.active_params,
            "layers": m.num_layers,
            "attention": m.attention.kind,
            "heads": m.attention.num_heads,
            "kv_heads": m.attention.num_kv_heads,
            "experts": m.moe.num_experts if m.moe else None,
            "experts_per_token": m.moe.top_k if m.moe else None,
            "source": m.source,
        },
        "precisions": {"weights": prec.weights, "expert_weights": prec.expert_weights_or_weights if m.moe else None,
                       "activations": prec.activations, "kv": prec.kv},
        "batching": {
            "batch": b.batch_size,
            "prompt_tokens": b.prompt_tokens,
            "output_tokens": b.output_tokens,
            "flash_attention": b.flash_attention,
            "kv_compression_ratio": b.kv_compression_ratio,
            "mean_decode_context_tokens": mean_decode_context(scenario),
        },
        "memory": {
            "weights_bytes": mem.weights_bytes,
            "kv_cache_bytes": mem.kv_cache_bytes,
            "activation_bytes": mem.activation_bytes,
            "runtime_reserve_bytes": mem.runtime_reserve_bytes,
            "total_bytes": mem.total_bytes,
            "per_device_bytes": mem.per_device_bytes,
            "per_device_weights_bytes": mem.per_device_weights_bytes,
            "per_device_kv_cache_bytes": mem.per_device_kv_cache_bytes,
            "per_device_activation_bytes": mem.per_device_activation_bytes,
            "capacity_bytes": mem.capacity_bytes,
            "fits": mem.fits,
            "max_batch": mem.max_batch,
        },
        "engine": engine_dict(scenario),
        "topology": topology_dict(scenario),
        "compute_bound_batch": crossover,
        "decode_gap": decode_gap_dict(scenario),
        "assumptions": expected_assumption_rows(scenario),
        "warnings": warnings_for(scenario),
    }
    ops = generation_ops(scenario)
    for name in ESTIMATES:
        report[name] = _estimate_dict(estimate(scenario, name, ops), b.batch_size, b.prompt_tokens)
    band = expected_band(scenario, ops)
    report["expected_low"], report["expected_high"] = band.low, band.high
    report["expected_band"] = {
        "engines": list(band.engines), "mem_bw_fractions": list(band.mem_bw_fractions),
        "matmul_fractions": list(band.matmul_fractions),
        "construction": "smallest and largest expected over these engine profiles (the scenario's and every one "
                        "for the device's vendor) crossed with the bandwidth and matmul fractions (measured, and the "
                        "ends of the default ranges): low is the smaller number (for a time, the faster case)",
    }
    if include_ops:
        report["ops"] = _ops(scenario)
    return report
