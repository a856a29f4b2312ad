"""Reading a measurements CSV for ``roofline validate`` (file I/O and row -> scenario)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from roofline.models.errors import ModelInputError
from roofline.models.scenario import Batching, Parallelism, Scenario, released_precisions
from roofline.models.validation import METRICS

from .loader import PresetFileError, load_hardware, load_model

REQUIRED_COLUMNS = ("id", "hardware", "tp", "pp", "model", "weights", "kv", "batch", "prompt", "output", "metric",
                    "value")


@dataclass(frozen=True, slots=True)
class MeasurementRow:
    id: str
    family: str
    scenario: Scenario
    metric: str
    value: float
    source: str


@dataclass(frozen=True, slots=True)
class SkippedRow:
    id: str
    line: int
    reason: str


def _activations(raw: dict) -> str | None:
    """The ``activations`` column if present; else fp8 for fp8 weights (serving stacks run fp8 x fp8
    GEMMs, W8A8), else the model's released format."""
    if raw.get("activations"):
        return raw["activations"]
    return "fp8" if raw.get("weights") == "fp8" else None


def read_measurements(path: Path) -> tuple[list[MeasurementRow], list[SkippedRow]]:
    """Rows that can be evaluated, and the ones that cannot with the reason (line numbers 1-based)."""
    try:
        handle = path.open(newline="", encoding="utf-8")
    except OSError as err:
        raise ValueError(f"{path}: cannot read: {err}") from None
    with handle:
        reader = csv.DictReader(handle)
        missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}:1: missing columns: {', '.join(missing)}")
        rows, skipped = [], []
        hardware_cache, model_cache = {}, {}
        for raw in reader:
            line = reader.line_num
            row_id = raw.get("id") or f"line {line}"
            try:
                metric = raw["metric"]
                if metric not in METRICS:
                    raise ValueError(f"metric {metric!r} is not one of {', '.join(METRICS)}")
                value = float(raw["value"])
                if not value > 0:
                    raise ValueError(f"value must be > 0, got {raw['value']!r}")
                hw_id, model_id = raw["hardware"], raw["model"]
                if hw_id not in hardware_cache:
                    hardware_cache[hw_id] = load_hardware(hw_id)
                if model_id not in model_cache:
                    model_cache[model_id] = load_model(model_id)
                model = model_cache[model_id]
                scenario = Scenario(
                    hardware=hardware_cache[hw_id], model=model,
                    precisions=released_precisions(model, weights=raw["weights"] or None, kv=raw["kv"] or "bf16",
                                                   activations=_activations(raw)),
                    batching=Batching(batch_size=int(raw["batch"]), prompt_tokens=int(raw["prompt"]),
                                      output_tokens=int(raw["output"])),
                    parallelism=Parallelism(tp=int(raw["tp"]), pp=int(raw["pp"] or 1)),
                )
            except KeyError as err:
                skipped.append(SkippedRow(row_id, line, f"unknown preset id {err}"))
                continue
            except (ValueError, ModelInputError, PresetFileError) as err:
                skipped.append(SkippedRow(row_id, line, str(err)))
                continue
            rows.append(MeasurementRow(row_id, row_id.split("-")[0], scenario, metric, value, raw.get("source", "")))
    return rows, skipped
