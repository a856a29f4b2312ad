"""Reading a measurements CSV for ``roofline validate`` (file I/O and row -> scenario)."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roofline.models.architecture import ModelArchitecture
from roofline.models.engines import DEFAULT_ENGINE, UNKNOWN_ENGINE
from roofline.models.errors import ModelInputError
from roofline.models.hardware import Hardware
from roofline.models.scenario import Batching, Parallelism, Scenario, released_precisions
from roofline.models.validation import METRICS, SERVING_METRICS

from .engine_profiles import check_engine
from .loader import PresetFileError, load_hardware, load_model
from .safe_files import clip, clip_repr, read_text_capped

# column -> the input it is (the field names of the scenario limits); whole numbers, at most this many characters
_WHOLE_COLUMNS = {"batch": "batch", "prompt": "prompt_tokens", "output": "output_tokens", "tp": "tp", "pp": "pp"}
_MAX_NUMBER_CHARS = 32
# The smallest measured value a row may state, in its metric's unit (tokens/s, ms, s): no published throughput or
# latency is below a billionth of its unit, and a subnormal one (1e-310) made expected/measured overflow to inf and
# the JSON summary carry Infinity and NaN.
MIN_MEASURED_VALUE = 1e-9
_MAX_FIELD_CHARS = 4096  # a CSV field longer than this is not a measurement (csv's own limit is 131,072)
NumberCheck = Callable[[str, float], "float | int"]
ScenarioBuilder = Callable[[dict[str, Any], Hardware, ModelArchitecture], Scenario]

REQUIRED_COLUMNS = ("id", "hardware", "tp", "pp", "model", "weights", "kv", "batch", "prompt", "output", "metric",
                    "value")
# Optional: ``engine`` (an engine profile id; empty: ``unknown``; an id without a profile skips the row, naming the
# closest ids; a file without the column: the default), ``family`` (the source family; empty: the id's prefix),
# ``concurrency`` (a serving benchmark's requests in flight; empty: a static batch), ``rate`` (its request rate per
# second; empty or ``inf``: all at once), ``flash_attention`` (``1``/``0``: whether the run's attention was one fused
# kernel; empty: 1, as the explorer assumes; llama.cpp ran it unfused unless started with ``-fa 1``).


@dataclass(frozen=True, slots=True)
class MeasurementRow:
    """One measurement. ``scenario.engine`` is the engine it is scored with; ``stated_engine`` the file's (a name
    without a profile skips the row). ``concurrency`` and
    ``rate_per_s``: a serving benchmark's (``None``: a static batch; ``rate_per_s`` None: all requests at once)."""

    id: str
    family: str
    scenario: Scenario
    metric: str
    value: float
    source: str
    stated_engine: str = DEFAULT_ENGINE
    concurrency: int | None = None
    rate_per_s: float | None = None

    @property
    def is_serving(self) -> bool:
        """A serving benchmark's row (a concurrency or a request rate), scored by the continuous-batching model."""
        return self.concurrency is not None or self.rate_per_s is not None

    @property
    def engine_note(self) -> str:
        """Why the row is not scored with its stated engine ("" when it is)."""
        if self.stated_engine == self.scenario.engine:
            return ""
        return f"engine {self.stated_engine!r} has no profile: scored with {self.scenario.engine}"


@dataclass(frozen=True, slots=True)
class SkippedRow:
    id: str
    line: int
    reason: str


def _flash_attention(raw: dict) -> bool:
    """The ``flash_attention`` column: ``1``/``true`` or ``0``/``false``; empty: fused (1)."""
    text = (raw.get("flash_attention") or "").strip().lower()
    if text in ("", "1", "true"):
        return True
    if text in ("0", "false"):
        return False
    raise ValueError(f"flash_attention: {clip_repr(text, 40)} is not 1 or 0")


def _activations(raw: dict) -> str | None:
    """The ``activations`` column if present; else fp8 for fp8 weights (serving stacks run fp8 x fp8
    GEMMs, W8A8), else the model's released format."""
    if raw.get("activations"):
        return raw["activations"]
    return "fp8" if raw.get("weights") == "fp8" else None


def _whole(raw: dict, column: str, check: NumberCheck | None, default: str | None = None) -> int:
    """A whole-number column, in the range a flag accepts when ``check`` (the scenario limits) is given."""
    text = (raw.get(column) or default or "").strip()
    if not text:
        raise ValueError(f"column {column!r} is empty")
    if len(text) > _MAX_NUMBER_CHARS:
        raise ValueError(f"{column}: {clip_repr(text, 40)} is not a number of plausible length")
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{column}: {clip_repr(text)} is not a whole number") from None
    if check is not None:
        try:
            return int(check(_WHOLE_COLUMNS[column], value))
        except ValueError as err:
            raise ValueError(f"{column}: {err}") from None
    if value <= 0:
        raise ValueError(f"{column} must be > 0, got {value}")
    return value


def _serving(raw: dict) -> tuple[int | None, float | None]:
    """(concurrency, rate per s) from the optional columns; (None, None) for a static-batch row; (None, rate) for an
    open-loop serving row that states its rate only."""
    text = (raw.get("concurrency") or "").strip()
    rate_text = (raw.get("rate") or "").strip()
    if not text and (not rate_text or rate_text.lower() == "inf"):
        return None, None
    if text and (len(text) > _MAX_NUMBER_CHARS or not text.isdigit() or int(text) < 1):
        raise ValueError(f"concurrency: {clip_repr(text, 40)} is not a whole number >= 1")
    concurrency = int(text) if text else None  # an open loop states its rate only
    if not rate_text or rate_text.lower() == "inf":
        return concurrency, None
    if len(rate_text) > _MAX_NUMBER_CHARS:
        raise ValueError(f"rate: {clip_repr(rate_text, 40)} is not a number of plausible length")
    rate = float(rate_text)
    if not (math.isfinite(rate) and rate > 0):
        raise ValueError(f"rate must be finite and > 0 (or inf), got {clip_repr(rate_text)}")
    return concurrency, rate


def scenario_of_values(values: dict[str, Any], hardware: Hardware, model: ModelArchitecture) -> Scenario:
    """A row's scenario from its values by input name, without the input registry (presets/ does not import tui/);
    ``roofline validate`` builds it through the registry instead (``tui.inputs.file_values.scenario_from_values``),
    and a test checks that the two agree on every row of the bundled CSVs."""
    return Scenario(
        hardware=hardware, model=model,
        precisions=released_precisions(model, weights=values["weights"], kv=values["kv"],
                                       activations=values["activations"]),
        batching=Batching(batch_size=values["batch"], prompt_tokens=values["prompt_tokens"],
                          output_tokens=values["output_tokens"], flash_attention=values["flash_attention"]),
        parallelism=Parallelism(tp=values["tp"], pp=values["pp"]),
        engine=values["engine"],
    )


def read_measurements(path: Path, check: NumberCheck | None = None, build: ScenarioBuilder = scenario_of_values
                      ) -> tuple[list[MeasurementRow], list[SkippedRow]]:
    """Rows that can be evaluated, and the ones that cannot with the reason (line numbers 1-based).

    The file is read with :func:`~.safe_files.read_text_capped` (a regular UTF-8 file of at most 16 MiB; a
    one-line error naming it otherwise). A short row, a non-number, a value that is not finite and > 0, or
    (with ``check``, the scenario limits the flags use: ``check(field, value)`` raising ``ValueError``) a
    batch, prompt, output, tp or pp out of range skips the row with the reason; ``build(values, hardware, model)``
    makes each row's scenario from its values by input name (``hardware_id``, ``batch``, ``prompt_tokens``, ...);
    a malformed CSV (a field over 4,096 characters, a NUL) is a one-line ``ValueError`` naming the file and line.
    """
    text = read_text_capped(path, what="measurements CSV")
    reader = csv.DictReader(io.StringIO(text, newline=""), restval="")
    rows, skipped = [], []
    hardware_cache, model_cache = {}, {}
    try:
        missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
        # a row of a file with an engine column that leaves it empty names no stack: ``unknown``; a file without the
        # column (written before engine profiles) is scored under the default, as it was
        no_engine = UNKNOWN_ENGINE if "engine" in (reader.fieldnames or []) else DEFAULT_ENGINE
        if missing:
            raise ValueError(f"{path}:1: missing columns: {', '.join(missing)}")
        for raw in reader:
            line = reader.line_num
            raw.pop(None, None)  # a row longer than the header: the extra fields are ignored
            too_long = next((k for k, v in raw.items() if isinstance(v, str) and len(v) > _MAX_FIELD_CHARS), None)
            if too_long is not None:
                raise csv.Error(f"field {clip(str(too_long), 40)!r} longer than {_MAX_FIELD_CHARS:,} characters")
            row_id = clip(raw.get("id") or f"line {line}", 40)
            try:
                concurrency, rate_per_s = _serving(raw)
                metric = raw["metric"]
                serving = concurrency is not None or rate_per_s is not None
                known = METRICS + SERVING_METRICS if serving else METRICS
                if metric not in known:
                    raise ValueError(f"metric {clip_repr(metric)} is not one of {', '.join(known)}")
                stated_engine = (raw.get("engine") or "").strip() or no_engine
                value_text = raw["value"].strip()
                if len(value_text) > _MAX_NUMBER_CHARS:
                    raise ValueError(f"value {clip_repr(value_text, 40)} is not a number of plausible length")
                value = float(value_text)
                if not (math.isfinite(value) and value > 0):
                    raise ValueError(f"value must be finite and > 0, got {clip_repr(raw['value'])}")
                if value < MIN_MEASURED_VALUE:
                    raise ValueError(f"value {clip_repr(raw['value'], 40)} is below {MIN_MEASURED_VALUE:g} of its "
                                     "unit: not a measurement (a typo or a unit slip?)")
                hw_id, model_id = raw["hardware"], raw["model"]
                if hw_id not in hardware_cache:
                    hardware_cache[hw_id] = load_hardware(hw_id)
                if model_id not in model_cache:
                    model_cache[model_id] = load_model(model_id)
                model = model_cache[model_id]
                values = {  # by input name (the input registry's, tui/inputs/registry.py)
                    "hardware_id": hw_id, "model_ref": model_id, "weights": raw["weights"] or None,
                    "kv": raw["kv"] or "bf16", "activations": _activations(raw),
                    "batch": _whole(raw, "batch", check, "1" if serving else None),
                    "prompt_tokens": _whole(raw, "prompt", check), "output_tokens": _whole(raw, "output", check),
                    "flash_attention": _flash_attention(raw), "tp": _whole(raw, "tp", check),
                    "pp": _whole(raw, "pp", check, "1"),
                    "engine": check_engine(stated_engine, "engine"),
                }
                scenario = build(values, hardware_cache[hw_id], model)
            except KeyError as err:
                skipped.append(SkippedRow(row_id, line, f"unknown preset id {clip(str(err))}"))
                continue
            except (ValueError, TypeError, ArithmeticError, ModelInputError, PresetFileError) as err:
                skipped.append(SkippedRow(row_id, line, clip(str(err), 300)))
                continue
            family = clip((raw.get("family") or "").strip(), 40) or row_id.split("-")[0]
            rows.append(MeasurementRow(row_id, family, scenario, metric, value, clip(raw.get("source") or "", 300),
                                       stated_engine=clip(stated_engine, 40), concurrency=concurrency,
                                       rate_per_s=rate_per_s))
    except csv.Error as err:
        raise ValueError(f"{path}:{reader.line_num}: not a valid CSV: {clip(str(err), 120)}") from None
    return rows, skipped
