"""``roofline validate --from-bench FILE... --hardware ID``: your own benchmark runs scored like measurement rows.

Each file is read by :func:`roofline.presets.bench_files.read_bench_file` (vllm bench serve, SGLang bench_serving,
genai-perf, AIPerf, guidellm, llama-bench); each run becomes :class:`~roofline.presets.measurements.MeasurementRow`
objects, one per value it measured, and they are scored by :func:`roofline.tui.cli.validate.score` (the CSV path's
scoring: memory and context flags, the continuous-batching model for serving runs, the bands). Nothing is made up:
a field the file does not record comes from a flag (``--model``, ``--tp``, ``--concurrency``, ...) or a stated
default, and the report says, per run, which fields came from where.

Metric mapping (the units of models/validation.py): a serving run's mean TTFT -> ``ttft_s``, mean TPOT (or ITL) ->
``itl_s``, output tokens/s / (TP x PP) -> ``output_tokens_per_s_per_device``, at its concurrency or request rate;
llama-bench ppN -> ``prefill_tokens_per_s``, tgN -> ``decode_tokens_per_s_per_seq`` (prompt 1), tgN at depth d ->
``itl_ms`` (1 / avg_ts, prompt d), ppN+tgM -> ``e2e_s``, all at batch 1.

A recorded model name is matched to a preset id by :func:`roofline.presets.bench_files.model_preset_for`; no match:
the run asks for ``--model``.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# --format json: bumped when a key is renamed or removed or its meaning changes (adding one is not a bump).
VALIDATE_BENCH_SCHEMA_VERSION = 1

_TOOL_ENGINES = {"vllm bench serve": "vllm", "sglang bench_serving": "sglang", "llama-bench": "llamacpp"}
_SERVING_METRICS = {"ttft_s": ("ttft_s", 1.0), "itl_s": ("itl_s", 1.0)}
_STATIC_METRICS = {"prefill_tokens_per_s": ("prefill_tokens_per_s", 1.0),
                   "decode_tokens_per_s_per_seq": ("decode_tokens_per_s_per_seq", 1.0),
                   "decode_step_s": ("itl_ms", 1e3), "e2e_s": ("e2e_s", 1.0)}


def add_bench_flags(parser: argparse.ArgumentParser) -> None:
    """The ``--from-bench`` flags on the ``validate`` parser (argparse only: no import cost)."""
    group = parser.add_argument_group("benchmark result files (--from-bench)")
    group.add_argument("--from-bench", nargs="+", metavar="FILE", default=None,
                       help="score these result files (vllm bench serve --save-result JSON, SGLang bench_serving "
                       "JSONL, genai-perf/AIPerf profile_export JSON, guidellm benchmarks.json, llama-bench JSON/"
                       "JSONL/CSV) instead of a CSV")
    group.add_argument("--hardware", dest="bench_hardware", metavar="ID", help="the device the runs ran on "
                       "(no tool records it; required with --from-bench)")
    group.add_argument("--tp", dest="bench_tp", type=int, metavar="N", help="tensor parallel degree (default 1)")
    group.add_argument("--pp", dest="bench_pp", type=int, metavar="N", help="pipeline stages (default 1)")
    group.add_argument("--model", dest="bench_model", metavar="ID", help="model preset id or config.json "
                       "(default: the preset matching the recorded model name)")
    group.add_argument("--weights", dest="bench_weights", metavar="DTYPE",
                       help="weight format (default: recorded by llama-bench, else the model's released format)")
    group.add_argument("--kv", dest="bench_kv", metavar="DTYPE", help="KV cache format (default: recorded by "
                       "llama-bench, else bf16)")
    group.add_argument("--concurrency", dest="bench_concurrency", type=int, metavar="N",
                       help="requests in flight, for runs that record neither a concurrency nor a rate")


def bench_requested(args: argparse.Namespace) -> bool:
    """Whether ``validate`` was asked for result files; ``ValueError`` for neither or both of FILE and
    --from-bench."""
    files = getattr(args, "from_bench", None)
    if files and getattr(args, "file", None):
        raise ValueError("give a measurements CSV or --from-bench FILE..., not both")
    if not files and not getattr(args, "file", None):
        raise ValueError("give a measurements CSV (FILE) or --from-bench FILE...")
    return bool(files)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSettings:
    """What a run is scored with, and where each field came from (``file``, ``flag``, ``default``, ...)."""

    hardware_id: str
    model_id: str
    tp: int
    pp: int
    weights: str | None
    kv: str
    engine: str
    prompt_tokens: int
    output_tokens: int
    concurrency: int | None
    rate_per_s: float | None
    origins: dict[str, str]


def _engine_not_recorded(engines) -> str:
    """The engine of a run whose tool does not record it: ``unknown`` where a profile of that name exists (it widens
    the band instead of pretending, DESIGN.md), else the default profile."""
    from roofline.models.errors import ModelInputError

    unknown = getattr(engines, "UNKNOWN_ENGINE", None)
    if unknown:
        try:
            engines.engine_profile(unknown)
            return unknown
        except ModelInputError:
            pass
    return engines.DEFAULT_ENGINE


def _settings(run, args: argparse.Namespace, hardware_id: str, model_ids: list[str]) -> RunSettings:
    from roofline.tui.inputs.limits import check_number

    origins: dict[str, str] = {"hardware": "--hardware (no tool records it)"}
    if args.bench_model:
        model_id, origins["model"] = args.bench_model, "--model"
    else:
        from roofline.presets.bench_files import model_preset_for

        model_id = model_preset_for(run.model, model_ids)
        if model_id is None:
            recorded = "no model name recorded" if not run.model else f"recorded {run.model!r} matches no preset"
            raise ValueError(f"model: {recorded}: pass --model ID")
        origins["model"] = f"file ({run.model})"
    tp = args.bench_tp or 1
    pp = args.bench_pp or 1
    origins["tp"] = "--tp" if args.bench_tp else "default 1 (not recorded)"
    origins["pp"] = "--pp" if args.bench_pp else "default 1 (not recorded)"
    if args.bench_weights:
        weights, origins["weights"] = args.bench_weights, "--weights"
    elif run.weights:
        weights, origins["weights"] = run.weights, "file"
    else:
        weights, origins["weights"] = None, "the model's released format (not recorded)"
    if args.bench_kv:
        kv, origins["kv"] = args.bench_kv, "--kv"
    elif run.kv:
        kv, origins["kv"] = run.kv, "file"
    else:
        kv, origins["kv"] = "bf16", "default bf16 (not recorded)"
    if args.engine:
        engine, origins["engine"] = args.engine, "--engine"
    elif run.tool in _TOOL_ENGINES:
        engine, origins["engine"] = _TOOL_ENGINES[run.tool], f"the tool ({run.tool})"
    else:
        from roofline.models import engines

        engine = _engine_not_recorded(engines)
        origins["engine"] = f"{engine} (the tool does not record the engine; pass --engine)"
    concurrency, rate = run.concurrency, run.rate_per_s
    origins["load"] = "file"
    if run.is_serving and concurrency is None and rate is None:
        if not args.bench_concurrency:
            raise ValueError("neither a concurrency nor a request rate recorded: pass --concurrency N")
        concurrency, origins["load"] = args.bench_concurrency, "--concurrency"
    origins["lengths"] = "file (means over the run's requests)" if run.is_serving else "file (the test's sizes)"
    try:
        prompt = int(check_number("prompt_tokens", max(round(run.prompt_tokens or 0), 1)))
        output = int(check_number("output_tokens", max(round(run.output_tokens or 0), 1)))
        tp, pp = int(check_number("tp", tp)), int(check_number("pp", pp))
    except ValueError as err:
        raise ValueError(f"lengths or parallelism: {err}") from None
    return RunSettings(hardware_id=hardware_id, model_id=model_id, tp=tp, pp=pp, weights=weights, kv=kv,
                       engine=engine, prompt_tokens=prompt, output_tokens=output, concurrency=concurrency,
                       rate_per_s=rate, origins=origins)


def rows_for_run(run, s: RunSettings, row_prefix: str, hardware, model) -> list:
    """One :class:`MeasurementRow` per value the run measured (module docstring's mapping)."""
    from roofline.models.scenario import Batching, Parallelism, Scenario, released_precisions
    from roofline.presets.measurements import MeasurementRow

    scenario = Scenario(
        hardware=hardware, model=model,
        precisions=released_precisions(model, weights=s.weights, kv=s.kv,
                                       activations="fp8" if s.weights == "fp8" else None),
        batching=Batching(batch_size=run.batch or 1, prompt_tokens=s.prompt_tokens, output_tokens=s.output_tokens,
                          flash_attention=True if run.flash_attention is None else run.flash_attention),
        parallelism=Parallelism(tp=s.tp, pp=s.pp),
        engine=s.engine)  # an id without a profile: ModelInputError naming the engine, the run is skipped
    rows = []
    for value in run.values:
        if run.is_serving and value.quantity == "output_tokens_per_s":
            metric, measured = "output_tokens_per_s_per_device", value.value / (s.tp * s.pp)
        elif run.is_serving:
            metric, scale = _SERVING_METRICS[value.quantity]
            measured = value.value * scale
        else:
            metric, scale = _STATIC_METRICS[value.quantity]
            measured = value.value * scale
        rows.append(MeasurementRow(id=f"{row_prefix}-{metric}", family=run.tool, scenario=scenario, metric=metric,
                                   value=measured, source=f"{run.file} {run.label} ({value.field})",
                                   stated_engine=s.engine,
                                   concurrency=s.concurrency if run.is_serving else None,
                                   rate_per_s=s.rate_per_s if run.is_serving else None))
    return rows


@dataclass(frozen=True, slots=True, kw_only=True)
class BenchInput:
    """The runs read, what each is scored with, and the runs that could not be (with why)."""

    runs: list[tuple[str, Any, RunSettings, list]]  # (run id, run, settings, rows)
    skipped: list[tuple[str, Any, str]]


def bench_input(args: argparse.Namespace) -> BenchInput:
    """Read every file (a bad file is a one-line ValueError naming it) and build the rows of every run."""
    from roofline.models.errors import ModelInputError
    from roofline.presets.bench_files import read_bench_file
    from roofline.presets.errors import PresetFileError
    from roofline.presets.ids import match_id, suggest_ids
    from roofline.presets.loader import load_hardware, preset_ids, resolve_model
    from roofline.presets.safe_files import clip, user_path

    if not args.bench_hardware:
        raise ValueError("--from-bench needs --hardware ID (no benchmark tool records the device)")
    hardware_ids = preset_ids("hardware")
    hardware_id = match_id(args.bench_hardware, hardware_ids)
    if hardware_id is None:
        near = suggest_ids(args.bench_hardware, hardware_ids)
        raise ValueError(f"--hardware: unknown id {args.bench_hardware!r}"
                         + (f" (did you mean {', '.join(near)}?)" if near else " (see: roofline presets hardware)"))
    hardware = load_hardware(hardware_id)
    model_ids = preset_ids("models")
    models: dict[str, Any] = {}
    runs, skipped = [], []
    for f, name in enumerate(args.from_bench, start=1):
        for r, run in enumerate(read_bench_file(user_path(name, what="benchmark result file")), start=1):
            run_id = f"B{f}.{r}"
            try:
                s = _settings(run, args, hardware_id, model_ids)
                if s.model_id not in models:
                    try:
                        models[s.model_id] = resolve_model(s.model_id)
                    except KeyError:
                        near = suggest_ids(s.model_id, model_ids)
                        raise ValueError(f"model: unknown id {s.model_id!r}"
                                         + (f" (did you mean {', '.join(near)}?)" if near else "")) from None
                runs.append((run_id, run, s, rows_for_run(run, s, run_id, hardware, models[s.model_id])))
            except (ValueError, ModelInputError, PresetFileError) as err:  # this run only: the others go on
                skipped.append((run_id, run, clip(str(err), 300)))
    return BenchInput(runs=runs, skipped=skipped)


def _result_json(r) -> dict[str, Any]:
    return {"measured": r.measured, "expected": r.expected, "expected_low": r.expected_low,
            "expected_high": r.expected_high, "in_band": r.in_band, "bound": r.bound,
            "expected_error": r.expected_error, "bound_held": r.bound_held}


def _run_line(run_id: str, run, s: RunSettings) -> str:
    load = (f"concurrency {s.concurrency}" if s.concurrency is not None else "") + \
        (f"{', ' if s.concurrency is not None else ''}rate {s.rate_per_s:g}/s" if s.rate_per_s is not None else "")
    head = f"{run_id} {Path(run.file).name} {run.label} ({run.tool}): {s.model_id} on {s.hardware_id} TP{s.tp}"
    head += f" PP{s.pp}" if s.pp > 1 else ""
    head += f", prompt {s.prompt_tokens} / output {s.output_tokens}"
    head += f", weights {s.weights or 'as released'}, KV {s.kv}"
    head += f", {load}" if load else ", batch 1"
    return head + f", engine {s.engine}"


def _origin_line(s: RunSettings) -> str:
    return "    from: " + "; ".join(f"{k} {v}" for k, v in s.origins.items())


def _line(label: str, s) -> str:
    band = "" if s.band_coverage is None else f"  in band {100 * s.band_coverage:5.1f}%"
    return (f"{label:32} rows {s.rows:3}  median |error| {100 * s.median_abs_error:5.1f}%  "
            f"p80 {100 * s.p80_abs_error:5.1f}%  bound held {100 * s.bound_held_share:5.1f}%{band}")


def run_validate_bench(args: argparse.Namespace) -> int:
    from roofline.models.validation import summarize
    from roofline.presets.errors import PresetFileError
    from roofline.tui.cli.validate import score

    if args.format == "markdown":
        raise ValueError("--format markdown is the CSV's accuracy tables; use text or json with --from-bench")
    try:
        data = bench_input(args)
    except PresetFileError as err:
        raise ValueError(str(err)) from None
    rows = [row for _, _, _, run_rows in data.runs for row in run_rows]
    if not rows:
        reasons = "; ".join(f"{rid}: {why}" for rid, _, why in data.skipped[:3])
        raise ValueError(f"no run could be scored ({reasons})")
    scored = score(rows, engine=None)
    results = {r.id: (row, r) for row, r in zip(scored.rows, scored.results, strict=True)}
    results |= {r.id: (row, r) for row, r in scored.serving_scored}
    left_out = {row.id: why for row, why in
                [*scored.flagged, *scored.serving_flagged, *getattr(scored, "context_flagged", [])]}
    by_tool: dict[str, list] = defaultdict(list)
    by_metric: dict[str, list] = defaultdict(list)
    for row, r in results.values():
        by_tool[row.family].append(r)
        by_metric[r.metric].append(r)
    if args.format == "json":
        out = {
            "schema_version": VALIDATE_BENCH_SCHEMA_VERSION,
            "runs": [{"id": run_id, "file": run.file, "label": run.label, "tool": run.tool,
                      "recorded_model": run.model, "hardware": s.hardware_id, "model": s.model_id, "tp": s.tp,
                      "pp": s.pp, "weights": run_rows[0].scenario.precisions.weights if run_rows else s.weights,
                      "kv": s.kv, "engine": s.engine,
                      "prompt_tokens": s.prompt_tokens, "output_tokens": s.output_tokens,
                      "concurrency": s.concurrency, "rate_per_s": s.rate_per_s, "from": s.origins,
                      "notes": list(run.notes),
                      "metrics": [{"metric": row.metric, "source": row.source,
                                   **(_result_json(results[row.id][1]) if row.id in results else
                                      {"measured": row.value, "left_out": left_out.get(row.id, "not scored")})}
                                  for row in run_rows]}
                     for run_id, run, s, run_rows in data.runs],
            "skipped": [{"id": rid, "file": run.file, "label": run.label, "reason": why}
                        for rid, run, why in data.skipped],
            "summary": summarize([r for _, r in results.values()]).as_dict() if results else None,
            "by_tool": {k: summarize(v).as_dict() for k, v in sorted(by_tool.items())},
            "by_metric": {k: summarize(v).as_dict() for k, v in sorted(by_metric.items())},
        }
        print(json.dumps(out, indent=2))
        return 0
    for run_id, run, s, run_rows in data.runs:
        print(_run_line(run_id, run, s))
        print(_origin_line(s))
        for note in run.notes:
            print(f"    note: {note}")
        for row in run_rows:
            if row.id in results:
                r = results[row.id][1]
                band = "-" if r.expected_low is None else f"{r.expected_low:.4g}..{r.expected_high:.4g}"
                print(f"    {r.metric:32} measured {r.measured:10.4g}  expected {r.expected:10.4g} "
                      f"({100 * r.expected_error:+6.1f}%)  band {band:>21}  bound {r.bound:10.4g} "
                      f"held {'yes' if r.bound_held else 'NO'}")
            else:
                print(f"    {row.metric:32} measured {row.value:10.4g}  left out: {left_out.get(row.id, '?')}")
    print()
    if results:
        print(_line("all", summarize([r for _, r in results.values()])))
        for tool, group in sorted(by_tool.items()):
            print(_line(f"  tool {tool}", summarize(group)))
        for metric, group in sorted(by_metric.items()):
            print(_line(f"  metric {metric}", summarize(group)))
    for rid, run, why in data.skipped:
        print(f"skipped {rid} {Path(run.file).name} {run.label}: {why}")
    return 0


def add_explorer_engine_flags(group) -> None:
    """The explorer's ``--engine-url`` and ``--measured`` (argparse only)."""
    group.add_argument("--engine-url", dest="engine_url", metavar="URL", default=None,
                       help="a running engine's Prometheus metrics (vLLM, SGLang, TGI, TensorRT-LLM, llama.cpp): its "
                       "/metrics and /v1/models are read once a second (m in the Serving view toggles it); a "
                       f"bearer token from ${_token_env()} if the engine needs one")
    group.add_argument("--measured", dest="measured_files", nargs="+", metavar="FILE", default=None,
                       help="benchmark result files (as validate --from-bench reads them) drawn on the Serving view "
                       "beside the frontier")


def _token_env() -> str:
    from roofline.tui.probe.engine_metrics import TOKEN_ENV

    return TOKEN_ENV


def explorer_engine_args(args: argparse.Namespace) -> tuple[str | None, tuple]:
    """(engine URL, measured runs) for the explorer, checked before the full screen opens: a URL that is not an
    http(s) URL or a result file that does not read is a one-line ``ValueError``."""
    from roofline.presets.bench_files import read_bench_file
    from roofline.presets.errors import PresetFileError
    from roofline.presets.safe_files import user_path
    from roofline.tui.probe.engine_metrics import endpoint_for

    url = getattr(args, "engine_url", None)
    if url is not None:
        endpoint_for(url)  # ValueError naming what is wrong
    runs: list = []
    for name in getattr(args, "measured_files", None) or ():
        try:
            runs.extend(read_bench_file(user_path(name, what="benchmark result file")))
        except PresetFileError as err:
            raise ValueError(f"--measured: {err}") from None
    return url, tuple(runs)
