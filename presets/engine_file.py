"""The engine file schema: ``presets/engines/<id>.toml``, one serving stack per file, read into
:class:`roofline.models.engines.Engine`.

A file names the stack, the device vendors it runs on, its runtime mode, and each factor that differs from the
generic value as a table with its value, its public ``source`` and the ``date`` of that source; a figure solved from
public runs also names the function of models/engines.py that recomputes it (``derived_from``)::

    name = "vLLM (CUDA graphs, Marlin int4, custom all-reduce)"
    vendors = ["NVIDIA"]
    runtime_mode = "graph"
    notes = "int8/fp8/fp4 weight-only and GEMV share: no public figure found: generic value"

    [factors.custom_all_reduce_latency_us]
    value = 9.0
    source = "sgl-project/sglang#2904 (vLLM custom all-reduce, H100)"
    date = "2025-01"

Units are in the factor names and converted here. A broken file is refused with one line naming the file, the line
and the key (the same checks as hardware and model presets, :mod:`.loader`); :mod:`.engine_profiles` lists and hands
them on.
"""

from __future__ import annotations

import re
from typing import Any

from roofline.models.engines import RUNTIME_MODES, Engine

from .errors import PresetError, PresetFileError
from .safe_files import clip, clip_repr

ENGINE_REQUIRED = ("name", "vendors", "runtime_mode")
ENGINE_OPTIONAL = ("id", "notes", "superseded", "in_band", "factors")
FACTOR_KEYS = ("value", "source", "date", "derived_from")
DATE = re.compile(r"\d{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?")
FORMAT_FAMILIES = ("native", "int8", "fp8", "int4", "fp4", "gguf")

# factor name in the file -> (Engine field, kind, scale to SI, smallest, largest) in the file's unit
_NUMBERS: dict[str, tuple[str, float, float, float]] = {
    "kernel_overhead_us": ("kernel_overhead_s", 1e-6, 0.0, 1e4),
    "custom_all_reduce_latency_us": ("custom_all_reduce_latency_s", 1e-6, 0.01, 1e5),
    "request_overhead_ms": ("request_overhead_s", 1e-3, 0.0, 1e5),
    "decode_gemv_bw_share": ("decode_gemv_bw_share", 1.0, 0.01, 3.0),
    "decode_gemv_bw_share_hbm": ("decode_gemv_bw_share_hbm", 1.0, 0.01, 3.0),
    "prompt_matmul_fraction": ("prompt_matmul_fraction", 1.0, 0.01, 2.0),
    "prompt_matmul_fraction_hbm": ("prompt_matmul_fraction_hbm", 1.0, 0.01, 2.0),
    **{f"dequant_efficiency_{family}": (f"dequant_efficiency.{family}", 1.0, 0.01, 2.0) for family in FORMAT_FAMILIES},
}
_WHOLE: dict[str, tuple[str, int, int]] = {"prefill_chunk_tokens": ("prefill_chunk_tokens", 1, 1 << 20)}
_FLAGS = ("kv_reads_per_query_head", "gemm_fp16_accumulate", "prompt_dequant_to_f16", "unfused_modules")
FACTORS = (*_NUMBERS, *_WHOLE, *_FLAGS)


def _fail_in(doc, key: str, table_key: str, message: str) -> PresetFileError:
    """A missing key of a table: named, with the table's line (the key has none)."""
    line = doc.line(key) or doc.line(table_key)
    return PresetFileError(PresetError(str(doc.path), line, clip(key), message))


def _string_list(doc, key: str) -> tuple[str, ...]:
    value = doc.data.get(key)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        raise doc.fail(key, f"must be a list of non-empty strings, got {clip_repr(value)}")
    return tuple(clip(v.strip(), 40) for v in value)


def _factor_value(doc, name: str, table: dict[str, Any]) -> Any:
    dotted = f"factors.{name}"
    if "value" not in table:
        raise _fail_in(doc, f"{dotted}.value", dotted, "missing")
    value = table["value"]
    if name in _FLAGS:
        if not isinstance(value, bool):
            raise doc.fail(f"{dotted}.value", f"must be true or false, got {clip_repr(value)}")
        return value
    if name in _WHOLE:
        _, low, high = _WHOLE[name]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise doc.fail(f"{dotted}.value", f"must be a whole number from {low} to {high:,}, got "
                                                f"{clip_repr(value)}")
        return value
    _, scale, low, high = _NUMBERS[name]
    return doc.number(table, "value", f"{dotted}.value", positive=low > 0, minimum=low, maximum=high) * scale


def engine_from_doc(doc) -> Engine:
    """An :class:`Engine` from a parsed engine file (``doc``: :class:`.loader._Doc`)."""
    engine_id = doc.check_schema(ENGINE_REQUIRED, ENGINE_OPTIONAL)
    mode = doc.data.get("runtime_mode")
    if mode not in RUNTIME_MODES:
        raise doc.fail("runtime_mode", f"unknown runtime mode {clip_repr(mode)} (known: {', '.join(RUNTIME_MODES)})")
    flags = {}
    for key, default in (("superseded", False), ("in_band", True)):
        flags[key] = doc.data.get(key, default)
        if not isinstance(flags[key], bool):
            raise doc.fail(key, f"must be true or false, got {clip_repr(flags[key])}")
    factors = doc.table("factors", required=False)
    doc.check_keys(FACTORS, factors, "factors.")
    fields: dict[str, Any] = {}
    dequant: dict[str, float] = {}
    sources: dict[str, str] = {}
    dates: dict[str, str] = {}
    for name, table in factors.items():
        dotted = f"factors.{name}"
        if not isinstance(table, dict):
            raise doc.fail(dotted, "must be a table with value, source and date")
        doc.check_keys(FACTOR_KEYS, table, f"{dotted}.")
        value = _factor_value(doc, name, table)
        source = table.get("source")
        if not isinstance(source, str) or not source.strip():
            raise _fail_in(doc, f"{dotted}.source", dotted, f"needs a public source, got {clip_repr(source)}")
        date = table.get("date")
        if not isinstance(date, str) or not DATE.fullmatch(date):
            raise _fail_in(doc, f"{dotted}.date", dotted,
                           f"must be a date YYYY-MM or YYYY-MM-DD, got {clip_repr(date)}")
        derived = table.get("derived_from", "")
        if not isinstance(derived, str):
            raise doc.fail(f"{dotted}.derived_from", f"must be a string, got {clip_repr(derived)}")
        target = _NUMBERS[name][0] if name in _NUMBERS else _WHOLE[name][0] if name in _WHOLE else name
        if target.startswith("dequant_efficiency."):
            family = target.split(".", 1)[1]
            dequant[family] = value
            key = family  # the report names a family's figure by the family
        else:
            fields[target] = value
            key = target
        sources[key], dates[key] = clip(source.strip(), 400), date
    return Engine(id=engine_id, name=doc.string("name"), vendors=_string_list(doc, "vendors"), runtime_mode=mode,
                  superseded=flags["superseded"], in_band=flags["in_band"], dequant_efficiency=dequant, sources=sources,
                  source_dates=dates,
                  notes=doc.string("notes", required=False), **fields)
