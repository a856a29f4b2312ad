"""Benchmark result files as runs: what ``vllm bench serve``, SGLang's ``bench_serving``, genai-perf, AIPerf,
guidellm and ``llama-bench`` wrote, read without trusting it (pure parsing: no model, no scenario).

Each file is read with :func:`~.safe_files.read_bytes_capped` (a regular file of at most :data:`MAX_BENCH_BYTES`:
FIFOs, devices and oversized files are refused before a byte is read). The tool is recognised from the keys it
writes; every value taken is checked (a number, finite, > 0) and a bad one is a one-line
:class:`~.errors.PresetFileError` naming the file, the line where known, and the field
(``benchmarks[0].metrics.time_to_first_token_ms.successful.mean``).

What each tool records, and where the schema comes from (tests/data/bench/README.md cites the commits):

- ``vllm bench serve --save-result`` (vllm/benchmarks/serve.py, ``result_json``): ``model_id``, ``num_prompts``,
  ``request_rate`` (a number or ``"inf"``), ``max_concurrency`` (null: none), ``completed``, ``total_input_tokens``,
  ``total_output_tokens``, ``output_throughput`` (tok/s), ``mean_ttft_ms``, ``mean_tpot_ms``, ``mean_itl_ms``.
  ``--append-result`` writes one JSON object per line.
- SGLang ``bench_serving --output-file`` (python/sglang/bench_serving.py): one JSON object per line, the same
  totals and ``*_ms`` statistics, ``request_rate`` (``Infinity`` for a burst), ``max_concurrency``; no model name.
- genai-perf ``profile_export_genai_perf.json`` and AIPerf ``profile_export_aiperf.json``: one object per metric
  (``time_to_first_token``, ``inter_token_latency``, ``output_token_throughput``, ``input_sequence_length``,
  ``output_sequence_length``) with ``unit`` and ``avg``; the run's settings under ``input_config`` (genai-perf up to
  0.0.12: ``model``, ``concurrency``, ``request_rate``; later: ``model_names``, ``perf_analyzer.stimulus``; AIPerf:
  ``endpoint.model_names``, ``loadgen.concurrency``, ``loadgen.request_rate``).
- guidellm ``benchmarks.json``: ``benchmarks[]``, each with its strategy (``config.strategy`` from 0.4,
  ``args.strategy`` before: ``synchronous``, ``concurrent`` with ``streams``, ``throughput``, ``constant`` or
  ``poisson`` with ``rate``) and ``metrics.<name>.successful.mean`` for ``time_to_first_token_ms``,
  ``inter_token_latency_ms``, ``output_tokens_per_second``, ``prompt_token_count``, ``output_token_count``.
- ``llama-bench -o json`` (an array), ``-o jsonl`` and ``-o csv`` (tools/llama-bench/llama-bench.cpp,
  ``test::get_fields``): one test per row, ``n_prompt``, ``n_gen``, ``n_depth``, ``avg_ts`` (tokens/s over
  ``n_prompt + n_gen``), ``avg_ns``, ``model_type`` (``llama 8B Q4_K - Medium``), ``type_k``, ``flash_attn``.

TPOT rather than ITL where a tool records both (vLLM, SGLang): TPOT is each request's (latency - TTFT) / (tokens -
1), the mean decode step a request sees, which is what the serving model's ``itl_s`` predicts; vLLM's ITL averages
over stream chunks and is kept only when TPOT is absent. genai-perf and AIPerf compute ``inter_token_latency`` the
TPOT way; guidellm's ``inter_token_latency_ms`` too (its ``time_per_output_token_ms`` includes the first token).
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import PresetError, PresetFileError
from .ids import match_id
from .safe_files import clip, clip_repr, read_bytes_capped

# Detailed runs (vLLM --save-detailed, SGLang --output-details) carry every request's token gaps and texts: tens of
# MB for thousands of prompts. 64 MiB keeps those and still refuses a runaway or planted file before reading it.
MAX_BENCH_BYTES = 64 * 1024 * 1024
MAX_RUNS_PER_FILE = 10_000
_MAX_JSON_DEPTH = 64

# What a run measured, in SI units (the quantities validation scores).
# ``decode_step_s``: a static run's mean decode step (llama-bench tgN at a depth: 1 / avg_ts, the depth's prefill
# untimed); ``e2e_s``: prefill plus generation of one static run (llama-bench ppN+tgM).
QUANTITIES = ("ttft_s", "itl_s", "output_tokens_per_s", "prefill_tokens_per_s", "decode_tokens_per_s_per_seq",
              "decode_step_s", "e2e_s")

# llama.cpp's llama_model_ftype_name (src/llama-model-loader.cpp) -> the project's weight formats; others: not mapped.
LLAMACPP_FTYPES = {"F16": "fp16", "BF16": "bf16", "all F32": "fp32", "Q8_0": "q8_0", "Q6_K": "q6_k",
                   "Q5_K - Medium": "q5_k_m", "Q4_K - Medium": "q4_k_m", "Q4_0": "q4_0"}
# ggml_type_name of llama-bench's type_k -> the project's KV formats (q8_0 stores 8.5 bits, int8 8: the nearest).
LLAMACPP_KV_TYPES = {"f16": "fp16", "bf16": "bf16", "f32": "fp32", "q8_0": "int8", "q4_0": "int4"}


@dataclass(frozen=True, slots=True, kw_only=True)
class BenchValue:
    """One measured quantity (:data:`QUANTITIES`, SI units) and the file's field it came from."""

    quantity: str
    value: float
    field: str


@dataclass(frozen=True, slots=True, kw_only=True)
class BenchRun:
    """One run of one tool: what the file records (``None``: not recorded) and the values it measured.

    ``concurrency`` is the requests in flight of a closed loop (or a burst's size); ``rate_per_s`` an open loop's
    arrival rate (``None``: all at once or closed loop). ``batch`` is set for static runs (llama-bench: 1).
    ``notes`` say how a recorded setting was read (a burst taken as its size, a throughput sweep's measured mean).
    """

    file: str
    line: int | None
    tool: str
    label: str
    model: str | None
    prompt_tokens: float | None
    output_tokens: float | None
    concurrency: int | None
    rate_per_s: float | None
    values: tuple[BenchValue, ...]
    batch: int | None = None
    weights: str | None = None
    kv: str | None = None
    flash_attention: bool | None = None
    notes: tuple[str, ...] = ()

    @property
    def is_serving(self) -> bool:
        return self.batch is None

    def value(self, quantity: str) -> BenchValue | None:
        return next((v for v in self.values if v.quantity == quantity), None)


class _Bad(Exception):
    """A field that is missing or not usable (``field`` None: the file as a whole); turned into a
    :class:`PresetFileError` naming the file and the line where known."""

    def __init__(self, field: str | None, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.message = message
        self.line = line


_NAME_SUFFIXES = (re.compile(r"[-.](?:i?q\d\w*|f16|bf16|f32|fp16|fp8|awq|gptq|int4|int8)$", re.I),
                  re.compile(r"^meta-", re.I), re.compile(r"-v\d+(?:\.\d+)*$", re.I),
                  re.compile(r"-(?:instruct|chat|it|hf|base)$", re.I))


def model_preset_for(name: str | None, ids: list[str]) -> str | None:
    """The preset id a recorded or served model name matches; None when none does: the name's last path part,
    then with a GGUF quant suffix, a leading ``Meta-``, a version suffix (``-v0.1``) and ``-Instruct``/``-Chat``/
    ``-it``/``-hf`` removed in turn (``meta-llama/Meta-Llama-3.1-8B-Instruct`` -> ``llama-3.1-8b``); the first exact
    id match (presets.ids.match_id: case and separators ignored) wins."""
    if not name:
        return None
    text = re.split(r"[\\/]", name.strip())[-1]
    text = re.sub(r"\.gguf$", "", text, flags=re.I)
    found = match_id(text, ids)
    for pattern in _NAME_SUFFIXES:
        if found:
            break
        text = pattern.sub("", text)
        found = match_id(text, ids)
    return found


# ---- reading ----------------------------------------------------------------------------------------------------
def read_bench_file(path: Path) -> list[BenchRun]:
    """The runs of one benchmark result file; :class:`PresetFileError` (one line: file, line, field) otherwise."""
    data = read_bytes_capped(path, what="benchmark result file", max_bytes=MAX_BENCH_BYTES)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise _error(path, line, None, f"not UTF-8 text (byte 0x{data[err.start]:02x} at offset {err.start:,})") \
            from None
    if "\0" in text:
        raise _error(path, text.count("\n", 0, text.index("\0")) + 1, None, "contains a NUL character")
    stripped = text.lstrip("\ufeff \t\r\n")
    if not stripped:
        raise _error(path, None, None, "empty file: no benchmark run")
    try:
        runs = _from_json(path, text) if stripped[0] in "{[" or _is_json(stripped) else _llama_bench_csv(path, text)
    except _Bad as bad:
        raise _error(path, bad.line, bad.field, bad.message) from None
    if not runs:
        raise _error(path, None, None, "no benchmark run in the file")
    return runs


def _is_json(text: str) -> bool:
    """A document that is JSON without being an object or array (``42``): refused as JSON, not read as CSV."""
    try:
        json.loads(text[:4096], parse_constant=_constant)
    except (ValueError, RecursionError):
        return False
    return True


def _error(path: Path, line: int | None, field: str | None, message: str) -> PresetFileError:
    return PresetFileError(PresetError(clip(str(path), 300), line, clip(field, 120) if field else None,
                                       clip(message, 300)))


def _constant(name: str) -> float:
    """JSON's non-standard constants as Python writes them (SGLang's request_rate is ``Infinity``); checked later,
    field by field, so a NaN in a value we use is refused naming that field."""
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[name]


def _loads(path: Path, text: str, line_offset: int = 0) -> Any:
    try:
        doc = json.loads(text, parse_constant=_constant)
    except json.JSONDecodeError as err:
        raise _Bad(None, f"not valid JSON: {err.msg} (column {err.colno})", err.lineno + line_offset) from None
    except RecursionError:
        raise _Bad(None, "not valid JSON: nested too deeply") from None
    except ValueError as err:  # an integer past the 4,300-digit conversion limit
        raise _Bad(None, f"not valid JSON: {clip(str(err).split(';')[0], 100)}") from None
    if _depth(doc) > _MAX_JSON_DEPTH:
        raise _Bad(None, f"nested more than {_MAX_JSON_DEPTH} levels deep")
    return doc


def _depth(doc: Any, level: int = 0) -> int:
    if level > _MAX_JSON_DEPTH:
        return level
    if isinstance(doc, dict):
        return max((_depth(v, level + 1) for v in doc.values()), default=level + 1)
    if isinstance(doc, list):
        return max((_depth(v, level + 1) for v in doc[:64]), default=level + 1)
    return level


def _json_lines(path: Path, text: str) -> Iterator[tuple[int, Any]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield number, _loads(path, line, number - 1)


def _from_json(path: Path, text: str) -> list[BenchRun]:
    try:
        docs: list[tuple[int | None, Any]] = [(None, _loads(path, text))]
    except _Bad as bad:
        if not str(bad.message).startswith("not valid JSON: Extra data"):
            raise
        docs = list(_json_lines(path, text))  # JSON Lines: vLLM --append-result, SGLang, llama-bench -o jsonl
    if len(docs) > MAX_RUNS_PER_FILE:
        raise _Bad(None, f"more than {MAX_RUNS_PER_FILE:,} runs in one file")
    runs: list[BenchRun] = []
    for line, doc in docs:
        try:
            runs.extend(_runs_of(path, line, doc, len(runs)))
        except _Bad as bad:
            bad.line = line
            raise
    return runs


def _runs_of(path: Path, line: int | None, doc: Any, before: int) -> list[BenchRun]:
    if isinstance(doc, list):
        if doc and all(isinstance(d, dict) and "avg_ts" in d and "n_prompt" in d for d in doc):
            return [_llama_bench(path, line, d, f"[{i}]", before + i + 1) for i, d in enumerate(doc)]
        raise _Bad(None, "a JSON array that is not llama-bench output (objects with n_prompt, avg_ts)")
    if not isinstance(doc, dict):
        raise _Bad(None, f"a JSON {type(doc).__name__}, not a benchmark result object")
    if "avg_ts" in doc and "n_prompt" in doc:
        return [_llama_bench(path, line, doc, "", before + 1)]
    if isinstance(doc.get("benchmarks"), list):
        return _guidellm(path, doc)
    if isinstance(doc.get("input_config"), dict):
        return [_perf_export(path, doc)]
    if "model_id" in doc and "completed" in doc:
        return [_vllm(path, line, doc, before + 1)]
    if "completed" in doc and ("total_output_tokens_retokenized" in doc or "dataset_name" in doc):
        return [_sglang(path, line, doc, before + 1)]
    keys = ", ".join(list(doc)[:6])
    raise _Bad(None, f"not a result file of a known benchmark tool (keys: {clip(keys, 80)})")


# ---- field access -----------------------------------------------------------------------------------------------
def _get(doc: Mapping, path: Sequence[str | int], prefix: str = "") -> Any:
    """The value at ``path`` or a :class:`_Bad` naming the first missing part."""
    value: Any = doc
    name = prefix
    for part in path:
        name = f"{name}[{part}]" if isinstance(part, int) else (f"{name}.{part}" if name else part)
        if isinstance(part, int):
            if not isinstance(value, list) or part >= len(value):
                raise _Bad(name, "missing")
            value = value[part]
        else:
            if not isinstance(value, dict) or part not in value:
                raise _Bad(name, "missing")
            value = value[part]
    return value


def _opt(doc: Mapping, path: Sequence[str | int], prefix: str = "") -> Any:
    try:
        return _get(doc, path, prefix)
    except _Bad:
        return None


def _field(path: Sequence[str | int], prefix: str = "") -> str:
    name = prefix
    for part in path:
        name = f"{name}[{part}]" if isinstance(part, int) else (f"{name}.{part}" if name else part)
    return name


def _positive(value: Any, field: str, *, allow_inf: bool = False) -> float:
    """A finite number > 0 (a numeric string too: llama-bench CSV); :class:`_Bad` naming the field otherwise."""
    if isinstance(value, str):
        text = value.strip()
        if len(text) > 40:
            raise _Bad(field, f"{clip_repr(text, 40)} is not a number of plausible length")
        try:
            value = float(text)
        except ValueError:
            raise _Bad(field, f"{clip_repr(text, 40)} is not a number") from None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Bad(field, f"{clip_repr(value, 40)} is not a number")
    number = float(value)
    if math.isnan(number):
        raise _Bad(field, "is NaN (not a number)")
    if math.isinf(number) and not (allow_inf and number > 0):
        raise _Bad(field, f"is {number} (not finite)")
    if not number > 0:
        raise _Bad(field, f"must be > 0, got {clip_repr(value, 40)}")
    return number


def _number_at(doc: Mapping, path: Sequence[str | int], prefix: str = "", **kw: Any) -> float:
    return _positive(_get(doc, path, prefix), _field(path, prefix), **kw)


def _optional_number(doc: Mapping, path: Sequence[str | int], prefix: str = "") -> float | None:
    """A recorded number (checked like any other), ``None`` where the key is absent or null."""
    raw = _opt(doc, path, prefix)
    return None if raw is None else _positive(raw, _field(path, prefix))


def _whole_at(value: Any, field: str) -> int:
    number = _positive(value, field)
    if number != int(number) or number > 10**9:
        raise _Bad(field, f"must be a whole number, got {clip_repr(value, 40)}")
    return int(number)


def _text(value: Any, field: str) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, list):  # genai-perf and AIPerf record a list of model names: the first is the one profiled
        value = value[0] if value else None
        if value is None:
            return None
    if not isinstance(value, str):
        raise _Bad(field, f"{clip_repr(value, 40)} is not a name")
    return _printable(value)


def _printable(text: str) -> str:
    """Control characters out (an OSC sequence in a model name must not reach a terminal), then clipped."""
    return clip("".join(c for c in text if c.isprintable()), 200)


def _rate(value: Any, field: str) -> float | None:
    """A request rate: ``None`` for ``inf`` (all requests at once), ``"inf"``, absent or null."""
    if value is None or value == "" or (isinstance(value, str) and value.strip().lower() in ("inf", "infinity")):
        return None
    rate = _positive(value, field, allow_inf=True)
    return None if math.isinf(rate) else rate


def _ms(value: float) -> float:
    return value / 1e3


# ---- vLLM and SGLang --------------------------------------------------------------------------------------------
def _latency_values(doc: Mapping, ttft_key: str, step_keys: Sequence[str]) -> list[BenchValue]:
    values = [BenchValue(quantity="ttft_s", value=_ms(_number_at(doc, [ttft_key])), field=ttft_key)]
    for key in step_keys:
        raw = doc.get(key)
        if raw is not None:
            values.append(BenchValue(quantity="itl_s", value=_ms(_positive(raw, key)), field=key))
            break
    else:
        raise _Bad(step_keys[0], "missing (no mean TPOT or ITL recorded)")
    return values


def _closed_or_open(doc: Mapping, burst_key: str) -> tuple[int | None, float | None, tuple[str, ...]]:
    """(concurrency, rate, notes) from ``max_concurrency`` and ``request_rate``: a rate of inf with no cap sends
    every request at once, read as a burst of that many in flight (as measured-serving.csv reads it)."""
    rate = _rate(doc.get("request_rate"), "request_rate")
    cap = doc.get("max_concurrency")
    concurrency = None if cap is None else _whole_at(cap, "max_concurrency")
    if concurrency is None and rate is None:
        burst = _whole_at(_get(doc, [burst_key]), burst_key)
        return burst, None, (f"request rate inf and no max_concurrency: one burst of {burst} requests, read as "
                             f"concurrency {burst} ({burst_key})",)
    return concurrency, rate, ()


def _serving_totals(doc: Mapping, input_key: str, output_key: str) -> tuple[float, float]:
    completed = _number_at(doc, ["completed"])
    return _number_at(doc, [input_key]) / completed, _number_at(doc, [output_key]) / completed


def _vllm(path: Path, line: int | None, doc: Mapping, index: int) -> BenchRun:
    prompt, output = _serving_totals(doc, "total_input_tokens", "total_output_tokens")
    concurrency, rate, notes = _closed_or_open(doc, "num_prompts")
    values = _latency_values(doc, "mean_ttft_ms", ("mean_tpot_ms", "mean_itl_ms"))
    values.append(BenchValue(quantity="output_tokens_per_s", value=_number_at(doc, ["output_throughput"]),
                             field="output_throughput"))
    return BenchRun(file=str(path), line=line, tool="vllm bench serve", label=f"run {index}",
                    model=_text(doc.get("model_id"), "model_id"), prompt_tokens=prompt, output_tokens=output,
                    concurrency=concurrency, rate_per_s=rate, values=tuple(values), notes=notes)


def _sglang(path: Path, line: int | None, doc: Mapping, index: int) -> BenchRun:
    prompt, output = _serving_totals(doc, "total_input_tokens", "total_output_tokens")
    concurrency, rate, notes = _closed_or_open(doc, "completed")
    values = _latency_values(doc, "mean_ttft_ms", ("mean_tpot_ms", "mean_itl_ms"))
    values.append(BenchValue(quantity="output_tokens_per_s", value=_number_at(doc, ["output_throughput"]),
                             field="output_throughput"))
    return BenchRun(file=str(path), line=line, tool="sglang bench_serving", label=f"run {index}", model=None,
                    prompt_tokens=prompt, output_tokens=output, concurrency=concurrency, rate_per_s=rate,
                    values=tuple(values), notes=notes)


# ---- genai-perf and AIPerf --------------------------------------------------------------------------------------
_TIME_UNITS = {"ms": 1e-3, "s": 1.0, "sec": 1.0, "us": 1e-6, "ns": 1e-9}


def _stat(doc: Mapping, metric: str) -> tuple[float, str]:
    """A metric's ``avg`` in its unit, and the field name."""
    value = _number_at(doc, [metric, "avg"])
    return value, f"{metric}.avg"


def _time_stat(doc: Mapping, metric: str) -> tuple[float, str]:
    value, field = _stat(doc, metric)
    unit = _opt(doc, [metric, "unit"])
    if unit not in _TIME_UNITS:
        raise _Bad(f"{metric}.unit", f"{clip_repr(unit, 20)} is not a time unit ({', '.join(_TIME_UNITS)})")
    return value * _TIME_UNITS[unit], field


def _perf_export(path: Path, doc: Mapping) -> BenchRun:
    config = doc["input_config"]
    if isinstance(config.get("loadgen"), dict) or isinstance(config.get("endpoint"), dict) \
            and "model_names" in config["endpoint"]:
        tool = "aiperf"
        model = _text(_opt(config, ["endpoint", "model_names"]), "input_config.endpoint.model_names")
        concurrency_raw = _opt(config, ["loadgen", "concurrency"])
        rate_raw = _opt(config, ["loadgen", "request_rate"])
        prefix = "input_config.loadgen"
    elif "model_names" in config or isinstance(config.get("perf_analyzer"), dict):
        tool = "genai-perf"
        model = _text(config.get("model_names"), "input_config.model_names")
        stimulus = _opt(config, ["perf_analyzer", "stimulus"]) or {}
        concurrency_raw = stimulus.get("concurrency") if isinstance(stimulus, dict) else None
        rate_raw = stimulus.get("request_rate") if isinstance(stimulus, dict) else None
        prefix = "input_config.perf_analyzer.stimulus"
    else:
        tool = "genai-perf"
        model = _text(config.get("model"), "input_config.model")
        concurrency_raw, rate_raw, prefix = config.get("concurrency"), config.get("request_rate"), "input_config"
    # genai-perf's exporter writes an unset value as "" (base_config._get_legal_json_value): read as not recorded
    concurrency = None if concurrency_raw in (None, "") else _whole_at(concurrency_raw, f"{prefix}.concurrency")
    rate = None if rate_raw in (None, "") else _rate(rate_raw, f"{prefix}.request_rate")
    ttft, ttft_field = _time_stat(doc, "time_to_first_token")
    itl, itl_field = _time_stat(doc, "inter_token_latency")
    throughput, throughput_field = _stat(doc, "output_token_throughput")
    prompt, _ = _stat(doc, "input_sequence_length")
    output, _ = _stat(doc, "output_sequence_length")
    values = (BenchValue(quantity="ttft_s", value=ttft, field=ttft_field),
              BenchValue(quantity="itl_s", value=itl, field=itl_field),
              BenchValue(quantity="output_tokens_per_s", value=throughput, field=throughput_field))
    return BenchRun(file=str(path), line=None, tool=tool, label="run 1", model=model, prompt_tokens=prompt,
                    output_tokens=output, concurrency=concurrency, rate_per_s=rate, values=values)


# ---- guidellm ---------------------------------------------------------------------------------------------------
def _guidellm_model(benchmark: Mapping) -> str | None:
    for path in (["config", "backend", "model"], ["worker", "backend_model"]):
        raw = _opt(benchmark, path)
        if isinstance(raw, str) and raw and raw != "None":
            return _printable(raw)
    return None


def _guidellm(path: Path, doc: Mapping) -> list[BenchRun]:
    runs = []
    for i, benchmark in enumerate(doc["benchmarks"]):
        prefix = f"benchmarks[{i}]"
        if not isinstance(benchmark, dict):
            raise _Bad(prefix, "not an object")
        strategy_path = ["config", "strategy"] if isinstance(_opt(benchmark, ["config", "strategy"]), dict) \
            else ["args", "strategy"]
        strategy = _get(benchmark, strategy_path, prefix)
        s_prefix = _field(strategy_path, prefix)
        if not isinstance(strategy, dict):
            raise _Bad(s_prefix, "not an object")
        kind = strategy.get("type_")
        metrics = _get(benchmark, ["metrics"], prefix)
        m_prefix = f"{prefix}.metrics"

        def mean(name: str, metrics: Any = metrics, m_prefix: str = m_prefix) -> float:
            return _number_at(metrics, [name, "successful", "mean"], m_prefix)

        notes: tuple[str, ...] = ()
        rate = None
        cap = strategy.get("max_concurrency")
        concurrency = None if cap is None else _whole_at(cap, f"{s_prefix}.max_concurrency")
        if kind == "synchronous":
            concurrency = 1
        elif kind == "concurrent":
            concurrency = _whole_at(_get(strategy, ["streams"], s_prefix), f"{s_prefix}.streams")
        elif kind in ("constant", "poisson"):
            rate = _number_at(strategy, ["rate"], s_prefix)
        elif kind == "throughput":
            if concurrency is None:
                measured = mean("request_concurrency")
                concurrency = max(1, round(measured))
                notes = (f"throughput strategy (all requests at once, no cap): concurrency {concurrency} is the "
                         f"measured mean requests in flight ({m_prefix}.request_concurrency.successful.mean "
                         f"{measured:.4g})",)
        else:
            raise _Bad(f"{s_prefix}.type_", f"{clip_repr(kind, 30)} is not a strategy this reader knows "
                                            "(synchronous, concurrent, throughput, constant, poisson)")
        values = (
            BenchValue(quantity="ttft_s", value=_ms(mean("time_to_first_token_ms")),
                       field=f"{m_prefix}.time_to_first_token_ms.successful.mean"),
            BenchValue(quantity="itl_s", value=_ms(mean("inter_token_latency_ms")),
                       field=f"{m_prefix}.inter_token_latency_ms.successful.mean"),
            BenchValue(quantity="output_tokens_per_s", value=mean("output_tokens_per_second"),
                       field=f"{m_prefix}.output_tokens_per_second.successful.mean"),
        )
        label = f"benchmark {i + 1} ({kind}" + (f" {concurrency}" if kind == "concurrent" else
                                                f" {rate:g}/s" if rate is not None else "") + ")"
        runs.append(BenchRun(file=str(path), line=None, tool="guidellm", label=label,
                             model=_guidellm_model(benchmark), prompt_tokens=mean("prompt_token_count"),
                             output_tokens=mean("output_token_count"), concurrency=concurrency, rate_per_s=rate,
                             values=values, notes=notes))
    return runs


# ---- llama-bench ------------------------------------------------------------------------------------------------
def _llama_weights(model_type: str | None) -> str | None:
    """The weight format from ``model_type`` (``llama 8B Q4_K - Medium`` -> ``q4_k_m``); None if not mapped."""
    if not model_type:
        return None
    for name, dtype in sorted(LLAMACPP_FTYPES.items(), key=lambda kv: -len(kv[0])):
        if model_type.endswith(" " + name) or model_type == name:
            return dtype
    return None


def _int_field(row: Mapping, key: str, prefix: str, *, zero_ok: bool = True) -> int:
    raw = _get(row, [key], prefix)
    field = _field([key], prefix)
    if isinstance(raw, str):
        raw = raw.strip()
        if not re.fullmatch(r"\d{1,9}", raw):
            raise _Bad(field, f"{clip_repr(raw, 30)} is not a whole number >= 0")
        raw = int(raw)
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0 or raw > 10**9:
        if isinstance(raw, float) and math.isnan(raw):
            raise _Bad(field, "is NaN (not a number)")
        raise _Bad(field, f"{clip_repr(raw, 30)} is not a whole number >= 0")
    if raw == 0 and not zero_ok:
        raise _Bad(field, "must be > 0")
    return raw


def _llama_bench(path: Path, line: int | None, row: Mapping, prefix: str, index: int) -> BenchRun:
    n_prompt = _int_field(row, "n_prompt", prefix)
    n_gen = _int_field(row, "n_gen", prefix)
    n_depth = _int_field(row, "n_depth", prefix) if "n_depth" in row else 0
    if n_prompt == 0 and n_gen == 0:
        raise _Bad(_field(["n_prompt"], prefix), "n_prompt and n_gen are both 0: nothing was measured")
    tokens_per_s = _number_at(row, ["avg_ts"], prefix)
    ts_field = _field(["avg_ts"], prefix)
    notes: list[str] = []
    if n_gen == 0:  # ppN: one prompt of N tokens; avg_ts = N / t
        label, prompt, output = f"pp{n_prompt}", n_prompt, 1
        values = (BenchValue(quantity="prefill_tokens_per_s", value=tokens_per_s, field=ts_field),)
        notes.append(f"pp{n_prompt}: one {n_prompt}-token prompt, no generation (output modelled as 1)")
    elif n_prompt == 0:  # tgN: N tokens from a context of n_depth; avg_ts = N / t
        label, prompt, output = f"tg{n_gen}", max(n_depth, 1), n_gen
        values = (BenchValue(quantity="decode_tokens_per_s_per_seq", value=tokens_per_s, field=ts_field),) \
            if not n_depth else (BenchValue(quantity="decode_step_s", value=1.0 / tokens_per_s, field=ts_field),)
        notes.append(f"tg{n_gen}: {n_gen} tokens generated from an empty context (prompt modelled as 1)" if not n_depth
                     else f"tg{n_gen} @ d{n_depth}: {n_gen} tokens after a {n_depth}-token context (its prefill is "
                     "not timed)")
    else:  # ppN+tgM: one prompt then M tokens; avg_ns is the whole run
        label, prompt, output = f"pp{n_prompt}+tg{n_gen}", n_prompt, n_gen
        seconds = _number_at(row, ["avg_ns"], prefix) / 1e9
        values = (BenchValue(quantity="e2e_s", value=seconds, field=_field(["avg_ns"], prefix)),)
    if n_depth and n_gen == 0:
        raise _Bad(_field(["n_depth"], prefix), f"pp{n_prompt} at depth {n_depth}: a prompt after a cached "
                   "context is not a scenario the model has (prefill starts from an empty context)")
    if n_depth:
        label += f" @ d{n_depth}"
    model_type = _text(row.get("model_type"), _field(["model_type"], prefix))
    type_k = row.get("type_k")
    kv = LLAMACPP_KV_TYPES.get(type_k) if isinstance(type_k, str) else None
    if isinstance(type_k, str) and kv is None:
        notes.append(f"KV type {clip(type_k, 20)} not mapped: KV from the flags' default")
    flash = row.get("flash_attn")
    flash_attention = None
    if isinstance(flash, bool):
        flash_attention = flash
    elif isinstance(flash, int | str) and str(flash).strip() in ("0", "1", "true", "false"):
        flash_attention = str(flash).strip() in ("1", "true")
    return BenchRun(file=str(path), line=line, tool="llama-bench", label=label,
                    model=_text(row.get("model_filename"), _field(["model_filename"], prefix)),
                    prompt_tokens=float(prompt), output_tokens=float(output), concurrency=None, rate_per_s=None,
                    values=values, batch=1, weights=_llama_weights(model_type), kv=kv,
                    flash_attention=flash_attention, notes=tuple(notes) + ((f"model_type {model_type}",)
                                                                          if model_type else ()))


def _llama_bench_csv(path: Path, text: str) -> list[BenchRun]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        header = reader.fieldnames or []
        missing = [k for k in ("n_prompt", "n_gen", "avg_ts") if k not in header]
        if missing:
            raise _Bad(None, f"not JSON, and not llama-bench CSV (missing columns: {', '.join(missing)})", 1)
        runs = []
        for raw in reader:
            if len(runs) >= MAX_RUNS_PER_FILE:
                raise _Bad(None, f"more than {MAX_RUNS_PER_FILE:,} rows")
            raw.pop(None, None)
            row = {k: v for k, v in raw.items() if v is not None}
            try:
                runs.append(_llama_bench(path, reader.line_num, row, "", len(runs) + 1))
            except _Bad as bad:
                bad.line = reader.line_num
                raise
        return runs
    except csv.Error as err:
        raise _Bad(None, f"not a valid CSV: {clip(str(err), 100)}", reader.line_num) from None
