"""``roofline plan`` as readable text or Markdown, from the plan dictionary (:func:`roofline.tui.cli.plan.build_plan`).

One table per device (the ``expected`` frontier), the arrival model and the fixed per-request cost behind its
figures, the targets under both estimates, the devices for the rate, the cheapest device when several are compared,
and what the numbers assume.
"""

from __future__ import annotations

from typing import Any

from roofline.tui.views.formatting import duration, rate
from roofline.tui.views.precision_text import precision_line

NO_PRICE = "no price"
HEADER = ["concurrency", "tok/s/user", "tok/s/device", "TTFT", "ITL", "idle cores %", "MBU %", "J/tok", "$/Mtok",
          "limited by", "fits"]  # idle cores and MBU: the mean mixed step's


def _time(seconds: float | None) -> str:
    return "unbounded" if seconds is None else duration(seconds)


def _usd(value: float | None, unit: str = "/Mtok") -> str:
    return NO_PRICE if value is None else f"${value:,.2f}{unit}"


def _joules(value: float | None) -> str:
    return "-" if value is None else (f"{value:,.2f}" if value < 100 else f"{value:,.0f}")


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _speed(value: float) -> str:
    return f"{value:,.1f}" if value < 1000 else f"{value:,.0f}"


def _count(value: float | None) -> str:
    if value is None:
        return "unbounded"
    return f"{value:,.0f}" if value == int(value) else f"{value:,.1f}"


def _row(p: dict[str, Any]) -> list[str]:
    return [_count(p["concurrency"]), _speed(p["tokens_per_s_per_user"]), _speed(p["tokens_per_s_per_device"]),
            _time(p["ttft_s"]), duration(p["itl_s"]), _percent(p.get("idle_core_pct")), _percent(p.get("mbu_pct")),
            _joules(p["joules_per_token"]),
            NO_PRICE if p["usd_per_million_tokens"] is None else f"{p['usd_per_million_tokens']:,.2f}",
            p["limited_by"], "yes" if p["fits"] else "no"]


def _devices(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return plan.get("devices", [plan])


def _heading(plan: dict[str, Any]) -> list[str]:
    mix, asked, spec = plan["mix"], plan["targets_asked"], plan["speculation"]
    lines = [f"{plan['model_name']}: prompt {mix['prompt_tokens']:,.0f}, output {mix['output_tokens']:,.0f} tokens "
             "per request (mean lengths)"]
    if "precisions" in plan:  # say what --weights fp8 means
        p = plan["precisions"]
        lines.append(precision_line(p["weights"], p["activations"], p["kv"], p.get("expert_weights")))
        lines += [f"warning: {w}" for w in plan.get("warnings", [])]
    if mix["prefix_tokens"]:
        lines.append(f"shared prefix {mix['prefix_tokens']:,.0f} tokens, hit rate {mix['prefix_hit_rate']:.0%}: "
                     f"{mix['computed_prompt_tokens']:,.0f} prompt tokens computed per request")
    if spec is not None:
        draft = "one MTP layer of the target" if spec["draft"] == "mtp" else f"draft {spec['draft']}"
        lines.append(f"speculative decoding: {draft}, {spec['tokens']} tokens drafted, acceptance "
                     f"{spec['acceptance']:g}: {spec['tokens_per_step']:.2f} tokens per verification step")
    if asked["itl_s"] is None and asked["ttft_s"] is None:
        lines.append("targets: none (give --itl-ms and --ttft-ms)")
    else:
        lines.append(f"targets: ITL <= {_time(asked['itl_s'])}, TTFT <= {_time(asked['ttft_s'])}"
                     + (f"; rate {asked['rate_per_s']:g} requests/s" if asked["rate_per_s"] is not None else ""))
    return lines


ARRIVAL_WORDS = {"closed": "closed loop (requests restart in groups; a prompt waits for its group's prefill)",
                 "poisson": "Poisson arrivals (M/D/1 queueing for prefill)"}


def _arrival_line(d: dict[str, Any]) -> str:
    a = d["arrivals"]
    return (f"arrivals: frontier and targets {ARRIVAL_WORDS[a['frontier']]}; devices for a rate "
            f"{ARRIVAL_WORDS[a['devices_for_rate']]}")


def _fixed_cost_line(d: dict[str, Any]) -> str:
    fixed = d["fixed_costs"]["expected"]
    if not fixed["request_overhead_s"]:
        return f"fixed path per request (in TTFT): none ({fixed['source']}); bound: none"
    return (f"fixed path per request (in TTFT): {duration(fixed['request_overhead_s'])} under expected "
            f"({fixed['source']}); bound: none")


def _device_lines(d: dict[str, Any]) -> list[str]:
    mem = d["memory"]
    price = (f"${d['price_usd_per_hour']:,.2f} per device-hour ({d['price_source']})"
             if d["price_usd_per_hour"] is not None else f"{NO_PRICE} (give --price-per-hour for $ columns)")
    return [
        f"{d['hardware_name']}: tp {d['tp']} x pp {d['pp']} = {d['devices_per_replica']} device(s) per replica",
        f"expected's overheads: engine {d['engine_name']}",
        _arrival_line(d),
        _fixed_cost_line(d),
        f"price: {price}",
        f"memory per device: {mem['num_blocks']:,} KV blocks of {mem['block_size_tokens']} tokens, "
        f"a request holds {mem['blocks_per_request']:,}: a replica holds at most {mem['max_concurrency']:,} requests"
        + ("" if mem["fits"] else " (DOES NOT FIT)"),
    ]


def _target_lines(d: dict[str, Any], asked: dict[str, Any]) -> list[str]:
    lines = []
    exp, bnd = d["expected"]["targets"], d["bound"]["targets"]
    if exp["max_concurrency"] is not None:
        point = exp["max_concurrency_point"]
        if point is None:
            why = ("not one request fits in memory" if d["memory"]["max_concurrency"] < 1
                   else f"even 1 request misses them (bound, a ceiling: {bnd['max_concurrency']:,})")
            lines.append(f"max concurrency meeting the targets: none, {why}")
        else:
            lines.append(f"max concurrency meeting the targets: {exp['max_concurrency']:,} (bound, a ceiling: "
                         f"{bnd['max_concurrency']:,}); there {point['tokens_per_s_per_user']:,.1f} tok/s/user, "
                         f"{rate(point['tokens_per_s_per_device'], 'tok/s/device')}, TTFT {_time(point['ttft_s'])}, "
                         f"ITL {duration(point['itl_s'])}, {_usd(point['usd_per_million_tokens'])}")
    found = exp["devices_for_rate"]
    if found is not None:
        if not found["found"]:
            lines.append(f"devices for {asked['rate_per_s']:g} requests/s: none (no TP in 1, 2, 4, 8 meets the "
                         "targets)")
        else:
            point = found["point"]
            bound_found = bnd["devices_for_rate"]
            ceiling = (f"tp {bound_found['tp']} x {bound_found['replicas']} = {bound_found['devices']}"
                       if bound_found["found"] else "none")
            lines.append(f"devices for {asked['rate_per_s']:g} requests/s (TP 1, 2, 4 or 8, pp 1): tp {found['tp']} x "
                         f"{found['replicas']} "
                         f"replicas = {found['devices']} devices, {_usd(found['usd_per_hour'], '/hour')} "
                         f"(bound, a ceiling: {ceiling}); each replica carries up to "
                         f"{found['max_requests_per_s_per_replica']:,.2f} requests/s, runs at "
                         f"{_count(point['concurrency'])} in flight, TTFT {_time(point['ttft_s'])}, "
                         f"ITL {duration(point['itl_s'])}, {_usd(point['usd_per_million_tokens'])}")
    return lines


def _cheapest_line(plan: dict[str, Any]) -> list[str]:
    if "devices" not in plan:
        return []
    best = plan["cheapest"]
    other = (best or {}).get("without_comparable_price") or []
    basis = [f"prices compared: {best['price_basis']}"] if best and best.get("price_basis") else []
    basis += [f"left out of cheapest (a serverless or unstated price, not comparable): {', '.join(other)}"] \
        if other else []
    if best is None:
        return ["cheapest: no device has both an on-demand (or --price-per-hour) price and a plan meeting the asks"]
    unit = "/hour" if best["basis"] == "usd_per_hour" else "/Mtok"
    what = {"usd_per_hour": "for the rate within the targets",
            "usd_per_million_tokens at max_concurrency": "at the largest concurrency meeting the targets",
            }.get(best["basis"], "at the largest concurrency that fits")
    others = best["without_price_or_plan"]
    return [f"cheapest (expected, {what}): {best['hardware']} at {_usd(best['value'], unit)} on {best['devices']} "
            "devices"
            + (f"; not compared: {', '.join(others)} (no price or no plan)" if others else ""), *basis]


def _table(rows: list[list[str]]) -> list[str]:
    rows = [HEADER, *rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
    return ["  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]


def _assumption_lines(plan: dict[str, Any]) -> list[str]:
    return [f"  {name}: {text}" for name, text in plan["assumptions"].items()]


def render_text(plan: dict[str, Any]) -> str:
    lines = _heading(plan)
    for d in _devices(plan):
        per = d["devices_per_replica"]
        lines += ["", *_device_lines(d),
                  f"expected frontier (one replica; per-device figures divide by its {per} device(s)):",
                  *_table([_row(p) for p in d["expected"]["frontier"]]), *_target_lines(d, plan["targets_asked"])]
    lines += ["", *_cheapest_line(plan)] if "devices" in plan else []
    lines += ["", "assumptions (bound: spec ceilings, no overheads; expected: the engine's overheads):",
              *_assumption_lines(plan)]
    return "\n".join(lines) + "\n"


def render_markdown(plan: dict[str, Any]) -> str:
    lines = [f"## Serving plan: {_heading(plan)[0]}", "", *[f"- {line}" for line in _heading(plan)[1:]]]
    for d in _devices(plan):
        lines += ["", f"### {_device_lines(d)[0]}", ""]
        lines += [f"- {line}" for line in _device_lines(d)[1:] + _target_lines(d, plan["targets_asked"])]
        lines += ["", "| " + " | ".join(HEADER) + " |", "|" + " ---: |" * len(HEADER)]
        lines += ["| " + " | ".join(_row(p)) + " |" for p in d["expected"]["frontier"]]
    if "devices" in plan:
        lines += ["", *[f"**{line}**" for line in _cheapest_line(plan)]]
    lines += ["", "Assumptions (bound: spec ceilings, no overheads; expected: the engine's overheads):", ""]
    lines += [f"- {name}: {text}" for name, text in plan["assumptions"].items()]
    return "\n".join(lines) + "\n"
