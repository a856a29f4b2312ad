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

from roofline.tui.views.history_charts import callout_lines, draw_growth, draw_ridge, history_data


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


def run_history(args: Namespace) -> int:
    catalog = load_catalog(kinds=("hardware",))
    devices = _select_devices(args, catalog)
    default_from, default_to = default_endpoints(catalog.hardware.values())
    ids = {"--from": args.from_id or default_from, "--to": args.to_id or default_to}
    for flag, hw_id in ids.items():
        if hw_id not in catalog.hardware:
            raise ValueError(f"{flag}: unknown hardware id {hw_id!r} (see: roofline presets hardware)")
    baseline, endpoint = catalog.hardware[ids["--from"]], catalog.hardware[ids["--to"]]
    if metric_value(baseline, args.metric) is None:
        raise ValueError(f"--from: {baseline.id} has no {METRIC_LABELS[args.metric]} peak")
    data = history_data(devices, args.metric, baseline, endpoint)
    if not data.devices:
        raise ValueError("--vendor: no device in this selection has that metric")
    if args.format == "json":
        print(json.dumps(_json(data), indent=2))
        return 0
    import plotext as plt

    plain = not sys.stdout.isatty() or "NO_COLOR" in os.environ
    for draw in (draw_growth, draw_ridge):
        plt.clear_figure()
        plt.plotsize(args.width, args.height)
        if plain:
            plt.theme("clear")
        draw(plt, data)
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
        "metric": data.metric,
        "devices": devices,
        "growth": None if g is None else {"from": g.from_id, "to": g.to_id, "compute_metric": g.metric,
                                          "compute_x": g.compute_x, "bandwidth_x": g.bandwidth_x},
        "trend": None if t is None else {"compute_per_2y": t.compute_per_2y, "bandwidth_per_2y": t.bandwidth_per_2y,
                                         "years": [t.first_year, t.last_year], "devices": t.devices},
        "claim_checks": {m: None if c is None else {"compute_x": c.compute_x, "bandwidth_x": c.bandwidth_x}
                         for m, c in data.claim_checks.items()},
        "close_pairs": [{"from": p.from_id, "to": p.to_id, "compute_x": p.compute_x, "bandwidth_x": p.bandwidth_x}
                        for p in data.close_pairs],
    }
