"""``roofline history``: the memory-wall charts and callout on stdout, or JSON."""

from __future__ import annotations

import json
import os
import sys
from argparse import Namespace

from roofline.models.history import (
    METRIC_LABELS,
    default_endpoints,
    metric_value,
    package_bandwidth_bytes_per_s,
    ridge_flops_per_byte,
)
from roofline.presets import load_catalog
from roofline.tui.views.history_charts import (
    DEFAULT_ENDPOINT_ID,
    callout_lines,
    choose_endpoints,
    draw_growth,
    draw_ridge,
    history_data,
)

# Version 2: schema_version, baseline, endpoint, claim_applies added; claim_checks and close_pairs are empty
# when the claim does not apply to the selection.
HISTORY_SCHEMA_VERSION = 2


def _select_devices(args: Namespace, catalog) -> list:
    devices = list(catalog.hardware.values())
    if args.category == "datacenter":
        devices = [hw for hw in devices if hw.category == "datacenter"]
    if args.vendor:
        wanted = {v.lower() for v in args.vendor}
        known = {hw.vendor.lower() for hw in catalog.hardware.values()}
        unknown = wanted - known
        if unknown:
            raise ValueError(f"--vendor: unknown {', '.join(sorted(unknown))} (known: {', '.join(sorted(known))})")
        devices = [hw for hw in devices if hw.vendor.lower() in wanted]
    return devices


def _hardware_id(flag: str, ref: str, catalog) -> str:
    from roofline.presets.ids import match_id, suggest_ids

    found = match_id(ref, catalog.hardware)
    if found is None:
        near = suggest_ids(ref, catalog.hardware)
        hint = f"did you mean {', '.join(near)}?" if near else "see: roofline presets hardware"
        raise ValueError(f"{flag}: unknown hardware id {ref!r} ({hint})")
    return found


def run_history(args: Namespace) -> int:
    """Charts and callout (text) or the data (JSON) for the selected parts.

    Without --from the baseline is K20X when the selection has it with the metric, else the earliest part in
    the selection that has it; without --to the endpoint is H100 SXM likewise, else the newest such part.
    """
    catalog = load_catalog(kinds=("hardware",))
    devices = _select_devices(args, catalog)
    default_from, _ = default_endpoints(catalog.hardware.values())
    from_id = _hardware_id("--from", args.from_id, catalog) if args.from_id else None
    to_id = _hardware_id("--to", args.to_id, catalog) if args.to_id else None
    for flag, hw_id in (("--from", from_id), ("--to", to_id)):
        if hw_id and metric_value(catalog.hardware[hw_id], args.metric) is None:
            raise ValueError(f"{flag}: {hw_id} has no {METRIC_LABELS[args.metric]} peak")
    chosen = choose_endpoints(devices, args.metric, from_id or default_from, to_id or DEFAULT_ENDPOINT_ID)
    if chosen is None:
        raise ValueError(f"no part in this selection has a {METRIC_LABELS[args.metric]} peak")
    baseline = catalog.hardware[from_id] if from_id else chosen[0]
    endpoint = catalog.hardware[to_id] if to_id else chosen[1]
    data = history_data(devices, args.metric, baseline, endpoint)
    if args.format == "json":
        print(json.dumps(_json(data), indent=2))
        return 0
    import plotext as plt

    plain = not sys.stdout.isatty() or "NO_COLOR" in os.environ
    for draw in (draw_growth, draw_ridge):
        plt.clear_figure()
        plt.limitsize(False, False)  # --width and --height as asked, also through a pipe (plotext caps at 80x24)
        plt.plotsize(args.width, args.height)
        if plain:
            plt.theme("clear")
        draw(plt, data, (args.width, args.height))
        chart = plt.build()
        print(plt.uncolorize(chart) if plain else chart)
    print("\n".join(callout_lines(data)))
    return 0


def _json(data) -> dict:
    devices = []
    for hw in data.devices:
        entry = {"id": hw.id, "name": hw.name, "vendor": hw.vendor, "year": hw.year, "category": hw.category,
                 "source": hw.source, "mem_bw_bytes_per_s": package_bandwidth_bytes_per_s(hw),
                 "memory_capacity_bytes": hw.memory_capacity_bytes * hw.devices_per_package,
                 "devices_per_package": hw.devices_per_package,
                 "ridge_flops_per_byte": ridge_flops_per_byte(hw)}
        for metric in ("fp64", "fp64-matrix", "fp32", "bf16", "fp8"):
            value = metric_value(hw, metric)
            entry[f"{metric.replace('-', '_')}_flops_per_s"] = value[0] if value else None
        devices.append(entry)
    g, t = data.growth, data.trend
    return {
        "schema_version": HISTORY_SCHEMA_VERSION,
        "metric": data.metric,
        "baseline": data.baseline.id,
        "endpoint": data.endpoint.id if data.endpoint else None,
        "claim_applies": data.claim_applies,
        "devices": devices,
        "growth": None if g is None else {"from": g.from_id, "to": g.to_id, "compute_metric": g.metric,
                                          "compute_x": g.compute_x, "bandwidth_x": g.bandwidth_x},
        "trend": None if t is None else {"compute_per_2y": t.compute_per_2y, "bandwidth_per_2y": t.bandwidth_per_2y,
                                         "years": [t.first_year, t.last_year], "devices": t.devices},
        "claim_checks": {m: None if c is None else {"compute_x": c.compute_x, "bandwidth_x": c.bandwidth_x}
                         for m, c in data.claim_checks.items()} if data.claim_applies else {},
        "close_pairs": [{"from": p.from_id, "to": p.to_id, "compute_x": p.compute_x, "bandwidth_x": p.bandwidth_x}
                        for p in data.close_pairs] if data.claim_applies else [],
    }
