"""``roofline report`` as a readable text table or Markdown, from the report dictionary."""

from __future__ import annotations

from typing import Any

from roofline.tui.views.formatting import duration, flop_per_byte, gib, rate, si
from roofline.tui.views.precision_text import precision_line

_ROWS = (
    ("time to first token", lambda e: duration(e["prefill"]["ttft_s"])),
    ("prefill tokens/s", lambda e: rate(e["prefill"]["tokens_per_s"])),
    ("decode step (mean)", lambda e: duration(e["decode"]["step_time_s"])),
    ("decode tokens/s per sequence", lambda e: rate(e["decode"]["tokens_per_s_per_seq"])),
    ("decode tokens/s aggregate", lambda e: rate(e["decode"]["tokens_per_s"])),
    ("decode idle cores", lambda e: f"{e['decode']['idle_core_pct']:.1f} %"),
    ("decode MBU", lambda e: f"{e['decode']['mbu_pct']:.1f} %"),
    ("decode intensity", lambda e: f"{e['decode']['arithmetic_intensity_flops_per_byte']:,.1f} FLOP/B"),
    ("decode limited by", lambda e: e["decode"]["limited_by"]),
    ("generation time", lambda e: duration(e["generation"]["time_s"])),
    ("output tokens/s", lambda e: rate(e["generation"]["output_tokens_per_s"])),
)


# rows with an uncertainty band (report["expected_low"/"expected_high"], models/band.py): label -> (phase, key, format)
_BANDED = {
    "time to first token": ("prefill", "ttft_s", duration),
    "prefill tokens/s": ("prefill", "tokens_per_s", rate),
    "decode step (mean)": ("decode", "step_time_s", duration),
    "decode tokens/s per sequence": ("decode", "tokens_per_s_per_seq", rate),
    "decode tokens/s aggregate": ("decode", "tokens_per_s", rate),
    "generation time": ("generation", "time_s", duration),
    "output tokens/s": ("generation", "output_tokens_per_s", rate),
}


def band_range(r: dict[str, Any], label: str) -> str:
    """``expected``'s low-high range for a row of the table; "-" for a row without one (or an older report)."""
    if label not in _BANDED or "expected_low" not in r:
        return "-"
    phase, key, fmt = _BANDED[label]
    return f"{fmt(r['expected_low'][phase][key])} - {fmt(r['expected_high'][phase][key])}"


def band_note(r: dict[str, Any]) -> str:
    """One line saying what the expected range spans."""
    band = r.get("expected_band")
    if not band:
        return ""
    return (f"expected range: lowest to highest expected over the engines {', '.join(band['engines'])} and "
            f"bandwidth fractions {', '.join(f'{f:.3g}' for f in band['mem_bw_fractions'])}, matmul fractions "
            f"{', '.join(f'{f:.3g}' for f in band['matmul_fractions'])} (models/band.py)")


def _summary_lines(r: dict[str, Any]) -> list[str]:
    hw, m, b, p = r["hardware"], r["model"], r["batching"], r["precisions"]
    crossover = r["compute_bound_batch"]
    return [
        f"{m['name']} on {hw['devices']} x {hw['name']} (tp {hw['tp']}, pp {hw['pp']})",
        precision_line(p["weights"], p["activations"], p["kv"], p.get("expert_weights")) + "; compute at "
        f"{hw['compute_dtype']} peak {si(hw['peak_flops_per_s'], 'FLOP/s')}, "
        f"bandwidth {si(hw['mem_bw_bytes_per_s'], 'B/s')}, ridge {flop_per_byte(hw['ridge_flops_per_byte'])} FLOP/B",
        _stack_line(r),
        *([r["engine"]["unknown_note"]] if r.get("engine", {}).get("unknown_note") else []),
        f"batch {b['batch']}, prompt {b['prompt_tokens']}, output {b['output_tokens']} tokens, "
        f"FlashAttention {'on' if b['flash_attention'] else 'off'}; mean decode context "
        f"{b['mean_decode_context_tokens']:,.0f}",
        (f"decode turns compute-bound at batch {crossover:,} (at the mean context)" if crossover is not None
         else ("decode never turns compute-bound: each sequence added to the batch adds FLOPs and KV-cache bytes "
               "at an intensity below the ridge")),
    ]


def _stack_line(r: dict[str, Any]) -> str:
    """The engine and the TP topology ``expected`` assumes (older report dictionaries have neither)."""
    engine, topo = r.get("engine"), r.get("topology")
    if not engine or not topo:
        return "engine and topology: not stated (report from before engine profiles)"
    mode = f" ({engine['runtime_mode']} mode)" if engine.get("runtime_mode") else ""
    line = f"engine {engine['id']}" + (" (the default)" if engine["default"] else "") + f": {engine['name']}{mode}; "
    if topo["ring_link"] is None:
        return line + f"topology {topo['id']} (one device per TP group: no collectives)"
    how = "derived from the preset" if topo["derived_from_preset"] else "stated"
    return (line + f"topology {topo['id']} ({how}): TP {topo['tp']} ring's slowest link {topo['ring_link']} "
            f"{si(topo['ring_link_bw_bytes_per_s'], 'B/s')} one way")


def _memory_lines(r: dict[str, Any]) -> list[str]:
    mem = r["memory"]
    verdict = "fits" if mem["fits"] else "DOES NOT FIT"
    return [
        f"memory per device: weights {gib(mem['per_device_weights_bytes'])} + KV "
        f"{gib(mem['per_device_kv_cache_bytes'])} + activations {gib(mem['per_device_activation_bytes'])} + "
        f"reserve -> {gib(mem['per_device_bytes'])} of {gib(mem['capacity_bytes'])}: {verdict}; "
        f"largest batch that fits {mem['max_batch']:,}",
    ]


def _op_rows(r: dict[str, Any]) -> list[list[str]]:
    rows = []
    for op in r.get("ops", []):
        moved = op["weight_bytes"] + op["activation_bytes"] + op["kv_read_bytes"] + op["kv_write_bytes"]
        ai = op["arithmetic_intensity_flops_per_byte"]
        rows.append([
            op["phase"], op["name"], str(op["count"]), si(op["flops"], "FLOP"), si(moved, "B"),
            "-" if ai is None else f"{ai:,.1f}", op["limited_by"], duration(op["total_time_s"]),
            f"{op['share_of_phase_pct']:.1f}%",
        ])
    return rows


_OP_HEADER = ["phase", "op", "count", "FLOPs each", "bytes each", "FLOP/B", "limited by", "time", "share"]


def render_text(r: dict[str, Any], *, show_ops: bool = True) -> str:
    lines = _summary_lines(r) + _memory_lines(r) + [f"warning: {w}" for w in r["warnings"]] + [""]
    width = max(len(label) for label, _ in _ROWS)
    lines.append(f"{'':{width}}  {'bound (spec)':>18}  {'expected':>18}  {'expected range':>25}")
    for label, fmt in _ROWS:
        lines.append(f"{label:{width}}  {fmt(r['bound']):>18}  {fmt(r['expected']):>18}  {band_range(r, label):>25}")
    if band_note(r):
        lines.append(band_note(r))
    lines += ["", *gap_lines(r["decode_gap"])]
    lines += ["", *assumption_lines(r.get("assumptions", []))]
    if show_ops and r.get("ops"):
        rows = [_OP_HEADER] + _op_rows(r)
        widths = [max(len(row[i]) for row in rows) for i in range(len(_OP_HEADER))]
        lines += ["", "ops (bound; decode = first step; per device; bytes each = weights + activations + KV)"]
        for row in rows:
            lines.append("  ".join(cell.ljust(w) if i < 2 or i == 6 else cell.rjust(w)
                                   for i, (cell, w) in enumerate(zip(row, widths, strict=True))))
    return "\n".join(lines)


def gap_lines(gap: dict[str, Any]) -> list[str]:
    """Why expected is slower than bound, for the mean decode step."""
    lines = [f"why expected is slower (mean decode step): bound {duration(gap['bound_step_s'])}"]
    for term in gap["terms"]:
        lines.append(f"  + {term['label']:28} {duration(term['seconds']):>10}   ({term['detail']})")
    lines.append(f"  = expected {duration(gap['expected_step_s'])}")
    return lines


def _assumption_value(a: dict[str, Any]) -> str:
    unit = a["unit"]
    if unit.startswith("s "):
        return f"{duration(a['value'])}{unit[1:]}"
    if unit.startswith("B/s"):
        return f"{si(a['value'], 'B/s')}{unit[3:]}"
    if unit.startswith("of "):
        return f"{a['value']:.1%} {unit}"
    return f"{a['value']:g} {unit}"


def assumption_lines(assumptions: list[dict[str, Any]]) -> list[str]:
    """The parameters expected used, each with its value and source."""
    if not assumptions:
        return []
    width = max(len(a["name"]) for a in assumptions)
    lines = ["assumptions of expected (bound: spec ceilings, full overlap, no fixed costs):"]
    lines += [f"  {a['name']:{width}}  {_assumption_value(a)}  [{a['source']}]" for a in assumptions]
    return lines


def render_markdown(r: dict[str, Any]) -> str:
    lines = [f"## {_summary_lines(r)[0]}", ""]
    lines += [f"- {line}" for line in _summary_lines(r)[1:] + _memory_lines(r)]
    lines += [f"- warning: {w}" for w in r["warnings"]]
    lines += ["", "| | bound (spec) | expected | expected range |", "| --- | ---: | ---: | ---: |"]
    lines += [f"| {label} | {fmt(r['bound'])} | {fmt(r['expected'])} | {band_range(r, label)} |"
              for label, fmt in _ROWS]
    if band_note(r):
        lines += ["", band_note(r)]
    lines += ["", "```", *gap_lines(r["decode_gap"]), "```"]
    if r.get("assumptions"):
        lines += ["", "| assumption of expected | value | source |", "| --- | ---: | --- |"]
        lines += [f"| {a['name']} | {_assumption_value(a)} | {a['source']} |" for a in r["assumptions"]]
    if r.get("ops"):
        lines += ["", "| " + " | ".join(_OP_HEADER) + " |", "|" + " --- |" * len(_OP_HEADER)]
        lines += ["| " + " | ".join(row) + " |" for row in _op_rows(r)]
    return "\n".join(lines) + "\n"
