"""Turn preset files (TOML) and Hugging Face ``config.json`` files into model objects.

Hardware keys carry their units (``mem_bw_gb_per_s``, ``memory_capacity_gib``,
``[dense_peak_tflops]``); they are converted to SI here and nowhere else.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roofline.models.architecture import ModelArchitecture
from roofline.models.dtypes import ACTIVATION_BITS_PER_ELEMENT, WEIGHT_BITS_PER_ELEMENT
from roofline.models.engines import Engine
from roofline.models.errors import ModelInputError
from roofline.models.hardware import Hardware
from roofline.models.hf_config import architecture_from_hf_config

from .clean_text import clean_strings
from .engine_file import engine_from_doc
from .errors import PresetError, PresetFileError
from .safe_files import (
    FileRefusedError,
    clip,
    clip_repr,
    is_folder,
    list_folder,
    read_text_capped,
    user_path,
)
from .toml_io import KeyLines, deep_nesting_line, long_number_line, read_toml

ENV_PRESETS_DIR = "ROOFLINE_PRESETS"
KINDS = ("hardware", "models")
# how a preset's price is billed (price_basis): an on-demand instance's list price, or serverless per-second work
PRICE_BASES = ("", "on-demand", "serverless")

PEAK_DTYPES = ("fp64", "fp64_tensor", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")
_HW_REQUIRED = ("name", "vendor", "year", "mem_bw_gb_per_s", "source", "dense_peak_tflops")
_HW_OPTIONAL = (
    "id", "category", "memory_type", "memory_capacity_gib", "memory_capacity_gb", "interconnect",
    "interconnect_bw_gb_per_s", "interconnect_latency_us", "l2_cache_mb", "tdp_w", "notes", "achievable",
    "devices_per_package",
    "sources", "price_usd_per_hour", "price_source", "price_basis", "fp16_accumulate_dense_tflops",
    *("devices_per_node", "scale_out", "scale_out_unidirectional_gb_per_s", "scale_out_latency_us", "fabric_source"),
)
_ACHIEVABLE_KEYS = (
    "mem_bw_fraction", "mem_bw_source", "matmul_fraction", "matmul_source", "fp8_matmul_fraction",
    "fp8_matmul_source", "fp32_matmul_fraction", "fp32_matmul_source",
)
_MODEL_REQUIRED = ("name", "source", "config")
_MODEL_OPTIONAL = (
    "id", "family", "published_params", "published_params_source", "published_active_params",
    "published_active_params_source", "default_weights", "default_expert_weights", "default_activations", "notes",
)


# Plausible ranges of preset figures, in each key's own unit (as FIELD_LIMITS bound what a person types):
# beyond them a figure is a typo or a unit slip (5e-324 GB/s passes "> 0" and turns reports into inf and NaN).
# Built-ins span 68 to 8,000 GB/s, 2 to 288 GiB, 0.129 to 14,000 TFLOP/s, 0.5 to 256 MB of L2, 60 to 1,400 W.
FIGURE_RANGES: dict[str, tuple[float, float]] = {
    "mem_bw_gb_per_s": (0.01, 1e6),
    "memory_capacity_gib": (0.001, 1e5),
    "memory_capacity_gb": (0.001, 1e5),
    "dense_peak_tflops": (0.001, 1e7),
    "interconnect_bw_gb_per_s": (0.001, 1e6),
    "interconnect_latency_us": (0.001, 1e6),
    "scale_out_unidirectional_gb_per_s": (0.001, 1e5),  # per device, one way: 400 Gb/s NDR is 50
    "l2_cache_mb": (0.001, 1e5),
    "tdp_w": (0.1, 1e6),
    "fraction": (1e-4, 1.0),
    "published_params": (1e3, 1e14),
}
MAX_KEY_WARNINGS = 5  # unknown keys named one by one; the rest are counted in one more warning
PRESET_ID = re.compile(r"[A-Za-z0-9._-]{1,200}")


def check_preset_id(preset_id: str) -> str:
    """``preset_id`` if it is an id (letters, digits, ``.``, ``_``, ``-``), never a path; else a one-line
    :class:`PresetFileError`."""
    if not isinstance(preset_id, str) or not PRESET_ID.fullmatch(preset_id) or preset_id.strip(".") == "":
        raise PresetFileError(PresetError(clip_repr(preset_id), None, None,
                                          "not a preset id (ids are letters, digits, '.', '_' and '-'; "
                                          "a path is not accepted)"))
    return preset_id


@dataclass(slots=True)
class PresetCatalog:
    hardware: dict[str, Hardware] = field(default_factory=dict)
    models: dict[str, ModelArchitecture] = field(default_factory=dict)
    errors: list[PresetError] = field(default_factory=list)
    warnings: list[PresetError] = field(default_factory=list)  # loaded, but something was ignored
    origins: dict[str, Path] = field(default_factory=dict)


def builtin_presets_dir() -> Path:
    return Path(__file__).resolve().parent


def user_presets_dir() -> Path:
    """``$ROOFLINE_PRESETS`` if set, else the platform's user config folder + ``presets``.

    :class:`~.safe_files.FileRefusedError` (one line) when the variable names a path the OS cannot take
    (``~nouser/...``, a NUL, a name over 255 bytes).
    """
    env = os.environ.get(ENV_PRESETS_DIR)
    if env:
        return user_path(env, what=f"${ENV_PRESETS_DIR} folder")
    from platformdirs import user_config_dir

    return Path(user_config_dir("roofline")) / "presets"


# ---- validation helpers ---------------------------------------------------------------------
class _Doc:
    """A parsed file plus what is needed to say where a bad value is."""

    def __init__(self, path: Path, data: dict[str, Any], text: str) -> None:
        self.path, self.data, self.text = path, data, text
        self.warnings: list[PresetError] = []
        self._lines: KeyLines | None = None

    def line(self, key: str) -> int | None:
        if self._lines is None:  # built once per file: many lookups stay linear in the file's size
            self._lines = KeyLines(self.text)
        return self._lines.line(key)

    def fail(self, key: str, message: str) -> PresetFileError:
        return PresetFileError(PresetError(str(self.path), self.line(key), clip(key), message))

    def number(self, table: Mapping[str, Any], key: str, dotted: str, *, required: bool = True,
               positive: bool = True, minimum: float = 0.0, maximum: float = 1e7,
               limits: str | None = None) -> float | None:
        """A finite number in (0, maximum], and at least ``minimum``; ``limits`` names a :data:`FIGURE_RANGES`
        entry giving both. The range (in the key's own unit) catches unit slips and subnormal figures and
        keeps SI conversions finite."""
        if limits is not None:
            minimum, maximum = FIGURE_RANGES[limits]
        if key not in table:
            if required:
                raise self.fail(dotted, "missing")
            return None
        value = table[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(dotted, f"must be a number, got {clip_repr(value)}")
        if value != value or value in (float("inf"), float("-inf")):
            raise self.fail(dotted, f"must be finite, got {value!r}")
        if positive and value <= 0:
            raise self.fail(dotted, f"must be > 0, got {clip_repr(value)}")
        if value > maximum:
            raise self.fail(dotted, f"{clip_repr(value)} is not plausible (more than {maximum:g})")
        if value < minimum:
            raise self.fail(dotted, f"{clip_repr(value)} is not plausible (less than {minimum:g})")
        return float(value)

    def string(self, key: str, *, required: bool = True) -> str:
        value = self.data.get(key)
        if value is None:
            if required:
                raise self.fail(key, "missing")
            return ""
        if not isinstance(value, str) or (required and not value.strip()):
            raise self.fail(key, f"must be a non-empty string, got {clip_repr(value)}")
        return value

    def table(self, key: str, *, required: bool = True) -> dict[str, Any]:
        value = self.data.get(key)
        if value is None:
            if required:
                raise self.fail(key, "missing table")
            return {}
        if not isinstance(value, dict):
            raise self.fail(key, "must be a table")
        return value

    def check_keys(self, allowed: tuple[str, ...], table: Mapping[str, Any], prefix: str = "", *,
                   strict: bool = True) -> None:
        """Unknown keys are errors (``strict``) or warnings: the file loads and the key is ignored.

        The first :data:`MAX_KEY_WARNINGS` unknown keys are named one by one (file, line, key); the rest are
        counted in one more warning, so a file with thousands of them costs one pass, not one per key.
        """
        allowed_set = frozenset(allowed)
        unknown = [key for key in table if key not in allowed_set]
        if not unknown:
            return
        message = f"unknown key (allowed: {', '.join(allowed)})"
        if strict:
            raise self.fail(prefix + unknown[0], message)
        for key in unknown[:MAX_KEY_WARNINGS]:
            self.warnings.append(PresetError(str(self.path), self.line(prefix + key), clip(prefix + key),
                                             message + "; ignored"))
        rest = unknown[MAX_KEY_WARNINGS:]
        if rest:
            names = ", ".join(clip(prefix + key, 40) for key in rest[:3])
            self.warnings.append(PresetError(str(self.path), None, None,
                                             f"{len(rest):,} more unknown keys ignored ({names}, ...)"))

    def check_schema(self, required: tuple[str, ...], optional: tuple[str, ...]) -> str:
        """Unknown keys and missing required keys are errors; returns the preset id."""
        self.check_keys(required + optional, self.data, strict=False)
        for key in required:
            if key not in self.data:
                raise self.fail(key, "missing")
        return self.check_id()

    def check_id(self) -> str:
        stem = self.path.stem
        given = self.data.get("id", stem)
        if given != stem:
            raise self.fail("id", f"{clip_repr(given)} does not match the file name {clip_repr(stem)}")
        return stem


def _hardware_from_doc(doc: _Doc) -> Hardware:
    d = doc.data
    hw_id = doc.check_schema(_HW_REQUIRED, _HW_OPTIONAL)
    year = d["year"]
    if isinstance(year, bool) or not isinstance(year, int) or not 1990 <= year <= 2100:
        raise doc.fail("year", f"must be a year between 1990 and 2100, got {clip_repr(year)}")
    has_gib, has_gb = "memory_capacity_gib" in d, "memory_capacity_gb" in d
    if has_gib == has_gb:
        raise doc.fail("memory_capacity_gib", "give exactly one of memory_capacity_gib or memory_capacity_gb")
    if has_gib:
        capacity = doc.number(d, "memory_capacity_gib", "memory_capacity_gib", limits="memory_capacity_gib") * 1024**3
        unit = "GiB"
    else:
        capacity = doc.number(d, "memory_capacity_gb", "memory_capacity_gb", limits="memory_capacity_gb") * 1e9
        unit = "GB"
    peaks_table = doc.table("dense_peak_tflops")
    doc.check_keys(PEAK_DTYPES, peaks_table, "dense_peak_tflops.")
    peaks = {k: doc.number(peaks_table, k, f"dense_peak_tflops.{k}", limits="dense_peak_tflops") * 1e12
             for k in peaks_table}
    if not peaks:
        raise doc.fail("dense_peak_tflops", "needs at least one peak")
    fp16_accumulate = doc.number(d, "fp16_accumulate_dense_tflops", "fp16_accumulate_dense_tflops", required=False,
                                 limits="dense_peak_tflops")
    if fp16_accumulate is not None and fp16_accumulate * 1e12 < peaks.get("fp16", 0.0):
        raise doc.fail("fp16_accumulate_dense_tflops", f"must be at least the fp16 peak "
                                                      f"({peaks['fp16'] / 1e12:g}), got {fp16_accumulate!r}")
    achievable = doc.table("achievable", required=False)
    doc.check_keys(_ACHIEVABLE_KEYS, achievable, "achievable.", strict=False)
    fractions: dict[str, float] = {}
    for key, dtypes in (("matmul_fraction", ("bf16", "fp16")), ("fp8_matmul_fraction", ("fp8",)),
                        ("fp32_matmul_fraction", ("fp32",))):
        value = doc.number(achievable, key, f"achievable.{key}", required=False, minimum=FIGURE_RANGES["fraction"][0])
        if value is not None:
            if value > 1:
                raise doc.fail(f"achievable.{key}", f"must be a fraction in (0, 1], got {value!r}")
            fractions.update(dict.fromkeys(dtypes, value))
    mem_fraction = doc.number(achievable, "mem_bw_fraction", "achievable.mem_bw_fraction", required=False,
                              minimum=FIGURE_RANGES["fraction"][0])
    if mem_fraction is not None and mem_fraction > 1:
        raise doc.fail("achievable.mem_bw_fraction", f"must be a fraction in (0, 1], got {mem_fraction!r}")
    latency_us = doc.number(d, "interconnect_latency_us", "interconnect_latency_us", required=False,
                            limits="interconnect_latency_us")
    per_package = d.get("devices_per_package", 1)
    if isinstance(per_package, bool) or not isinstance(per_package, int) or not 1 <= per_package <= 8:
        raise doc.fail("devices_per_package", f"must be a whole number from 1 to 8, got {clip_repr(per_package)}")
    # presets give package totals; the model works per device the runtime sees
    capacity /= per_package
    peaks = {k: v / per_package for k, v in peaks.items()}
    l2_mb = doc.number(d, "l2_cache_mb", "l2_cache_mb", required=False, limits="l2_cache_mb")
    # on-demand price of the package per hour (divided per device below), with its offer, URL and date
    price = doc.number(d, "price_usd_per_hour", "price_usd_per_hour", required=False, maximum=1e4)
    if price is not None and not doc.string("price_source", required=False).strip():
        raise doc.fail("price_usd_per_hour", "needs price_source (the offer, its URL and the date read)")
    price_basis = doc.string("price_basis", required=False)
    if price_basis not in PRICE_BASES:
        raise doc.fail("price_basis", f"must be one of {', '.join(b for b in PRICE_BASES if b)}, got "
                       f"{clip_repr(price_basis)}")
    sources = {k: str(v) for k, v in doc.table("sources", required=False).items()}
    for key in ("mem_bw_source", "matmul_source", "fp8_matmul_source"):
        if key in achievable:
            sources[f"achievable.{key.removesuffix('_source')}"] = str(achievable[key])
    return Hardware(
        id=hw_id,
        name=doc.string("name"),
        vendor=doc.string("vendor"),
        year=year,
        category=doc.string("category", required=False) or "datacenter",
        memory_type=doc.string("memory_type", required=False),
        memory_capacity_bytes=capacity,
        memory_capacity_unit=unit,
        mem_bw_bytes_per_s=doc.number(d, "mem_bw_gb_per_s", "mem_bw_gb_per_s", limits="mem_bw_gb_per_s") * 1e9
        / per_package,
        devices_per_package=per_package,
        dense_peak_flops_per_s=peaks,
        fp16_accumulate_peak_flops_per_s=None if fp16_accumulate is None else fp16_accumulate * 1e12 / per_package,
        interconnect=doc.string("interconnect", required=False),
        interconnect_bw_bytes_per_s=(doc.number(d, "interconnect_bw_gb_per_s", "interconnect_bw_gb_per_s",
                                                required=False, limits="interconnect_bw_gb_per_s") or 0.0) * 1e9,
        interconnect_latency_s=None if latency_us is None else latency_us * 1e-6,
        l2_cache_bytes=None if l2_mb is None else l2_mb * 1e6,
        tdp_w=doc.number(d, "tdp_w", "tdp_w", required=False, limits="tdp_w"),
        achievable_mem_bw_fraction=mem_fraction,
        achievable_matmul_fraction=fractions,
        source=doc.string("source"),
        notes=doc.string("notes", required=False),
        sources=sources,
        price_usd_per_hour=None if price is None else price / per_package,
        price_source=doc.string("price_source", required=False),
        price_basis=price_basis,
        **_fabric_fields(doc),
    )


MAX_DEVICES_PER_NODE = 1024  # one scale-up domain; NVL72 racks are 72, NVL576 would be 576


def _fabric_fields(doc: _Doc) -> dict[str, Any]:
    """The node and scale-out fields (models/hardware.py): a whole device count per node, the NIC named with its
    per-direction bandwidth, and ``fabric_source`` whenever a fabric figure is given."""
    d = doc.data
    per_node = d.get("devices_per_node", 1)
    if isinstance(per_node, bool) or not isinstance(per_node, int) or not 1 <= per_node <= MAX_DEVICES_PER_NODE:
        raise doc.fail("devices_per_node",
                       f"must be a whole number from 1 to {MAX_DEVICES_PER_NODE}, got {clip_repr(per_node)}")
    bw = doc.number(d, "scale_out_unidirectional_gb_per_s", "scale_out_unidirectional_gb_per_s", required=False,
                    limits="scale_out_unidirectional_gb_per_s")
    latency_us = doc.number(d, "scale_out_latency_us", "scale_out_latency_us", required=False,
                            limits="interconnect_latency_us")
    name = doc.string("scale_out", required=False)
    if (bw is None) != (not name.strip()):
        key = "scale_out" if name.strip() else "scale_out_unidirectional_gb_per_s"  # the key the file has
        raise doc.fail(key, "scale_out and scale_out_unidirectional_gb_per_s go together (the NIC and its figure)")
    source = doc.string("fabric_source", required=False)
    if ("devices_per_node" in d or bw is not None) and not source.strip():
        key = "devices_per_node" if "devices_per_node" in d else "scale_out_unidirectional_gb_per_s"
        raise doc.fail(key, "needs fabric_source (the datasheet or spec the node and fabric figures come from)")
    return {"devices_per_node": per_node, "scale_out": name,
            "scale_out_bw_unidirectional_bytes_per_s": 0.0 if bw is None else bw * 1e9,
            "scale_out_latency_s": None if latency_us is None else latency_us * 1e-6, "fabric_source": source}


def _model_from_doc(doc: _Doc) -> ModelArchitecture:
    d = doc.data
    model_id = doc.check_schema(_MODEL_REQUIRED, _MODEL_OPTIONAL)
    defaults = {}
    dtype_keys = (("default_weights", WEIGHT_BITS_PER_ELEMENT), ("default_expert_weights", WEIGHT_BITS_PER_ELEMENT),
                  ("default_activations", ACTIVATION_BITS_PER_ELEMENT))
    for key, table in dtype_keys:
        value = d.get(key)
        if value is not None and value not in table:
            raise doc.fail(key, f"unknown dtype {clip_repr(value)} (known: {clip(', '.join(table), 200)})")
        defaults[key] = value
    published = doc.number(d, "published_params", "published_params", required=False, limits="published_params")
    active = doc.number(d, "published_active_params", "published_active_params", required=False,
                        limits="published_params")
    config = doc.table("config")
    try:
        return architecture_from_hf_config(
            config, model_id=model_id, name=doc.string("name"), published_params=published,
            published_active_params=active, source=doc.string("source"), **defaults,
        )
    except ModelInputError as err:
        raise doc.fail(f"config.{err.field}", clip(err.message, 300)) from None
    except (TypeError, ValueError, ArithmeticError, RecursionError) as err:  # a shape no check anticipated
        raise doc.fail("config", f"invalid value: {clip(str(err))}") from None


_BUILDERS = {"hardware": _hardware_from_doc, "models": _model_from_doc, "engines": engine_from_doc}


def read_toml_file(path: Path, *, what: str = "TOML file") -> tuple[dict[str, Any], str]:
    """A TOML file's data and text; :class:`PresetFileError` (one line) for an unreadable, special, oversized
    or invalid file."""
    return read_toml(path, what=what)


def load_preset_file(path: Path, kind: str, warnings: list[PresetError] | None = None
                     ) -> Hardware | ModelArchitecture | Engine:
    """Load one preset file; raise :class:`PresetFileError` saying what is wrong and where.

    Ignored unknown keys are appended to ``warnings`` when a list is given.
    """
    data, text = read_toml_file(path, what="preset")
    doc = _Doc(path, data, text)
    try:
        item = _BUILDERS[kind](doc)
    except PresetFileError:
        raise
    except (TypeError, ValueError, ArithmeticError, RecursionError) as err:  # a shape no check anticipated
        raise PresetFileError(PresetError(str(path), None, None, f"invalid value: {clip(str(err))}")) from None
    if warnings is not None:
        warnings.extend(doc.warnings)
    return item


def _user_dir(user_dir: Path | None) -> Path:
    return user_presets_dir() if user_dir is None else user_dir


def _preset_dirs(kind: str, user_dir: Path | None, errors: list[PresetError] | None = None) -> list[Path]:
    """The built-in folder, then the user's if it has this kind. A user folder the OS refuses (``~nouser``,
    over-long names, no permission) raises :class:`~.safe_files.FileRefusedError`, or is reported in
    ``errors`` and left out when a list is given."""
    dirs = [builtin_presets_dir() / kind]
    try:
        user = _user_dir(user_dir)
    except FileRefusedError as err:
        if errors is None:
            raise
        errors.append(err.error)
        return dirs
    if is_folder(user / kind):
        dirs.append(user / kind)
    return dirs


def load_catalog(user_dir: Path | None = None, kinds: tuple[str, ...] = KINDS) -> PresetCatalog:
    """Every preset, built-in then user (user files override by id); broken files reported and skipped.

    Never raises for the user folder: a file that is special (FIFO, device, folder), oversized, not UTF-8, not
    valid TOML or out of range, and a folder that cannot be listed, each become one entry in ``errors``.
    """
    catalog = PresetCatalog()
    for kind in kinds:
        target = catalog.hardware if kind == "hardware" else catalog.models
        for folder in _preset_dirs(kind, user_dir, catalog.errors):
            try:
                paths = list_folder(folder, ".toml", what="preset folder")
            except FileRefusedError as err:
                catalog.errors.append(err.error)
                continue
            for path in paths:
                try:
                    item = load_preset_file(path, kind, catalog.warnings)
                except PresetFileError as err:
                    catalog.errors.append(err.error)
                    continue
                target[item.id] = item
                catalog.origins[f"{kind}/{item.id}"] = path
    return catalog


def _load_one(kind: str, preset_id: str, user_dir: Path | None, warnings: list[PresetError] | None = None
              ) -> Hardware | ModelArchitecture:
    """The preset file of this id, user folder first; an id that is not an id (a path) is refused, and a
    lookup that misses tries the lowercase id."""
    check_preset_id(preset_id)
    folders = list(reversed(_preset_dirs(kind, user_dir)))
    for candidate in dict.fromkeys((preset_id, preset_id.lower())):
        for folder in folders:
            path = folder / f"{candidate}.toml"
            if os.path.lexists(path):  # a special file or a dangling link is reported, not passed over
                return load_preset_file(path, kind, warnings)
    raise KeyError(preset_id)


def preset_ids(kind: str, user_dir: Path | None = None) -> list[str]:
    """Every preset id of a kind (file names; cheap: nothing is parsed; unlistable folders left out)."""
    ids: set[str] = set()
    for folder in _preset_dirs(kind, user_dir, []):
        try:
            ids.update(path.stem for path in list_folder(folder, ".toml"))
        except FileRefusedError:
            continue
    return sorted(ids)


def load_hardware(hardware_id: str, user_dir: Path | None = None,
                  warnings: list[PresetError] | None = None) -> Hardware:
    """One hardware preset by id (user folder first); ``KeyError`` if unknown, :class:`PresetFileError` for
    a broken file or an id that is a path."""
    return _load_one("hardware", hardware_id, user_dir, warnings)  # type: ignore[return-value]


def load_model(model_id: str, user_dir: Path | None = None,
               warnings: list[PresetError] | None = None) -> ModelArchitecture:
    """One model preset by id (user folder first); ``KeyError`` if unknown, :class:`PresetFileError` for
    a broken file or an id that is a path."""
    return _load_one("models", model_id, user_dir, warnings)  # type: ignore[return-value]


def parse_json(path: Path | str, text: str) -> Any:
    """A JSON document; :class:`PresetFileError` (one line, with the line where known) for invalid JSON,
    nesting too deep for the parser, or an integer past Python's 4,300-digit conversion limit."""
    try:  # strings without control characters where they enter (clean_text.py)
        return clean_strings(json.loads(text))
    except json.JSONDecodeError as err:
        raise PresetFileError(PresetError(str(path), err.lineno, None, f"not valid JSON: {err.msg}")) from None
    except RecursionError:
        raise PresetFileError(PresetError(str(path), deep_nesting_line(text), None,
                                          "not valid JSON: nested too deeply")) from None
    except (ValueError, OverflowError) as err:
        line = long_number_line(text)
        what = "a number too long to read" if line is not None else clip(str(err).split(";")[0], 120)
        raise PresetFileError(PresetError(str(path), line, None, f"not valid JSON: {what}")) from None


def load_hf_config(path: Path) -> ModelArchitecture:
    """A local Hugging Face ``config.json`` (or a folder holding one), parsed offline."""
    file = path / "config.json" if is_folder(path) else path
    text = read_text_capped(file, what="config.json")
    config = parse_json(file, text)
    name = file.parent.name if file.name == "config.json" else file.stem
    try:
        return architecture_from_hf_config(config, model_id=str(file), name=name, source=str(file))
    except ModelInputError as err:
        line = None
        needle = f'"{err.field}"'
        for number, content in enumerate(text.splitlines(), start=1):
            if needle in content:
                line = number
                break
        raise PresetFileError(PresetError(str(file), line, clip(str(err.field)), clip(err.message, 300))) from None
    except (TypeError, ValueError, ArithmeticError, RecursionError) as err:
        raise PresetFileError(PresetError(str(file), None, None, f"invalid value: {clip(str(err))}")) from None


def resolve_model(ref: str, user_dir: Path | None = None,
                  warnings: list[PresetError] | None = None) -> ModelArchitecture:
    """A model preset id, or a path to a config.json / a folder with one.

    Raises ``KeyError`` for an unknown id and :class:`PresetFileError` for a bad file, a path the OS refuses
    (one line) or an id that is neither a preset id nor a path.
    """
    looks_like_path = ref.endswith(".json") or os.sep in ref or "/" in ref or ref.startswith("~")
    if not looks_like_path and PRESET_ID.fullmatch(ref) and not os.path.lexists(ref):
        return load_model(ref, user_dir, warnings)
    path = user_path(ref, what="config.json")
    if os.path.lexists(path / "config.json") or (os.path.lexists(path) and not is_folder(path)):
        return load_hf_config(path)  # a FIFO, device or dangling link is refused there, saying which
    if looks_like_path:
        raise PresetFileError(PresetError(clip(str(ref), 300), None, None, "no such config.json file or folder"))
    return load_model(ref, user_dir, warnings)
