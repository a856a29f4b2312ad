"""``roofline plan --disagg``: the best disaggregated layout (prefill pool + decode pool) beside the best aggregated
one, per device (:mod:`roofline.models.serving.disagg`).

plan.py calls three hooks: :func:`add_disagg_flags` (its parser), :func:`attach_disagg` (each device's plan gains a
``disaggregated`` entry: ``expected`` and ``bound``, each with the aggregated and disaggregated layouts, the ratio
and the winner) and, for text and Markdown, :func:`roofline.tui.views.plan_disagg_text.render_disagg`.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

# flags that only mean something to the disaggregated search, with the words for their one-line refusal
_DISAGG_ONLY = (("ep", "--ep"), ("attention", "--attention"), ("nodes", "--nodes"), ("fabric", "--fabric"),
                ("ep_imbalance", "--ep-imbalance"), ("redundant_experts", "--redundant-experts"))
MAX_NODES = 1024


def _whole(flag: str, low: int, high: int):
    def parse(text: str) -> int:
        try:
            value = float(text.strip().replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value) or value != int(value) or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text!r} must be a whole number from {low} to {high}")
        return int(value)

    parse.__name__ = flag
    return parse


def _factor(text: str) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or not 1.0 <= value <= 100.0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a factor from 1 to 100")
    return value


_factor.__name__ = "--ep-imbalance"


def add_disagg_flags(parser: argparse.ArgumentParser) -> None:
    """The disaggregated search's flags on ``roofline plan``."""
    from roofline.models.expert_parallel import ATTENTION_MODES, MAX_EP
    from roofline.models.topology import FABRICS

    group = parser.add_argument_group("disaggregated serving (--disagg)")
    group.add_argument("--disagg", action="store_true",
                       help="search prefill pools and decode pools (each its own TP or EP layout, the xPyD ratio) "
                       "for --rate within --itl-ms and --ttft-ms at the lowest cost, beside the best aggregated "
                       "layout (TTFT = prefill queue + prefill + KV transfer between the pools; ITL from the decode "
                       "pool alone)")
    group.add_argument("--ep", type=_whole("--ep", 1, MAX_EP), metavar="N",
                       help="with --disagg: only expert-parallel layouts of N ranks (MoE models; default: TP 1-8 "
                       "and EP 8-256)")
    group.add_argument("--attention", choices=ATTENTION_MODES, default=None,
                       help="with --disagg: attention under EP, dp (each rank its own requests; default) or tp "
                       "(tensor-parallel inside a node)")
    group.add_argument("--nodes", type=_whole("--nodes", 1, MAX_NODES), metavar="N",
                       help="with --disagg: at most N nodes per instance (default: as many as a layout needs, "
                       "nodes = devices / devices per node)")
    group.add_argument("--fabric", choices=tuple(FABRICS), default=None,
                       help="with --disagg: the fabric between nodes instead of the preset's NIC")
    group.add_argument("--ep-imbalance", dest="ep_imbalance", type=_factor, metavar="X",
                       help="with --disagg: a stated max/mean expert load per rank (default: the statistical "
                       "imbalance of random routing, 1 + sqrt(2 ln(ep) / copies per rank))")
    group.add_argument("--redundant-experts", dest="redundant_experts", type=_whole("--redundant-experts", 0, 4096),
                       metavar="R", help="with --disagg: extra expert slots over the EP ranks (EPLB's copies of hot "
                       "experts; they take memory on every rank); default: the fewest that make the slots divide "
                       "evenly, e.g. 32 for EP 72 and 144 with 256 experts")


def check_disagg_flags(args: argparse.Namespace, usage: type[Exception]) -> None:
    """One-line refusals: search flags without --disagg, --disagg without its rate and targets."""
    if not getattr(args, "disagg", False):
        for name, flag in _DISAGG_ONLY:
            if getattr(args, name, None) is not None:
                raise usage(f"{flag}: applies to the disaggregated search (add --disagg); the aggregated frontier "
                            "models tensor parallelism only")
        return
    rate = getattr(args, "rate_per_s", getattr(args, "rate", None))
    itl = getattr(args, "itl_target_ms", getattr(args, "itl_ms", None))
    ttft = getattr(args, "ttft_target_ms", getattr(args, "ttft_ms", None))
    missing = [flag for flag, value in (("--rate", rate), ("--itl-ms", itl), ("--ttft-ms", ttft)) if value is None]
    if missing:
        raise usage(f"--disagg: needs {', '.join(missing)} (the search carries a rate within both targets)")
    if getattr(args, "spec_tokens", None) or getattr(args, "draft", None):
        raise usage("--disagg: the disaggregated search does not model speculative decoding (drop --spec-tokens)")


def _pool_dict(pool, devices_per_node: int) -> dict[str, Any]:
    layout = pool.layout
    out = {"layout": layout.label, "kind": layout.kind, "devices_per_instance": layout.devices,
           "nodes_per_instance": math.ceil(layout.devices / devices_per_node),
           "attention": layout.attention if layout.kind == "ep" else None,
           "redundant_experts": layout.redundant_experts if layout.kind == "ep" else None,
           "instances": pool.instances, "devices": pool.devices,
           "max_requests_per_s_per_instance": pool.max_requests_per_s_per_instance,
           "step_time_s": pool.step_time_s}
    if pool.phase == "prefill":
        out |= {"prompts_per_rank_per_pass": pool.requests_per_rank, "queue_s": pool.queue_s}
    else:
        out |= {"requests_per_rank": pool.requests_per_rank}
    return out


def disagg_plan_dict(plan, devices_per_node: int = 1) -> dict[str, Any] | None:
    """A :class:`DisaggPlan` as JSON (nodes per instance: ceil(devices / ``devices_per_node``))."""
    if plan is None:
        return None
    t = plan.transfer
    return {"ratio": plan.ratio, "devices": plan.devices, "usd_per_hour": plan.usd_per_hour,
            "usd_per_million_tokens": plan.usd_per_million_tokens, "joules_per_token": plan.joules_per_token,
            "ttft_s": plan.ttft_s, "itl_s": plan.itl_s,
            "prefill": _pool_dict(plan.prefill, devices_per_node), "decode": _pool_dict(plan.decode, devices_per_node),
            "kv_transfer": {"bytes_per_request": t.bytes_per_request, "paths": t.paths, "link": t.link_kind,
                            "link_bw_unidirectional_bytes_per_s": t.link_bw_unidirectional_bytes_per_s,
                            "time_s": t.time_s}}


def _finite(value: float | None) -> float | None:
    """JSON has no infinity: an unbounded figure is null."""
    return None if value is None or not math.isfinite(value) else value


def aggregated_dict(found) -> dict[str, Any] | None:
    """The best aggregated layout (:class:`AggregatedPlan`) as JSON; ``tp`` kept for TP layouts."""
    if found is None:
        return None
    return {"layout": found.layout, "kind": found.kind, "devices_per_instance": found.size,
            "tp": found.size if found.kind == "tp" else None, "replicas": found.replicas, "devices": found.devices,
            "usd_per_hour": found.usd_per_hour, "usd_per_million_tokens": _finite(found.usd_per_million_tokens),
            "joules_per_token": _finite(found.joules_per_token), "ttft_s": _finite(found.ttft_s),
            "itl_s": _finite(found.itl_s)}


def summary(comparison) -> str:
    """One sentence: which serves more tokens per device at this rate, by how much."""
    a, d = comparison.aggregated, comparison.disaggregated
    if a is None and d is None:
        return "neither layout meets the targets at this rate"
    if d is None:
        return "no disaggregated layout meets the targets here; aggregated does"
    if a is None:
        return "no aggregated layout meets the targets here; disaggregated does"
    ratio = comparison.tokens_per_device_ratio
    if math.isclose(ratio, 1.0):
        return f"disaggregated and aggregated need the same devices here ({d.devices})"
    if ratio > 1.0:
        return (f"disaggregated serves {ratio:.2f}x the tokens per device here ({d.devices} devices against "
                f"{a.devices})")
    return (f"disaggregated loses here: {1.0 / ratio:.2f}x the devices of aggregated ({d.devices} against "
            f"{a.devices})")


def _device_disagg(args, scenario, mix, price, itl_s, ttft_s, rate) -> dict[str, Any]:
    from roofline.models.serving import ServingOptions
    from roofline.models.serving.disagg import compare_with_aggregated
    from roofline.models.topology import cluster_for

    hw = scenario.hardware
    cluster = cluster_for(hw, fabric=args.fabric)
    options = ServingOptions(price_usd_per_hour=price)
    search = {"ep": args.ep, "attention": args.attention or "dp", "fabric": args.fabric,
              "max_instance_devices": None if args.nodes is None else args.nodes * cluster.devices_per_node,
              "ep_imbalance": args.ep_imbalance, "redundant_experts": args.redundant_experts}
    out: dict[str, Any] = {
        "devices_per_node": cluster.devices_per_node,
        "scale_up": {"link": cluster.scale_up.kind,
                     "bw_unidirectional_bytes_per_s": cluster.scale_up.bw_unidirectional_bytes_per_s},
        "scale_out": None if cluster.scale_out is None else {
            "link": cluster.scale_out.kind, "name": args.fabric or hw.scale_out,
            "bw_unidirectional_bytes_per_s": cluster.scale_out.bw_unidirectional_bytes_per_s,
            "source": cluster.scale_out.source},
        "max_nodes_per_instance": args.nodes,
    }
    for name in ("expected", "bound"):
        c = compare_with_aggregated(scenario, mix, rate, itl_s=itl_s, ttft_s=ttft_s, estimate_name=name,
                                    options=options, **search)
        out[name] = {"aggregated": aggregated_dict(c.aggregated),
                     "disaggregated": disagg_plan_dict(c.disaggregated, cluster.devices_per_node),
                     "tokens_per_device_ratio": c.tokens_per_device_ratio, "winner": c.winner,
                     "summary": summary(c)}
    return out


DISAGG_ASSUMPTIONS = (
    "prefill instances run passes of whole prompts (up to the token budget per rank), Poisson "
    "arrivals, M/D/1 queueing; the prompt's KV (every layer) goes to a decode instance over the NVLink domain when "
    "both fit in it, else each device's NIC, one sender per distinct KV shard (expected) or every device at spec "
    "streamed under the prefill (bound); decode steps carry no prefill; EP all-to-all as DeepEP measures it "
    "(models/expert_parallel.py); both pools priced per device-hour alike; the aggregated layout is the cheaper of "
    "the frontier's TP x replicas and EP instances whose steps mix decodes and prefill chunks (DeepEP normal kernels)")


def attach_disagg(args: argparse.Namespace, plans: list[dict[str, Any]], scenarios: list, mix, itl_s, ttft_s, rate,
                  prices: list, usage: type[Exception]) -> list[dict[str, Any]]:
    """Each device's plan with a ``disaggregated`` entry when --disagg is asked (the plans unchanged otherwise)."""
    from roofline.models.errors import ModelInputError

    check_disagg_flags(args, usage)
    if not getattr(args, "disagg", False):
        return plans
    flags = {"rate": "--rate", "ep": "--ep", "attention": "--attention", "fabric": "--fabric",
             "ep_imbalance": "--ep-imbalance", "speculation": "--spec-tokens", "targets": "--itl-ms",
             "redundant_experts": "--redundant-experts"}
    out = []
    for plan, scenario, price in zip(plans, scenarios, prices, strict=True):
        try:
            entry = _device_disagg(args, scenario, mix, price, itl_s, ttft_s, rate)
        except ModelInputError as err:
            where = f" (on {scenario.hardware.id})" if len(scenarios) > 1 else ""
            raise usage(f"{flags.get(err.field, '--disagg')}: {err.message}{where}") from None
        out.append(plan | {"disaggregated": entry | {"assumptions": DISAGG_ASSUMPTIONS}})
    return out
