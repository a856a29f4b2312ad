"""``roofline presets [hardware|models] [--sources] [--format json]``: the catalogue as a table or JSON.

Hardware: memory, bandwidth, ridge point (16-bit peak / bandwidth) and the dense 16- and 8-bit peaks; models:
parameters, layers, KV-cache bytes per token at bf16 (all layers, no sliding-window cap) and maximum context.
"""

from __future__ import annotations

import json
import sys
from argparse import Namespace
from typing import Any

from roofline.models.architecture import ModelArchitecture
from roofline.models.dtypes import kv_bytes_per_element
from roofline.models.hardware import Hardware
from roofline.tui.cli.terminal_text import without_controls

# --format json: bumped when a key is renamed or removed or its meaning changes (adding one is not a bump).
PRESETS_SCHEMA_VERSION = 1
# The dense peaks a 16-bit and an 8-bit GEMM run at, in the order a preset is searched.
PEAK_16BIT_KEYS = ("bf16", "fp16")
PEAK_8BIT_KEYS = ("fp8", "int8")


def _peak(hw: Hardware, keys: tuple[str, ...]) -> float | None:
    return next((hw.dense_peak_flops_per_s[k] for k in keys if hw.dense_peak_flops_per_s.get(k)), None)


def ridge_16bit_flops_per_byte(hw: Hardware) -> float | None:
    """Ridge point = dense 16-bit peak FLOP/s / memory bandwidth (bytes/s); None without a 16-bit peak."""
    peak = _peak(hw, PEAK_16BIT_KEYS)
    return None if peak is None else peak / hw.mem_bw_bytes_per_s


def kv_bytes_per_token_bf16(m: ModelArchitecture) -> float:
    """KV-cache bytes one token adds over all layers at bf16: layers x KV elements per layer x 2 bytes."""
    return m.kv_elements_per_token * kv_bytes_per_element("bf16")


def capacity_text(hw: Hardware) -> str:
    """Capacity in the unit the vendor sells it in (80 GB parts are 80 GiB; "141 GB" is decimal)."""
    if hw.memory_capacity_unit == "GB":
        return f"{hw.memory_capacity_bytes / 1e9:,.0f} GB"
    return f"{hw.memory_capacity_bytes / 1024**3:,.0f} GiB"


def hardware_json(hw: Hardware, file: str) -> dict[str, Any]:
    return {"id": hw.id, "name": hw.name, "vendor": hw.vendor, "year": hw.year,
            "memory_capacity_bytes": hw.memory_capacity_bytes, "mem_bw_bytes_per_s": hw.mem_bw_bytes_per_s,
            "dense_peak_flops_per_s": hw.dense_peak_flops_per_s,
            "peak_16bit_flops_per_s": _peak(hw, PEAK_16BIT_KEYS), "peak_8bit_flops_per_s": _peak(hw, PEAK_8BIT_KEYS),
            "ridge_flops_per_byte": ridge_16bit_flops_per_byte(hw), "source": hw.source,
            "sources": dict(hw.sources), "file": file}


def model_json(m: ModelArchitecture, file: str) -> dict[str, Any]:
    return {"id": m.id, "name": m.name, "params": m.params, "active_params": m.active_params,
            "layers": m.num_layers, "kv_bytes_per_token_bf16": kv_bytes_per_token_bf16(m),
            "max_context_tokens": m.max_position_embeddings, "source": m.source, "file": file}


def hardware_lines(hardware: list[Hardware], sources: bool) -> list[str]:
    from roofline.tui.views.formatting import si

    lines = ["hardware:", f"  {'id':22} {'year':4}  {'name':34} {'memory':>8} {'bandwidth':>10} {'ridge':>6}  "
             f"{'16-bit peak':>13} {'8-bit peak':>13}"]
    for hw in sorted(hardware, key=lambda h: (h.vendor, h.year, h.id)):
        ridge = ridge_16bit_flops_per_byte(hw)
        lines.append(f"  {hw.id:22} {hw.year:4}  {hw.name[:34]:34} {capacity_text(hw):>8} "
                     f"{si(hw.mem_bw_bytes_per_s, 'B/s'):>10} {f'{ridge:,.0f}' if ridge else '-':>6}  "
                     f"{si(_peak(hw, PEAK_16BIT_KEYS), 'FLOP/s'):>13} {si(_peak(hw, PEAK_8BIT_KEYS), 'FLOP/s'):>13}")
        if sources:
            lines.append(f"      source: {hw.source}")
    lines.append("  ridge = dense 16-bit peak / bandwidth (FLOP per byte); peaks are dense (no sparsity)")
    return lines


def model_lines(models: list[ModelArchitecture], sources: bool) -> list[str]:
    lines = ["models:", f"  {'id':18} {'params':>10} {'active':>10} {'layers':>6} {'KV/token bf16':>13} "
             f"{'max context':>11}"]
    for m in sorted(models, key=lambda m: m.id):
        context = f"{m.max_position_embeddings:,}" if m.max_position_embeddings else "-"
        lines.append(f"  {m.id:18} {m.params / 1e9:8.2f} B {m.active_params / 1e9:8.2f} B {m.num_layers:>6} "
                     f"{kv_bytes_per_token_bf16(m) / 1024:>9,.1f} KiB {context:>11}")
        if sources:
            lines.append(f"      source: {m.source}")
    return lines


def run_presets(args: Namespace) -> int:
    """Print the catalogue (``args.kind``: None, "hardware" or "models"; ``args.sources``; ``args.format``)."""
    from roofline.presets import load_catalog

    kinds = (args.kind,) if args.kind else ("hardware", "models")
    catalog = load_catalog(kinds=kinds)
    for error in catalog.errors:
        print(without_controls(f"roofline presets: skipped {error}"), file=sys.stderr)
    for warning in catalog.warnings:
        print(without_controls(f"roofline presets: warning: {warning}"), file=sys.stderr)
    if args.format == "json":
        out: dict[str, Any] = {"schema_version": PRESETS_SCHEMA_VERSION}
        if "hardware" in kinds:
            out["hardware"] = [hardware_json(h, str(catalog.origins[f"hardware/{h.id}"]))
                               for h in catalog.hardware.values()]
        if "models" in kinds:
            out["models"] = [model_json(m, str(catalog.origins[f"models/{m.id}"])) for m in catalog.models.values()]
        print(json.dumps(out, indent=2))
        return 0
    lines: list[str] = []
    if "hardware" in kinds:
        lines += hardware_lines(list(catalog.hardware.values()), getattr(args, "sources", False))
    if "models" in kinds:
        lines += model_lines(list(catalog.models.values()), getattr(args, "sources", False))
    print(without_controls("\n".join(lines)))  # names come from user files
    return 0
