"""The ``roofline`` command: ``report``, ``presets``; no subcommand opens the explorer.

Arguments are parsed before anything heavy is imported: ``roofline --help`` and
``roofline report`` never import Textual.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from typing import NoReturn

from roofline.models.dtypes import ACTIVATION_BITS_PER_ELEMENT, KV_BITS_PER_ELEMENT, WEIGHT_BITS_PER_ELEMENT

from roofline.tui.inputs.limits import FIELD_LIMITS

EXIT_USAGE = 2
MAX_BATCH = int(FIELD_LIMITS["batch"][1])
MAX_PROMPT_TOKENS = int(FIELD_LIMITS["prompt_tokens"][1])
MAX_OUTPUT_TOKENS = int(FIELD_LIMITS["output_tokens"][1])
MAX_PARALLEL = int(FIELD_LIMITS["tp"][1])
DEFAULTS = {"hardware": "h100-sxm", "model": "llama-3.1-8b", "batch": 1, "prompt": 1024, "output": 256}
# model-layer field -> the flag a user typed
FIELD_TO_FLAG = {
    "batch_size": "--batch", "prompt_tokens": "--prompt", "output_tokens": "--output", "tp": "--tp",
    "pp": "--pp", "weights": "--weights", "activations": "--activations", "kv": "--kv", "hardware": "--hardware",
    "kv_compression_ratio": "--kv-compression", "expert_weights": "--expert-weights",
}


class UsageError(Exception):
    """A bad command-line value: reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, no usage dump
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _whole(flag: str, low: int, high: int):
    def parse(text: str) -> int:
        try:
            value = float(text.replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value) or value != int(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text!r} is out of range ({low:,} to {high:,})")
        return int(value)

    parse.__name__ = flag
    return parse


def _ratio(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or not 1.0 <= value <= 1000.0:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 1 and 1000")
    return value


def _positive(flag: str):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value) or value <= 0:
            raise argparse.ArgumentTypeError(f"{text!r} must be a positive number")
        return value

    parse.__name__ = flag
    return parse


def _dtype(table: dict[str, float]):
    def parse(text: str) -> str:
        value = text.lower()
        if value not in table:
            raise argparse.ArgumentTypeError(f"unknown dtype {text!r} (choose from {', '.join(table)})")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="roofline", description="Why LLM inference is memory-bound: a roofline model of "
                     "prefill and decode on accelerators. With no command, opens the explorer.")
    explorer = parser.add_argument_group("explorer options (no COMMAND)")
    explorer.add_argument("--hardware", metavar="ID", help=f"hardware preset (default {DEFAULTS['hardware']})")
    explorer.add_argument("--model", metavar="ID|PATH",
                          help=f"model preset or config.json (default {DEFAULTS['model']})")
    explorer.add_argument("--batch", type=_whole("--batch", 1, MAX_BATCH), help="batch size (default 1)")
    explorer.add_argument("--prompt", type=_whole("--prompt", 1, MAX_PROMPT_TOKENS),
                          help="prompt tokens (default 1024)")
    explorer.add_argument("--output", type=_whole("--output", 1, MAX_OUTPUT_TOKENS), help="output tokens (default 256)")
    explorer.add_argument("--tp", type=_whole("--tp", 1, MAX_PARALLEL), help="tensor-parallel devices (default 1)")
    explorer.add_argument("--pp", type=_whole("--pp", 1, MAX_PARALLEL), help="pipeline stages (default 1)")
    explorer.add_argument("--weights", type=_dtype(WEIGHT_BITS_PER_ELEMENT), help="weight format")
    explorer.add_argument("--kv", type=_dtype(KV_BITS_PER_ELEMENT), help="KV-cache format")
    explorer.add_argument("--scenario", metavar="FILE", help="open a saved scenario (TOML)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    report = sub.add_parser("report", help="estimate one scenario (text, json or markdown)",
                            formatter_class=argparse.ArgumentDefaultsHelpFormatter,
                            description="Estimate prefill, decode and memory for one scenario, as a spec-sheet "
                            "bound and an expected value.")
    report.add_argument("--hardware", default=DEFAULTS["hardware"], metavar="ID",
                        help="hardware preset id (roofline presets hardware)")
    report.add_argument("--model", default=DEFAULTS["model"], metavar="ID|PATH",
                        help="model preset id, or a local Hugging Face config.json (file or folder)")
    report.add_argument("--batch", type=_whole("--batch", 1, MAX_BATCH), default=DEFAULTS["batch"],
                        help="sequences decoded together")
    report.add_argument("--prompt", type=_whole("--prompt", 1, MAX_PROMPT_TOKENS), default=DEFAULTS["prompt"],
                        help="prompt tokens per sequence")
    report.add_argument("--output", type=_whole("--output", 1, MAX_OUTPUT_TOKENS), default=DEFAULTS["output"],
                        help="generated tokens per sequence")
    report.add_argument("--tp", type=_whole("--tp", 1, MAX_PARALLEL), default=1, help="tensor-parallel devices")
    report.add_argument("--pp", type=_whole("--pp", 1, MAX_PARALLEL), default=1, help="pipeline stages")
    report.add_argument("--weights", type=_dtype(WEIGHT_BITS_PER_ELEMENT), default=None,
                        help=f"weight format ({' '.join(WEIGHT_BITS_PER_ELEMENT)}); "
                        "default: the model's released format, else bf16")
    report.add_argument("--expert-weights", type=_dtype(WEIGHT_BITS_PER_ELEMENT), default=None,
                        help="routed MoE expert weight format; default: the model's released format, else --weights")
    report.add_argument("--activations", type=_dtype(ACTIVATION_BITS_PER_ELEMENT), default=None,
                        help=f"activation format ({' '.join(ACTIVATION_BITS_PER_ELEMENT)}); "
                        "default: the model's released format, else bf16")
    report.add_argument("--kv", type=_dtype(KV_BITS_PER_ELEMENT), default="bf16",
                        help=f"KV-cache format ({' '.join(KV_BITS_PER_ELEMENT)})")
    report.add_argument("--kv-compression", type=_ratio, default=1.0, metavar="RATIO",
                        help="extra KV-cache compression factor beyond the KV format")
    report.add_argument("--flash-attention", action=argparse.BooleanOptionalAction, default=True,
                        help="fused attention (no score-matrix round trip)")
    report.add_argument("--format", choices=("text", "json", "markdown"), default="text", help="output format")
    report.add_argument("--no-ops", action="store_true", help="leave the per-op table out")

    history = sub.add_parser("history", help="compute vs memory bandwidth since 2011, from the presets",
                             formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    history.add_argument("--metric", choices=("fp64", "fp64-matrix", "fp32", "bf16", "fp8"), default="bf16",
                         help="compute metric (bf16 = dense 16-bit tensor, FP32 for parts without)")
    history.add_argument("--from", dest="from_id", metavar="ID", help="baseline device (default: k20x)")
    history.add_argument("--to", dest="to_id", metavar="ID", help="endpoint device (default: h100-sxm)")
    history.add_argument("--vendor", nargs="+", metavar="NAME", help="only these vendors (e.g. NVIDIA AMD)")
    history.add_argument("--category", choices=("datacenter", "all"), default="datacenter",
                         help="datacenter parts only, or consumer, workstation, edge and SoC parts too")
    history.add_argument("--width", type=_whole("--width", 40, 400), default=100, help="chart width (columns)")
    history.add_argument("--height", type=_whole("--height", 10, 200), default=24, help="chart height (rows)")
    history.add_argument("--format", choices=("text", "json"), default="text")

    present = sub.add_parser("present", help="talk mode: live slides over the explorer (built-in deck by default)")
    present.add_argument("deck", nargs="?", metavar="DECK", help="a deck TOML file (default: 'The memory wall')")
    present.add_argument("--export", choices=("markdown",), help="print a handout instead of presenting")

    serve = sub.add_parser("serve", help="serve the explorer to web browsers (needs the [serve] extra)",
                           formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (anything but loopback is reachable from the network)")
    serve.add_argument("--port", type=_whole("--port", 1, 65535), default=8000, help="TCP port")
    serve.add_argument("--present", action="store_true", help="serve the talk (roofline present) instead")

    validate = sub.add_parser("validate", help="compare expected and bound with published measurements (CSV)")
    validate.add_argument("file", metavar="FILE", help="CSV: id, hardware, tp, pp, model, weights, kv, batch, prompt, "
                          "output, metric, value")
    validate.add_argument("--format", choices=("text", "json"), default="text")

    calibrate = sub.add_parser("calibrate", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
                               help="back-solve this box's efficiency from a measured decode speed")
    for flag in ("--hardware", "--model", "--batch", "--prompt", "--output", "--tp", "--pp", "--weights",
                 "--activations", "--kv"):
        action = next(a for a in report._actions if flag in a.option_strings)
        calibrate.add_argument(flag, type=action.type, default=action.default, metavar=action.metavar,
                               help=action.help)
    measured = calibrate.add_mutually_exclusive_group(required=True)
    measured.add_argument("--measured-tokens-per-s", type=_positive("--measured-tokens-per-s"), metavar="X",
                          help="measured decode tokens/s per sequence (1 / inter-token latency)")
    measured.add_argument("--measured-itl-ms", type=_positive("--measured-itl-ms"), metavar="MS",
                          help="measured inter-token latency (mean decode step), ms")
    calibrate.add_argument("--save", action="store_true", help="store the result in a user hardware preset")
    calibrate.add_argument("--force", action="store_true", help="with --save: replace an existing user preset")

    from roofline.tui.cli.detect import add_detect_parser
    from roofline.tui.cli.measure import add_measure_parser

    add_detect_parser(sub)
    add_measure_parser(sub)

    presets = sub.add_parser("presets", help="list hardware and model presets with their sources")
    presets.add_argument("kind", nargs="?", choices=("hardware", "models"), help="only this kind")
    presets.add_argument("--format", choices=("text", "json"), default="text")
    return parser


def _load_preset(flag: str, kind: str, ref: str, loader):
    """A preset (or config.json) for a flag; unknown ids name the nearest valid ones."""
    from difflib import get_close_matches

    from roofline.presets.loader import PresetFileError, preset_ids

    warnings: list = []
    try:
        item = loader(ref, warnings=warnings)
        for warning in warnings:
            print(f"roofline: warning: {warning}", file=sys.stderr)
        return item
    except KeyError:
        near = get_close_matches(ref, preset_ids(kind), n=3, cutoff=0.5)
        hint = f"did you mean {', '.join(near)}?" if near else f"see: roofline presets {kind}"
        raise UsageError(f"{flag}: unknown id {ref!r} ({hint})") from None
    except PresetFileError as err:
        raise UsageError(f"{flag}: {err}") from None


def _scenario_from_args(args: argparse.Namespace):
    from roofline.models.errors import ModelInputError
    from roofline.models.scenario import Batching, Parallelism, Scenario, released_precisions
    from roofline.presets import load_hardware, resolve_model

    hardware = _load_preset("--hardware", "hardware", args.hardware, load_hardware)
    model = _load_preset("--model", "models", args.model, resolve_model)
    try:
        return Scenario(
            hardware=hardware,
            model=model,
            precisions=released_precisions(model, weights=args.weights, activations=args.activations, kv=args.kv,
                                           expert_weights=args.expert_weights),
            batching=Batching(batch_size=args.batch, prompt_tokens=args.prompt, output_tokens=args.output,
                              flash_attention=args.flash_attention, kv_compression_ratio=args.kv_compression),
            parallelism=Parallelism(tp=args.tp, pp=args.pp),
        )
    except ModelInputError as err:
        flag = FIELD_TO_FLAG.get(err.field, err.field)
        raise UsageError(f"{flag}: {err.message}") from None


def _run_report(args: argparse.Namespace) -> int:
    from roofline.models.report import scenario_report

    scenario = _scenario_from_args(args)
    report = scenario_report(scenario, include_ops=not args.no_ops)
    if args.format == "json":
        print(json.dumps(report, indent=2))
    elif args.format == "markdown":
        from roofline.tui.views.report_text import render_markdown

        print(render_markdown(report), end="")
    else:
        from roofline.tui.views.report_text import render_text

        print(render_text(report))
    return 0


def _run_calibrate(args: argparse.Namespace) -> int:
    from roofline.models.calibration import calibrate

    args.expert_weights, args.kv_compression, args.flash_attention = None, 1.0, True
    scenario = _scenario_from_args(args)
    step_s = args.measured_itl_ms / 1e3 if args.measured_itl_ms else 1.0 / args.measured_tokens_per_s
    result = calibrate(scenario, step_s)
    print(f"{scenario.model.name} on {scenario.hardware.name}: measured step {step_s * 1e3:.3f} ms, "
          f"expected before {result.expected_step_s_before * 1e3:.3f} ms")
    if result.value is None:
        print(f"no calibration: {result.reason}")
        return 1
    print(f"{result.parameter} that reproduces it: {result.value:.3f}")
    if args.save:
        from roofline.presets.user_presets import save_calibrated_hardware

        note = f"measured decode step {step_s * 1e3:.3f} ms for {scenario.model.id} batch {args.batch}"
        try:
            path = save_calibrated_hardware(scenario.hardware.id, {result.parameter: result.value}, note,
                                            force=args.force)
        except (FileExistsError, OSError) as err:
            raise UsageError(f"--save: {err}") from None
        print(f"saved: {path}")
    return 0


def _run_presets(args: argparse.Namespace) -> int:
    from roofline.presets import load_catalog

    kinds = (args.kind,) if args.kind else ("hardware", "models")
    catalog = load_catalog(kinds=kinds)
    for error in catalog.errors:
        print(f"roofline presets: skipped {error}", file=sys.stderr)
    for warning in catalog.warnings:
        print(f"roofline presets: warning: {warning}", file=sys.stderr)
    if args.format == "json":
        out: dict[str, list] = {}
        if "hardware" in kinds:
            out["hardware"] = [
                {"id": h.id, "name": h.name, "vendor": h.vendor, "year": h.year,
                 "memory_capacity_bytes": h.memory_capacity_bytes, "mem_bw_bytes_per_s": h.mem_bw_bytes_per_s,
                 "dense_peak_flops_per_s": h.dense_peak_flops_per_s, "source": h.source,
                 "file": str(catalog.origins[f"hardware/{h.id}"])}
                for h in catalog.hardware.values()]
        if "models" in kinds:
            out["models"] = [
                {"id": m.id, "name": m.name, "params": m.params, "active_params": m.active_params,
                 "source": m.source, "file": str(catalog.origins[f"models/{m.id}"])}
                for m in catalog.models.values()]
        print(json.dumps(out, indent=2))
        return 0
    from roofline.tui.views.formatting import si

    if "hardware" in kinds:
        print("hardware:")
        for h in sorted(catalog.hardware.values(), key=lambda h: (h.vendor, h.year, h.id)):
            bf16 = h.dense_peak_flops_per_s.get("bf16") or h.dense_peak_flops_per_s.get("fp16")
            print(f"  {h.id:22} {h.year}  {h.name[:38]:38} {si(h.mem_bw_bytes_per_s, 'B/s'):>10}  "
                  f"{si(bf16, 'FLOP/s') if bf16 else '-':>13}  source: {h.source[:60]}")
    if "models" in kinds:
        print("models:")
        for m in sorted(catalog.models.values(), key=lambda m: m.id):
            print(f"  {m.id:18} {m.params / 1e9:8.2f} B params  {m.active_params / 1e9:7.2f} B active  "
                  f"source: {m.source}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "report":
            return _run_report(args)
        if args.command == "presets":
            return _run_presets(args)
        if args.command == "serve":
            _explorer_form(args)  # bad explorer flags fail here, not as a blank browser tab
            from roofline.tui.cli.serve import explorer_args_from_namespace, run_serve

            return run_serve(args.host, args.port, explorer_args_from_namespace(args), args.present)
        if args.command == "present":
            from roofline.tui.cli.present import run_present

            return run_present(args)
        if args.command == "calibrate":
            return _run_calibrate(args)
        if args.command == "validate":
            from roofline.tui.cli.validate import run_validate

            return run_validate(args)
        if args.command == "measure":
            from roofline.tui.cli.measure import run_measure

            return run_measure(args)
        if args.command == "detect":
            from roofline.tui.cli.detect import run_detect

            return run_detect(args)
        if args.command == "history":
            from roofline.tui.cli.history import run_history

            return run_history(args)
    except (UsageError, ValueError) as err:
        print(f"roofline {args.command}: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # `roofline report | head`
        return 0
    try:
        form, scenario_file, catalog = _explorer_form(args)
    except UsageError as err:
        print(f"roofline: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    from roofline.tui.app import run_explorer

    # no --hardware and no scenario file: open on the local GPUs when there are any
    return run_explorer(form, scenario_file=scenario_file, catalog=catalog,
                        detect_hardware=args.hardware is None and not args.scenario)


_FORM_FIELD_TO_FLAG = {"hardware_id": "--hardware", "model_ref": "--model", "batch": "--batch",
                       "prompt_tokens": "--prompt", "output_tokens": "--output", "tp": "--tp", "pp": "--pp",
                       "weights": "--weights", "kv": "--kv"}


def _explorer_form(args: argparse.Namespace):
    """The explorer's starting form from the flags; checked before the full screen opens."""
    from dataclasses import replace
    from pathlib import Path

    from roofline.presets import load_catalog
    from roofline.presets.loader import PresetFileError
    from roofline.presets.scenario_file import read_scenario

    from roofline.tui.inputs.form import FormError, ScenarioForm, build_scenario
    from roofline.tui.inputs.file_values import form_from_file_values

    form = ScenarioForm()
    scenario_file = None
    if args.scenario:
        scenario_file = Path(args.scenario).expanduser()
        warnings: list = []
        try:
            form = form_from_file_values(read_scenario(scenario_file, warnings))
            for warning in warnings:
                print(f"roofline: warning: {warning}", file=sys.stderr)
        except PresetFileError as err:
            raise UsageError(f"--scenario: {err}") from None
        except FormError as err:
            raise UsageError(f"--scenario: {scenario_file}: {err.field}: {err.message}") from None
        scenario_file = None  # already applied to the form
    flags = {"hardware_id": args.hardware, "model_ref": args.model, "batch": args.batch,
             "prompt_tokens": args.prompt, "output_tokens": args.output, "tp": args.tp, "pp": args.pp,
             "weights": args.weights, "kv": args.kv}
    form = replace(form, **{k: v for k, v in flags.items() if v is not None})
    try:
        catalog = load_catalog()
        build_scenario(form, catalog)
    except FormError as err:
        raise UsageError(f"{_FORM_FIELD_TO_FLAG.get(err.field, err.field)}: {err.message}") from None
    return form, scenario_file, catalog


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
