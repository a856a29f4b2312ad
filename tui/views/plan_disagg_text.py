"""The disaggregated section of ``roofline plan --disagg`` as text or Markdown, from the plan dictionary
(tui/cli/plan_disagg.py): per device, the best aggregated and the best disaggregated layout, their pools, devices,
$ per hour and per million output tokens, J per token, TTFT (with the KV transfer) and ITL, and who wins."""

from __future__ import annotations

from typing import Any


def _n(count: float, word: str) -> str:
    """``1 device``, ``16 devices``."""
    return f"{count:,.0f} {word}{'' if round(count) == 1 else 's'}"


def _money(value: float | None, unit: str) -> str:
    return "no price" if value is None else f"${value:,.2f}{unit}"


def _joules(value: float | None) -> str:
    return "no power figure" if value is None else f"{value:.2f} J/tok"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1e3:,.1f} ms"


def _cost(entry: dict[str, Any]) -> str:
    """$/hour and $/Mtok, or "no price" once."""
    if entry["usd_per_hour"] is None:
        return "no price"
    return f"{_money(entry['usd_per_hour'], '/h')}, {_money(entry['usd_per_million_tokens'], '/Mtok')}"


def _aggregated_line(a: dict[str, Any] | None) -> str:
    if a is None:
        return "no TP x replicas layout meets the targets"
    return (f"{a['layout']} x {_n(a['replicas'], 'replica')} = {_n(a['devices'], 'device')}, {_cost(a)}, "
            f"{_joules(a['joules_per_token'])}; TTFT {_ms(a['ttft_s'])}, ITL {_ms(a['itl_s'])}")


def _pool(p: dict[str, Any]) -> str:
    nodes = p["nodes_per_instance"]
    where = f", {_n(nodes, 'node')} each" if nodes > 1 else ""
    return f"{p['instances']} x {p['layout']} ({_n(p['devices'], 'device')}{where})"


def _disaggregated_lines(d: dict[str, Any] | None) -> list[str]:
    if d is None:
        return ["no prefill and decode pools meet the targets"]
    p, q, t = d["prefill"], d["decode"], d["kv_transfer"]
    return [
        f"{d['ratio']}: prefill {_pool(p)}, decode {_pool(q)} = {_n(d['devices'], 'device')}, {_cost(d)}, "
        f"{_joules(d['joules_per_token'])}",
        f"TTFT {_ms(d['ttft_s'])} = queue {_ms(p['queue_s'])} + prefill pass {_ms(p['step_time_s'])} "
        f"+ KV transfer {_ms(t['time_s'])} ({t['bytes_per_request'] / 1e6:,.1f} MB over {t['link']}, "
        f"{_n(t['paths'], 'path')}); ITL {_ms(d['itl_s'])} "
        f"({_n(q['requests_per_rank'], 'request')} per {'rank' if q['kind'] == 'ep' else 'instance'})",
    ]


def _device_lines(device: dict[str, Any], markdown: bool) -> list[str]:
    entry = device.get("disaggregated")
    if entry is None:
        return []
    e, b = entry["expected"], entry["bound"]
    out = entry.get("scale_out")
    fabric = "no scale-out fabric" if out is None else f"{out['name']} between nodes"
    head = f"{device['hardware']}: {entry['devices_per_node']} per node, {fabric}"
    bullet = "- " if markdown else "  "
    lines = [f"### {head}" if markdown else head,
             f"{bullet}aggregated:    {_aggregated_line(e['aggregated'])}"]
    d_lines = _disaggregated_lines(e["disaggregated"])
    lines.append(f"{bullet}disaggregated: {d_lines[0]}")
    lines += [f"{'  ' if markdown else '                 '}{line}" for line in d_lines[1:]]
    lines.append(f"{bullet}expected: {e['summary']}.")
    b_agg = "no layout" if b["aggregated"] is None else _n(b["aggregated"]["devices"], "device")
    b_dis = "no layout" if b["disaggregated"] is None else _n(b["disaggregated"]["devices"], "device")
    lines.append(f"{bullet}bound (a ceiling): aggregated {b_agg}, disaggregated {b_dis}.")
    return lines


def render_disagg(plan: dict[str, Any], *, markdown: bool = False) -> str:
    """The section, or "" when the plan has no disaggregated entries."""
    devices = plan.get("devices") or [plan]
    if not any("disaggregated" in d for d in devices):
        return ""
    asked = plan.get("targets_asked", {})
    rate, itl, ttft = asked.get("rate_per_s"), asked.get("itl_s"), asked.get("ttft_s")
    title = (f"Aggregated vs disaggregated at {rate:g} req/s, ITL <= {_ms(itl)}, TTFT <= {_ms(ttft)} "
             "(expected; $/Mtok and J/tok per output token)")
    lines = ["", f"## {title}" if markdown else title]
    for device in devices:
        lines += _device_lines(device, markdown)
    first = next(d for d in devices if "disaggregated" in d)
    lines.append(f"Assumes (disaggregated): {first['disaggregated']['assumptions']}.")
    return "\n".join(lines) + "\n"
