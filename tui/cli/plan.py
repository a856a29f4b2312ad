"""``roofline plan``: the serving planner (continuous batching) for one device or several side by side.

For each device: the latency-throughput frontier over concurrency (``expected`` and ``bound``), the largest
concurrency meeting ITL and TTFT targets, and the TP x replicas that carry a request rate within them at the lowest
cost (:mod:`roofline.models.serving`). The plan is a plain dictionary (the JSON contract); the text and Markdown
views render it (:mod:`roofline.tui.views.plan_text`).
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import asdict, replace
from typing import Any

from roofline.tui.cli.completion import completion_ids
from roofline.tui.cli.scenario_flags import ListFlag, add_scenario_flags, form_from_args
from roofline.tui.inputs.form import model_kwargs
from roofline.tui.inputs.registry import INPUTS, flag_for

# --format json: bumped when a key is renamed or removed or its meaning changes (adding one is not a bump).
PLAN_SCHEMA_VERSION = 2  # 2: --disagg adds each device's "disaggregated" entry
# Scenario flags plan does not take: a static batch means nothing to a serving engine, and plan always serves.
# Every other input's flag is the registry's (its range and type), as a list where plan compares several values.
_NOT_PLAN_INPUTS = ("batch", "serving")
_PLAN_INPUTS = tuple(spec.name for spec in INPUTS if spec.flag and spec.name not in _NOT_PLAN_INPUTS)
_HARDWARE_OVERRIDES = ("mem_bw_override_gb_per_s", "peak_override_tflops", "capacity_override_gib")
# plan's own words for the inputs it takes; their ranges and types are the registry's
PLAN_HELPS = {
    "hardware_id": "hardware preset id, or a,b,c to compare devices side by side (roofline presets hardware)",
    "concurrency": "requests in flight to evaluate (default: powers of two up to the memory limit)",
    "rate_per_s": "arrival rate, requests/s: the devices (TP x replicas) that carry it within the targets "
                  "(needs --ttft-ms)",
    "itl_target_ms": "target inter-token latency, ms (default: none)",
    "ttft_target_ms": "target time to first token, ms (default: none)",
    "prefix_tokens": "shared prompt prefix, tokens, cached with hit rate --prefix-hit",
    "prefix_hit_rate": "share of requests whose prefix is in the cache (with --prefix-tokens)",
    "spec_tokens": "speculative tokens drafted per step (0: no speculation)",
    "spec_acceptance": "probability that a drafted token is accepted",
    "price_per_device_hour": "price of one device for an hour, $ (default: the preset's published price, else "
                             "none); with several --hardware, one per device in that order, 'preset' keeps a "
                             "preset's price",
}


def _plan_lists() -> dict[str, ListFlag]:
    from roofline.models.serving import MAX_FRONTIER_POINTS

    return {"concurrency": ListFlag(unique_sorted=True, at_most=MAX_FRONTIER_POINTS),
            "price_per_device_hour": ListFlag(keep_words=("preset", "-"))}


def add_plan_parser(sub) -> argparse.ArgumentParser:
    """Add the ``plan`` subcommand to ``sub`` (the object ``add_subparsers`` returned)."""
    plan = sub.add_parser(
        "plan", help="serving planner: continuous-batching frontier, targets, devices for a rate, $ and J per token",
        description="Plan serving with a continuous-batching engine (chunked prefill, paged KV cache): tokens/s per "
        "user against tokens/s per device over concurrency, the largest concurrency meeting ITL and TTFT targets, "
        "the devices (TP x replicas) carrying a request rate, and what a million output tokens cost in dollars and "
        "joules. --hardware a,b,c compares devices, each at its own price.")
    taken = add_scenario_flags(plan, only=_PLAN_INPUTS, lists=_plan_lists(), helps=PLAN_HELPS)
    plan.set_defaults(command_inputs=(*taken, "scenario"))
    plan.add_argument("--scenario", metavar="FILE", help="a saved scenario (TOML): its hardware, model, precisions "
                      "and lengths; flags override its values")
    plan.add_argument("--draft", metavar="MODEL", choices=completion_ids("models"),
                      help="speculative decoding with this draft model (a model preset "
                      "id or config.json); without it, --spec-tokens drafts with one MTP layer of the target")
    plan.add_argument("--format", choices=("text", "markdown", "json"), default="text",
                      help="output format; json: schema_version, model, mix, targets_asked, speculation, "
                      "assumptions, and per device (several: under devices, a list, and cheapest) hardware, tp, "
                      "pp, devices_per_replica, price_usd_per_hour, price_source, memory, expected and bound "
                      "{frontier, targets}")
    from roofline.tui.cli.plan_disagg import add_disagg_flags

    add_disagg_flags(plan)
    return plan


class _Usage(ValueError):
    """A bad value found after parsing: main reports it as one line, exit status 2."""


def _hardware_ids(text: str) -> list[str]:
    ids = [part.strip() for part in text.split(",")]
    if any(not part for part in ids):
        raise _Usage(f"--hardware: {text!r}: give ID or a,b,c")
    if len(set(ids)) != len(ids):
        raise _Usage(f"--hardware: {text!r} names a device twice")
    return ids


def _targets(args: argparse.Namespace) -> tuple[float | None, float | None, float | None]:
    itl_s = None if args.itl_target_ms is None else args.itl_target_ms / 1e3
    ttft_s = None if args.ttft_target_ms is None else args.ttft_target_ms / 1e3
    if args.rate_per_s is not None and ttft_s is None:
        raise _Usage("--rate: needs --ttft-ms (queueing for prefill grows without bound as the rate nears a "
                     "replica's capacity; the TTFT target says how close to run)")
    return itl_s, ttft_s, args.rate_per_s


def _mix(args: argparse.Namespace, form):
    from roofline.models.serving import ServingMix

    if (args.prefix_tokens is None) != (args.prefix_hit_rate is None):
        given = "--prefix-tokens" if args.prefix_tokens is not None else "--prefix-hit"
        other = "--prefix-hit" if given == "--prefix-tokens" else "--prefix-tokens"
        raise _Usage(f"{given}: needs {other} too")
    if args.prefix_tokens is not None and args.prefix_tokens > form.prompt_tokens:
        raise _Usage(f"--prefix-tokens: {args.prefix_tokens:,} is longer than the prompt ({form.prompt_tokens:,} "
                     "tokens, --prompt)")
    return ServingMix(prompt_tokens=form.prompt_tokens, output_tokens=form.output_tokens,
                      prefix_tokens=args.prefix_tokens or 0, prefix_hit_rate=args.prefix_hit_rate or 0.0)


def _speculation(args: argparse.Namespace):
    from roofline.models.serving import Speculation
    from roofline.presets import resolve_model
    from roofline.tui.cli.preset_loading import load_preset

    if args.draft is None and args.spec_tokens is None and args.spec_acceptance is None:
        return None
    if args.spec_tokens == 0:  # 0 is no speculation, as in the explorer and scenario files
        for flag, value in (("--draft", args.draft), ("--accept", args.spec_acceptance)):
            if value is not None:
                raise _Usage(f"--spec-tokens: 0 is no speculation, so {flag} means nothing (give 1 or more)")
        return None
    given = ", ".join(flag for flag, value in (("--draft", args.draft), ("--spec-tokens", args.spec_tokens),
                                                 ("--accept", args.spec_acceptance)) if value is not None)
    for flag, value in (("--spec-tokens", args.spec_tokens), ("--accept", args.spec_acceptance)):
        if value is None:
            raise _Usage(f"{flag}: needed for speculative decoding (given: {given})")
    draft = None if args.draft is None else load_preset("--draft", "models", args.draft, resolve_model)
    return Speculation(tokens=args.spec_tokens, acceptance=args.spec_acceptance, draft=draft)


def _prices(args: argparse.Namespace, ids: list[str]) -> list[float | None]:
    if args.price_per_device_hour is None:
        return [None] * len(ids)
    if len(args.price_per_device_hour) != len(ids):
        if len(ids) > 1 and len(args.price_per_device_hour) == 1:
            raise _Usage(f"--price-per-hour: give one price per device ({len(ids)}, in the order of --hardware; "
                         "'preset' keeps a preset's price): devices do not share one price")
        raise _Usage(f"--price-per-hour: {len(args.price_per_device_hour)} prices for {len(ids)} device(s) of "
                     "--hardware")
    return list(args.price_per_device_hour)


def _scenarios(args: argparse.Namespace, form, ids: list[str]) -> list:
    from roofline.presets import load_hardware, resolve_model
    from roofline.tui.cli.preset_loading import load_preset
    from roofline.tui.inputs.form import FormError, scenario_from

    if len(ids) > 1:
        for name in _HARDWARE_OVERRIDES:
            if getattr(form, name) is not None:
                raise _Usage(f"{flag_for(name)}: overrides one device's figure; not with several --hardware")
    model = load_preset("--model", "models", form.model_ref, resolve_model)
    scenarios = []
    for hw_id in ids:
        hardware = load_preset("--hardware", "hardware", hw_id, load_hardware)
        try:
            scenarios.append(scenario_from(replace(form, hardware_id=hw_id), hardware, model))
        except FormError as err:
            where = f" (on {hw_id})" if len(ids) > 1 else ""
            raise _Usage(f"{flag_for(err.field)}: {err.message}{where}") from None
    return scenarios


def _finite(value: float | None) -> float | None:
    """JSON has no infinity: an unbounded figure (a queue that never drains) is null."""
    return None if value is None or not math.isfinite(value) else value


def point_dict(point) -> dict[str, Any]:
    """A :class:`FrontierPoint` as JSON (every field; infinities as null)."""
    return {key: (_finite(value) if isinstance(value, float) else value) for key, value in asdict(point).items()}


def _estimate_plan(scenario, mix, options, estimate_name: str, concurrencies, itl_s, ttft_s, rate) -> dict[str, Any]:
    from roofline.models.serving import devices_for_rate, frontier, max_concurrency_for_targets

    front = frontier(scenario, mix, concurrencies, estimate_name, options)
    targets: dict[str, Any] = {"max_concurrency": None, "max_concurrency_point": None, "devices_for_rate": None}
    if itl_s is not None or ttft_s is not None:
        result = max_concurrency_for_targets(scenario, mix, itl_s=math.inf if itl_s is None else itl_s,
                                             ttft_s=math.inf if ttft_s is None else ttft_s,
                                             estimate_name=estimate_name, options=options)
        targets["max_concurrency"] = result.max_concurrency
        targets["max_concurrency_point"] = None if result.point is None else point_dict(result.point)
    if rate is not None:
        found = devices_for_rate(scenario, mix, rate, itl_s=math.inf if itl_s is None else itl_s, ttft_s=ttft_s,
                                 estimate_name=estimate_name, options=options)
        targets["devices_for_rate"] = {"found": False} if found is None else {
            "found": True, "tp": found.tp, "replicas": found.replicas, "devices": found.devices,
            "max_requests_per_s_per_replica": found.max_requests_per_s_per_replica,
            "usd_per_hour": found.usd_per_hour, "point": point_dict(found.point)}
    return {"frontier": [point_dict(p) for p in front.points], "targets": targets}


def _device_plan(scenario, mix, options, args, itl_s, ttft_s, rate) -> dict[str, Any]:
    from roofline.models.engines import engine_profile
    from roofline.models.serving import kv_cache_plan

    hw = scenario.hardware
    override = options.price_usd_per_hour
    price = override if override is not None else hw.price_usd_per_hour
    power_w = None if hw.tdp_w is None else hw.tdp_w / hw.devices_per_package
    memory = kv_cache_plan(scenario, mix, options)
    return {
        "arrivals": arrival_models(options),
        "fixed_costs": fixed_costs(scenario, options),
        "hardware": hw.id, "hardware_name": hw.name, "tp": scenario.parallelism.tp, "pp": scenario.parallelism.pp,
        "devices_per_replica": scenario.parallelism.devices, "engine": scenario.engine,
        "engine_name": engine_profile(scenario.engine).name,
        "price_usd_per_hour": price,
        "price_source": ("--price-per-hour" if override is not None else (hw.price_source or None)
                         if price is not None else None),
        "price_basis": ("--price-per-hour" if override is not None else (hw.price_basis or None)
                        if price is not None else None),
        "power_w": power_w, "power_source": None if power_w is None else "board power (tdp_w) of the preset, a ceiling",
        "memory": {**asdict(memory), "fits": memory.fits},
        **{name: _estimate_plan(scenario, mix, options, name, args.concurrency, itl_s, ttft_s, rate)
           for name in ("expected", "bound")},
    }


def _cheapest(device_plans: list[dict[str, Any]], rate) -> dict[str, Any] | None:
    """The cheapest device under ``expected``: the lowest $/hour for the rate when one is asked, else the lowest
    $/Mtok at the targets' largest concurrency when targets are asked, else at the memory limit."""
    from roofline.tui.views.price_basis import PRICE_BASIS_WORDS, comparable_price

    priced, unpriced, other_basis = [], [], []
    for plan in device_plans:
        if not comparable_price(plan.get("price_basis")) and plan["price_usd_per_hour"] is not None:
            other_basis.append(plan["hardware"])  # a serverless or unstated price is not the same kind of price
            continue
        targets = plan["expected"]["targets"]
        devices = plan["devices_per_replica"]
        if rate is not None:
            found = targets["devices_for_rate"]
            value = found["usd_per_hour"] if found["found"] else None
            devices = found.get("devices")
            basis = "usd_per_hour"
        elif targets["max_concurrency"] is not None:
            point = targets["max_concurrency_point"]
            value = None if point is None else point["usd_per_million_tokens"]
            basis = "usd_per_million_tokens at max_concurrency"
        else:
            fitting = [p for p in plan["expected"]["frontier"] if p["fits"]]
            value = fitting[-1]["usd_per_million_tokens"] if fitting else None
            basis = "usd_per_million_tokens at the largest fitting concurrency"
        (priced if value is not None else unpriced).append((value, plan["hardware"], devices))
    if not priced:
        return None
    value, hw_id, devices = min(priced)
    return {"hardware": hw_id, "basis": basis, "value": value, "devices": devices,
            "price_basis": PRICE_BASIS_WORDS,
            "without_price_or_plan": [hw for _value, hw, _devices in unpriced],
            "without_comparable_price": other_basis}


def arrival_models(options) -> dict[str, str]:
    """The arrival model behind each figure: the frontier and the targets follow ``--arrivals``; the devices for a
    rate are always Poisson (a rate is an open loop)."""
    return {"frontier": options.arrivals, "targets": options.arrivals, "devices_for_rate": "poisson"}


def fixed_costs(scenario, options) -> dict[str, Any]:
    """The fixed costs each estimate applies per request: the engine profile's request path under expected
    (models/serving/frontier.request_overhead_s), none under bound."""
    from roofline.models.engines import engine_profile
    from roofline.models.serving import request_overhead_s

    engine = engine_profile(scenario.engine)
    source = engine.sources.get("request_overhead_s") if engine.request_overhead_s else None
    return {
        "expected": {"request_overhead_s": request_overhead_s(scenario, "expected", options),
                     "source": source or "no public figure for this engine"},
        "bound": {"request_overhead_s": 0.0, "source": "bound has no overheads"},
    }


def assumptions(options) -> dict[str, str]:
    """What the plan assumes, in words (the text output states these)."""
    return {
        "scheduler": (f"continuous batching as vLLM schedules it: chunked prefill under a budget of "
                      f"{options.max_num_batched_tokens:,} tokens per step, paged KV blocks of "
                      f"{options.block_size_tokens} tokens, gpu_memory_utilization {options.gpu_memory_utilization:g}"
                      "; mean prompt and output lengths"),
        "queueing": (("at a concurrency (--arrivals closed): a closed loop (vllm bench serve --max-concurrency); "
                      "requests of near-fixed lengths restart in groups of one step's budget, so a prompt waits for "
                      "its group's prefill; beyond the decode slots they queue (Little's law)"
                      if options.arrivals == "closed" else
                      "at a concurrency (--arrivals poisson): Poisson arrivals at the rate whose mean concurrency "
                      "(rate x e2e) is the point's")
                     + "; at a rate: Poisson arrivals, the prefill budget as an M/D/1 server; no burstiness beyond "
                     "Poisson, no preemption"),
        "latency": ("ITL = time per output token after the first (the engines' TPOT): a request's decode steps "
                    "carry other requests' prefill chunks, never its own prompt; TTFT adds the engine's fixed "
                    "path per request (HTTP, tokenising, scheduling, detokenising; fixed_costs)"),
        "cost": ("$/Mtok = price per device-hour x the devices of one replica (TP x PP) / output tokens per hour "
                 "x 1e6: device-hours only, prompt tokens not counted as output"),
        "energy": "J/tok = board power per device x devices / output tokens per second of the replica (a ceiling)",
    }


def _options(form, **given):
    """The engine options of the form's inputs (each registry input with a ``ServingOptions.*`` model field, e.g.
    ``--arrivals``), with ``given`` over them (the per-device price, the speculation)."""
    from roofline.models.serving import ServingOptions

    return ServingOptions(**(model_kwargs(form, "ServingOptions") | given))


def build_plan(args: argparse.Namespace) -> dict[str, Any]:
    """The plan of the flags, as the JSON contract (one device: its fields at the top; several: ``devices``)."""
    from roofline.models.errors import ModelInputError
    from roofline.tui.cli.scenario_source import scenario_file_form
    from roofline.tui.views.precision_text import scenario_precision_warning

    for name in _plan_lists():  # one value given before the command (roofline --concurrency 8 plan): a list of one
        value = getattr(args, name, None)
        if value is not None and not isinstance(value, list):
            setattr(args, name, [value])
    form = form_from_args(args, scenario_file_form(args)[0])
    ids = _hardware_ids(form.hardware_id)
    itl_s, ttft_s, rate = _targets(args)
    prices = _prices(args, ids)
    try:
        mix = _mix(args, form)
        speculation = _speculation(args)
        scenarios = _scenarios(args, form, ids)
        plans = [_device_plan(s, mix, _options(form, speculation=speculation, price_usd_per_hour=price),
                              args, itl_s, ttft_s, rate) for s, price in zip(scenarios, prices, strict=True)]
    except ModelInputError as err:
        raise _Usage(f"{flag_for(err.field)}: {err.message}") from None
    plan: dict[str, Any] = {
        "schema_version": PLAN_SCHEMA_VERSION,
        "model": scenarios[0].model.id, "model_name": scenarios[0].model.name,
        "mix": asdict(mix) | {"computed_prompt_tokens": mix.computed_prompt_tokens},
        "precisions": {"weights": scenarios[0].precisions.weights,
                       "expert_weights": scenarios[0].precisions.expert_weights,
                       "activations": scenarios[0].precisions.activations, "kv": scenarios[0].precisions.kv},
        "warnings": sorted({w for w in map(scenario_precision_warning, scenarios) if w is not None}),
        "targets_asked": {"itl_s": itl_s, "ttft_s": ttft_s, "rate_per_s": rate},
        "speculation": None if speculation is None else {
            "tokens": speculation.tokens, "acceptance": speculation.acceptance,
            "draft": "mtp" if speculation.draft is None else speculation.draft.id,
            "tokens_per_step": speculation.tokens_per_step},
        "arrivals": arrival_models(_options(form)),
        "assumptions": assumptions(_options(form)),
    }
    from roofline.tui.cli.plan_disagg import attach_disagg

    plans = attach_disagg(args, plans, scenarios, mix, itl_s, ttft_s, rate, prices, _Usage)
    if len(plans) == 1:
        return plan | plans[0]
    return plan | {"devices": plans, "cheapest": _cheapest(plans, rate)}


def run_plan(args: argparse.Namespace) -> int:
    plan = build_plan(args)
    if args.format == "json":
        print(json.dumps(plan, indent=2, allow_nan=False))
        return 0
    from roofline.tui.cli.terminal_text import without_controls
    from roofline.tui.views.plan_text import render_markdown, render_text

    # names come from user files: cleaned where they entered, and again here
    print(without_controls(render_markdown(plan) if args.format == "markdown" else render_text(plan)), end="")
    from roofline.tui.views.plan_disagg_text import render_disagg

    print(render_disagg(plan, markdown=args.format == "markdown"), end="")
    return 0
