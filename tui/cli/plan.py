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
from roofline.tui.cli.scenario_flags import add_scenario_flags, form_from_args
from roofline.tui.inputs.registry import INPUTS, SERVING_INPUTS

# --format json: bumped when a key is renamed or removed or its meaning changes (adding one is not a bump).
PLAN_SCHEMA_VERSION = 1
MAX_CONCURRENCY = 10_000_000
MAX_SPEC_TOKENS = 64
# Scenario flags plan does not take: a static batch means nothing to a serving engine, and the price flag is plan's
# own (one price per device in the order of --hardware), as are the serving inputs' (lists, several devices).
_NOT_PLAN_INPUTS = ("batch", "shown_context", "price_per_device_hour", *SERVING_INPUTS)
_PLAN_INPUTS = tuple(spec.name for spec in INPUTS if spec.flag and spec.name not in _NOT_PLAN_INPUTS)
_HARDWARE_OVERRIDES = ("mem_bw_override_gb_per_s", "peak_override_tflops", "capacity_override_gib")
# model error fields -> the flag the user typed
_MODEL_FIELD_FLAGS = {
    "prompt_tokens": "--prompt", "output_tokens": "--output", "prefix_tokens": "--prefix-tokens",
    "prefix_hit_rate": "--prefix-hit", "spec_tokens": "--spec-tokens", "accept": "--accept",
    "concurrency": "--concurrency", "rate": "--rate", "price_usd_per_hour": "--price-per-hour",
}


def _number(flag: str, *, low: float, high: float, low_open: bool = False, whole: bool = False):
    """An argparse type: a finite number in [low, high] ((low, high] when ``low_open``)."""
    def parse(text: str) -> float | int:
        try:
            value = float(text.strip().replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        if whole and value != int(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
        if (value <= low if low_open else value < low) or value > high:
            lower = f"more than {low:g}" if low_open else f"at least {low:g}"
            raise argparse.ArgumentTypeError(f"{text!r} must be {lower} and at most {high:g}")
        return int(value) if whole else value

    parse.__name__ = flag  # argparse names the type in "invalid <name> value"
    return parse


def _concurrency_list(text: str) -> list[int]:
    """``N`` or ``a,b,c``: whole numbers >= 1, sorted, each once."""
    from roofline.models.serving import MAX_FRONTIER_POINTS

    one = _number("--concurrency", low=1, high=MAX_CONCURRENCY, whole=True)
    parts = [part for part in text.split(",")]
    if any(not part.strip() for part in parts):
        raise argparse.ArgumentTypeError(f"{text!r}: give N or a,b,c (whole numbers >= 1)")
    values = sorted({one(part) for part in parts})
    if len(values) > MAX_FRONTIER_POINTS:
        raise argparse.ArgumentTypeError(f"at most {MAX_FRONTIER_POINTS:,} values, got {len(values):,}")
    return values


def _price_list(text: str) -> list[float | None]:
    """``P`` or ``a,b,c`` in the order of --hardware; ``preset`` keeps that device's preset price."""
    one = _number("--price-per-hour", low=0, high=1_000_000)
    return [None if part.strip().lower() in ("preset", "-") else float(one(part)) for part in text.split(",")]


def add_plan_parser(sub) -> argparse.ArgumentParser:
    """Add the ``plan`` subcommand to ``sub`` (the object ``add_subparsers`` returned)."""
    plan = sub.add_parser(
        "plan", help="serving planner: continuous-batching frontier, targets, devices for a rate, $ and J per token",
        description="Plan serving with a continuous-batching engine (chunked prefill, paged KV cache): tokens/s per "
        "user against tokens/s per device over concurrency, the largest concurrency meeting ITL and TTFT targets, "
        "the devices (TP x replicas) carrying a request rate, and what a million output tokens cost in dollars and "
        "joules. --hardware a,b,c compares devices, each at its own price.")
    add_scenario_flags(plan, only=_PLAN_INPUTS)
    plan.add_argument("--concurrency", type=_concurrency_list, metavar="N|a,b,c",
                      help="requests in flight to evaluate (default: powers of two up to the memory limit)")
    plan.add_argument("--rate", type=_number("--rate", low=0, high=1e9, low_open=True), metavar="R",
                      help="arrival rate, requests/s: the devices (TP x replicas) that carry it within the targets "
                      "(needs --ttft-ms)")
    plan.add_argument("--itl-ms", type=_number("--itl-ms", low=0, high=1e9, low_open=True), metavar="MS",
                      help="target inter-token latency, ms (default: none)")
    plan.add_argument("--ttft-ms", type=_number("--ttft-ms", low=0, high=1e9, low_open=True), metavar="MS",
                      help="target time to first token, ms (default: none)")
    plan.add_argument("--prefix-tokens", type=_number("--prefix-tokens", low=0, high=10_000_000, whole=True),
                      metavar="S", help="shared prompt prefix, tokens, cached with hit rate --prefix-hit")
    plan.add_argument("--prefix-hit", type=_number("--prefix-hit", low=0, high=1), metavar="H",
                      help="share of requests whose prefix is in the cache, 0..1 (with --prefix-tokens)")
    plan.add_argument("--draft", metavar="MODEL", choices=completion_ids("models"),
                      help="speculative decoding with this draft model (a model preset "
                      "id or config.json); without it, --spec-tokens drafts with one MTP layer of the target")
    plan.add_argument("--spec-tokens", type=_number("--spec-tokens", low=1, high=MAX_SPEC_TOKENS, whole=True),
                      metavar="K", help="speculative tokens drafted per step")
    plan.add_argument("--accept", type=_number("--accept", low=0, high=1), metavar="A",
                      help="probability that a drafted token is accepted, 0..1")
    plan.add_argument("--price-per-hour", dest="plan_prices", type=_price_list, metavar="P|a,b,c",
                      help="price of one device for an hour, $ (default: the preset's published price, else none); "
                      "with several --hardware, one per device in that order, 'preset' keeps a preset's price")
    plan.add_argument("--format", choices=("text", "markdown", "json"), default="text",
                      help="output format; json: schema_version, model, mix, targets_asked, speculation, "
                      "assumptions, and per device (several: under devices, a list, and cheapest) hardware, tp, "
                      "pp, devices_per_replica, price_usd_per_hour, price_source, memory, expected and bound "
                      "{frontier, targets}")
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
    itl_s = None if args.itl_ms is None else args.itl_ms / 1e3
    ttft_s = None if args.ttft_ms is None else args.ttft_ms / 1e3
    if args.rate is not None and ttft_s is None:
        raise _Usage("--rate: needs --ttft-ms (queueing for prefill grows without bound as the rate nears a "
                     "replica's capacity; the TTFT target says how close to run)")
    return itl_s, ttft_s, args.rate


def _mix(args: argparse.Namespace, form):
    from roofline.models.serving import ServingMix

    if (args.prefix_tokens is None) != (args.prefix_hit is None):
        given = "--prefix-tokens" if args.prefix_tokens is not None else "--prefix-hit"
        other = "--prefix-hit" if given == "--prefix-tokens" else "--prefix-tokens"
        raise _Usage(f"{given}: needs {other} too")
    if args.prefix_tokens is not None and args.prefix_tokens > form.prompt_tokens:
        raise _Usage(f"--prefix-tokens: {args.prefix_tokens:,} is longer than the prompt ({form.prompt_tokens:,} "
                     "tokens, --prompt)")
    return ServingMix(prompt_tokens=form.prompt_tokens, output_tokens=form.output_tokens,
                      prefix_tokens=args.prefix_tokens or 0, prefix_hit_rate=args.prefix_hit or 0.0)


def _speculation(args: argparse.Namespace):
    from roofline.models.serving import Speculation
    from roofline.presets import resolve_model
    from roofline.tui.cli.preset_loading import load_preset

    if args.draft is None and args.spec_tokens is None and args.accept is None:
        return None
    given = ", ".join(flag for flag, value in (("--draft", args.draft), ("--spec-tokens", args.spec_tokens),
                                                 ("--accept", args.accept)) if value is not None)
    for flag, value in (("--spec-tokens", args.spec_tokens), ("--accept", args.accept)):
        if value is None:
            raise _Usage(f"{flag}: needed for speculative decoding (given: {given})")
    draft = None if args.draft is None else load_preset("--draft", "models", args.draft, resolve_model)
    return Speculation(tokens=args.spec_tokens, acceptance=args.accept, draft=draft)


def _prices(args: argparse.Namespace, ids: list[str]) -> list[float | None]:
    if args.plan_prices is None:
        return [None] * len(ids)
    if len(args.plan_prices) != len(ids):
        if len(ids) > 1 and len(args.plan_prices) == 1:
            raise _Usage(f"--price-per-hour: give one price per device ({len(ids)}, in the order of --hardware; "
                         "'preset' keeps a preset's price): devices do not share one price")
        raise _Usage(f"--price-per-hour: {len(args.plan_prices)} prices for {len(ids)} device(s) of --hardware")
    return list(args.plan_prices)


def _scenarios(args: argparse.Namespace, form, ids: list[str]) -> list:
    from roofline.presets import load_hardware, resolve_model
    from roofline.tui.cli.preset_loading import load_preset
    from roofline.tui.inputs.form import FormError, scenario_from
    from roofline.tui.inputs.registry import flag_for

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
        "hardware": hw.id, "hardware_name": hw.name, "tp": scenario.parallelism.tp, "pp": scenario.parallelism.pp,
        "devices_per_replica": scenario.parallelism.devices, "engine": scenario.engine,
        "engine_name": engine_profile(scenario.engine).name,
        "price_usd_per_hour": price,
        "price_source": ("--price-per-hour" if override is not None else (hw.price_source or None)
                         if price is not None else None),
        "power_w": power_w, "power_source": None if power_w is None else "board power (tdp_w) of the preset, a ceiling",
        "memory": {**asdict(memory), "fits": memory.fits},
        **{name: _estimate_plan(scenario, mix, options, name, args.concurrency, itl_s, ttft_s, rate)
           for name in ("expected", "bound")},
    }


def _cheapest(device_plans: list[dict[str, Any]], rate) -> dict[str, Any] | None:
    """The cheapest device under ``expected``: the lowest $/hour for the rate when one is asked, else the lowest
    $/Mtok at the targets' largest concurrency when targets are asked, else at the memory limit."""
    priced, unpriced = [], []
    for plan in device_plans:
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
            "without_price_or_plan": [hw for _value, hw, _devices in unpriced]}


def assumptions(options) -> dict[str, str]:
    """What the plan assumes, in words (the text output states these)."""
    return {
        "scheduler": (f"continuous batching as vLLM schedules it: chunked prefill under a budget of "
                      f"{options.max_num_batched_tokens:,} tokens per step, paged KV blocks of "
                      f"{options.block_size_tokens} tokens, gpu_memory_utilization {options.gpu_memory_utilization:g}"
                      "; mean prompt and output lengths"),
        "queueing": ("at a concurrency: a closed loop (vllm bench serve --max-concurrency), requests beyond the "
                     "decode slots wait by Little's law; at a rate: Poisson arrivals, the prefill budget as an "
                     "M/D/1 server; no burstiness beyond Poisson, no preemption"),
        "cost": ("$/Mtok = price per device-hour x the devices of one replica (TP x PP) / output tokens per hour "
                 "x 1e6: device-hours only, prompt tokens not counted as output"),
        "energy": "J/tok = board power per device x devices x step time / output tokens per step (a ceiling)",
    }


def build_plan(args: argparse.Namespace) -> dict[str, Any]:
    """The plan of the flags, as the JSON contract (one device: its fields at the top; several: ``devices``)."""
    from roofline.models.errors import ModelInputError
    from roofline.models.serving import ServingOptions

    form = form_from_args(args)
    ids = _hardware_ids(form.hardware_id)
    itl_s, ttft_s, rate = _targets(args)
    prices = _prices(args, ids)
    try:
        mix = _mix(args, form)
        speculation = _speculation(args)
        scenarios = _scenarios(args, form, ids)
        plans = [_device_plan(s, mix, ServingOptions(speculation=speculation, price_usd_per_hour=price),
                              args, itl_s, ttft_s, rate) for s, price in zip(scenarios, prices, strict=True)]
    except ModelInputError as err:
        raise _Usage(f"{_MODEL_FIELD_FLAGS.get(err.field, err.field)}: {err.message}") from None
    plan: dict[str, Any] = {
        "schema_version": PLAN_SCHEMA_VERSION,
        "model": scenarios[0].model.id, "model_name": scenarios[0].model.name,
        "mix": asdict(mix) | {"computed_prompt_tokens": mix.computed_prompt_tokens},
        "targets_asked": {"itl_s": itl_s, "ttft_s": ttft_s, "rate_per_s": rate},
        "speculation": None if speculation is None else {
            "tokens": speculation.tokens, "acceptance": speculation.acceptance,
            "draft": "mtp" if speculation.draft is None else speculation.draft.id,
            "tokens_per_step": speculation.tokens_per_step},
        "assumptions": assumptions(ServingOptions()),
    }
    if len(plans) == 1:
        return plan | plans[0]
    return plan | {"devices": plans, "cheapest": _cheapest(plans, rate)}


def run_plan(args: argparse.Namespace) -> int:
    plan = build_plan(args)
    if args.format == "json":
        print(json.dumps(plan, indent=2, allow_nan=False))
        return 0
    from roofline.tui.views.plan_text import render_markdown, render_text

    print(render_markdown(plan) if args.format == "markdown" else render_text(plan), end="")
    return 0
