"""The ``roofline`` command: ``report``, ``presets``; no subcommand opens the explorer.

Arguments are parsed before anything heavy is imported: ``roofline --help`` and
``roofline report`` never import Textual.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

from roofline.presets.number_text import parse_number_text, shown_text
from roofline.tui.cli.completion import add_completion_parser, completion_ids
from roofline.tui.cli.preset_loading import UsageError, load_preset
from roofline.tui.cli.scenario_flags import add_scenario_flags, form_from_args
from roofline.tui.cli.scenario_source import scenario_file_form
from roofline.tui.cli.terminal_text import one_line, without_controls
from roofline.tui.inputs.registry import INPUTS, flag_for, input_for_model_error

EXIT_USAGE = 2
# calibrate --format json: bumped when a key is renamed or removed or its meaning changes (adding one is not a bump).
CALIBRATE_SCHEMA_VERSION = 1


TOP = "top_"  # dest prefix of the scenario flags given before the command (merged by _RooflineParser)
# commands that take the explorer's flags before them (serve passes them to each session's explorer)
EXPLORER_FLAG_COMMANDS = (None, "serve")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, no usage dump
        self.exit(EXIT_USAGE, f"{self.prog}: error: {one_line(_with_suggestion(message))}\n")


_INVALID_CHOICE = re.compile(r"invalid choice: '(?P<typed>[^']*)' \(choose from (?P<choices>.*)\)$")


def _with_suggestion(message: str) -> str:
    """argparse's "invalid choice: 'reprot' (choose from ...)" with "did you mean 'report'?" (Python
    3.14's ``suggest_on_error`` does the same)."""
    from difflib import get_close_matches

    match = _INVALID_CHOICE.search(message)
    if match is None or "did you mean" in message:
        return message
    choices = [c.strip().strip("'") for c in match.group("choices").split(",")]
    near = get_close_matches(match.group("typed"), choices, n=1, cutoff=0.6)
    return f"{message}; did you mean {near[0]!r}?" if near else message


class _RooflineParser(_Parser):
    """The top-level parser: a scenario flag (or ``--scenario``) before the command applies to that command when
    the command takes it (the command's own flag wins), and is refused in one line when it does not."""

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        command = namespace.command
        taken = set(getattr(namespace, "command_inputs", ()))
        if hasattr(namespace, "command_inputs"):
            del namespace.command_inputs
        for spec in [*(s for s in INPUTS if s.flag), None]:
            name, flag = ("scenario", "--scenario") if spec is None else (spec.name, spec.flag)
            before = getattr(namespace, TOP + name, None)
            if hasattr(namespace, TOP + name):
                delattr(namespace, TOP + name)
            if command in EXPLORER_FLAG_COMMANDS:
                setattr(namespace, name, before)
            elif before is not None and name in taken:
                if getattr(namespace, name, None) is None:
                    setattr(namespace, name, before)
            elif before is not None:
                self.error(f"{flag}: `roofline {command}` does not take it (a flag before the command applies "
                           f"to that command; see roofline {command} --help)")
        return namespace, extras


def _whole(flag: str, low: int, high: int):
    def parse(text: str) -> int:
        try:
            value = parse_number_text(text)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
        if value != int(value):
            raise argparse.ArgumentTypeError(f"{shown_text(text)} is not a whole number")
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{shown_text(text)} is out of range ({low:,} to {high:,})")
        return int(value)

    parse.__name__ = flag
    return parse


def _positive(flag: str):
    def parse(text: str) -> float:
        try:
            value = parse_number_text(text)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{shown_text(text)} must be a positive number")
        return value

    parse.__name__ = flag
    return parse


def _version() -> str:
    """The installed distribution's version (pyproject.toml's [project] version)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("roofline-explorer")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = _RooflineParser(prog="roofline", description="Why LLM inference is memory-bound: a roofline model of "
                     "prefill and decode on accelerators. With no command, opens the explorer.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    explorer = parser.add_argument_group("explorer options (no COMMAND)")
    add_scenario_flags(explorer, dest_prefix=TOP)
    explorer.add_argument("--scenario", dest=TOP + "scenario", metavar="FILE",
                          help="open a saved scenario (TOML); before report or plan: that command's scenario")
    from roofline.tui.cli.validate_bench import add_explorer_engine_flags

    add_explorer_engine_flags(explorer)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    # the scenario flags' help says each default itself (ArgumentDefaultsHelpFormatter added "default: None")
    report = sub.add_parser("report", help="estimate one scenario (text, json or markdown)",
                            description="Estimate prefill, decode and memory for one scenario, as a spec-sheet "
                            "bound and an expected value.")
    report.set_defaults(command_inputs=(*add_scenario_flags(report), "scenario"))
    report.add_argument("--scenario", metavar="FILE", help="a saved scenario (TOML); flags override its values")
    report.add_argument("--format", choices=("text", "json", "markdown"), default="text",
                        help="output format (default: text)")
    report.add_argument("--no-ops", action="store_true", help="leave the per-op table out")

    history = sub.add_parser("history", help="compute vs memory bandwidth since 2011, from the presets",
                             formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    history.add_argument("--metric", choices=("fp64", "fp64-matrix", "fp32", "bf16", "fp8"), default="bf16",
                         help="compute metric (bf16 = dense 16-bit tensor, FP32 for parts without)")
    history.add_argument("--from", dest="from_id", metavar="ID", choices=completion_ids("hardware"),
                         help="baseline device (default: k20x)")
    history.add_argument("--to", dest="to_id", metavar="ID", choices=completion_ids("hardware"),
                         help="endpoint device (default: h100-sxm)")
    history.add_argument("--vendor", nargs="+", metavar="NAME", help="only these vendors (e.g. NVIDIA AMD)")
    history.add_argument("--category", choices=("datacenter", "all"), default="datacenter",
                         help="datacenter parts only, or consumer, workstation, edge and SoC parts too")
    history.add_argument("--width", type=_whole("--width", 40, 400), default=100, help="chart width (columns)")
    history.add_argument("--height", type=_whole("--height", 10, 200), default=24, help="chart height (rows)")
    history.add_argument("--format", choices=("text", "json"), default="text",
                         help="json: schema_version, metric, baseline, endpoint, devices, growth, trend, "
                         "claim_applies, claim_checks, close_pairs")

    present = sub.add_parser("present", help="talk mode: live slides over the explorer (built-in deck by default)")
    present.add_argument("deck", nargs="?", metavar="DECK",
                         help="a deck, TOML or Markdown (.md) (default: 'The memory wall'; with --presenter: the "
                         "running talk's deck)")
    present.add_argument("--presenter", action="store_true",
                         help="the presenter's screen (notes, next slide, time) for a second terminal: follows and "
                         "drives the audience screen started as usual")
    present.add_argument("--export", nargs="+", metavar=("FORMAT", "PATH"),
                         help="instead of presenting: 'markdown' (handout on stdout), 'svg DIR' (one SVG per "
                         "slide), 'html FILE' (one self-contained page: the SVGs and the notes)")
    present.add_argument("--size", default="120x36", metavar="COLSxROWS",
                         help="terminal size the SVG and HTML exports are drawn at (default 120x36)")

    serve = sub.add_parser("serve", help="serve the explorer to web browsers (needs the [serve] extra)",
                           formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (anything but loopback is reachable from the network)")
    serve.add_argument("--port", type=_whole("--port", 1, 65535), default=8000, help="TCP port")
    serve.add_argument("--present", action="store_true", help="serve the talk (roofline present) instead")
    from roofline.tui.cli.serve_command import DEFAULT_MAX_SESSIONS

    serve.add_argument("--max-sessions", type=_whole("--max-sessions", 1, 1000), default=DEFAULT_MAX_SESSIONS,
                       metavar="N",
                       help="browser sessions open at once (each runs an explorer process); beyond it a tab is told "
                       "the server is full")
    serve.add_argument("--public-url", metavar="URL",
                       help="the address browsers use, if not http://HOST:PORT (an SSH tunnel, a proxy)")

    validate = sub.add_parser("validate", help="compare expected and bound with published measurements (CSV)")
    validate.add_argument("file", metavar="FILE", nargs="?", help="CSV: id, hardware, tp, pp, model, weights, kv, "
                          "batch, prompt, output, metric, value")
    validate.add_argument("--format", choices=("text", "json", "markdown"), default="text",
                          help="output format; json: schema_version, summary, by_family, by_metric, rows, skipped; "
                          "markdown: the README's accuracy tables (in-sample, leave-one-family-out, -source-out)")
    validate.add_argument("--holdout", choices=("family", "source", "both"), default=None,
                          help="also score each source family (or source document, or both) with the fitted factors "
                          "refitted without it")
    validate.add_argument("--engine", default=None, metavar="ENGINE",
                          help="score every row with this engine instead of the row's engine column")
    from roofline.tui.cli.validate_bench import add_bench_flags

    add_bench_flags(validate)

    calibrate = sub.add_parser("calibrate",
                               help="back-solve this box's efficiency from a measured decode speed")
    calibrate.set_defaults(command_inputs=add_scenario_flags(calibrate, only=(
        "hardware_id", "model_ref", "batch", "prompt_tokens", "output_tokens", "tp", "pp", "weights", "activations",
        "kv")))
    measured = calibrate.add_mutually_exclusive_group(required=True)
    measured.add_argument("--measured-tokens-per-s", type=_positive("--measured-tokens-per-s"), metavar="X",
                          help="measured decode tokens/s per sequence (1 / inter-token latency)")
    measured.add_argument("--measured-itl-ms", type=_positive("--measured-itl-ms"), metavar="MS",
                          help="measured inter-token latency (mean decode step), ms")
    calibrate.add_argument("--save", action="store_true", help="store the result in a user hardware preset")
    calibrate.add_argument("--force", action="store_true", help="with --save: replace an existing user preset")
    calibrate.add_argument("--format", choices=("text", "json"), default="text",
                           help="output format (default: text); json: schema_version, hardware, model, "
                           "measured_step_s, expected_step_s_before, parameter, value, reason, saved")

    from roofline.tui.cli.detect import add_detect_parser
    from roofline.tui.cli.measure import add_measure_parser
    from roofline.tui.cli.plan import add_plan_parser

    add_detect_parser(sub)
    add_measure_parser(sub)
    add_completion_parser(sub)
    add_plan_parser(sub)

    presets = sub.add_parser("presets", help="list hardware and model presets (capacity, bandwidth, ridge, peaks; "
                             "layers, KV bytes per token, context)")
    presets.add_argument("kind", nargs="?", choices=("hardware", "models"), help="only this kind")
    presets.add_argument("--sources", action="store_true", help="a source line under each preset")
    presets.add_argument("--format", choices=("text", "json"), default="text",
                         help="output format; json: schema_version; hardware: id, name, vendor, year, "
                         "memory_capacity_bytes, mem_bw_bytes_per_s, dense_peak_flops_per_s, peak_16bit_flops_per_s, "
                         "peak_8bit_flops_per_s, ridge_flops_per_byte, source, sources, file; models: id, name, "
                         "params, active_params, layers, kv_bytes_per_token_bf16, max_context_tokens, source, file")
    return parser


def _scenario_from_args(args: argparse.Namespace):
    """The scenario of ``--scenario`` and the flags (registry defaults for the rest), built as the explorer
    builds it."""
    from roofline.presets import load_hardware, resolve_model
    from roofline.tui.inputs.form import FormError, scenario_from

    form = form_from_args(args, scenario_file_form(args)[0])
    hardware = load_preset("--hardware", "hardware", form.hardware_id, load_hardware)
    model = load_preset("--model", "models", form.model_ref, resolve_model)
    try:
        return scenario_from(form, hardware, model)
    except FormError as err:
        raise UsageError(f"{flag_for(err.field)}: {err.message}") from None


def _run_report(args: argparse.Namespace) -> int:
    from roofline.models.report import scenario_report

    scenario = _scenario_from_args(args)
    report = scenario_report(scenario, include_ops=not args.no_ops)
    from roofline.tui.views.precision_text import scenario_precision_warning

    precision_warning = scenario_precision_warning(scenario)
    if precision_warning is not None:  # first among the warnings
        report["warnings"] = [precision_warning, *report["warnings"]]
    if args.format == "json":
        print(json.dumps(report, indent=2))
    elif args.format == "markdown":
        from roofline.tui.views.report_text import render_markdown

        print(without_controls(render_markdown(report)), end="")  # names come from user files: cleaned again
    else:
        from roofline.tui.views.report_text import render_text

        print(without_controls(render_text(report)))
    return 0


def _run_calibrate(args: argparse.Namespace) -> int:
    from roofline.models.calibration import calibrate

    scenario = _scenario_from_args(args)
    step_s = args.measured_itl_ms / 1e3 if args.measured_itl_ms else 1.0 / args.measured_tokens_per_s
    result = calibrate(scenario, step_s)
    if args.format == "json":
        saved = _save_calibration(args, scenario, step_s, result) if args.save and result.value is not None else None
        print(json.dumps({"schema_version": CALIBRATE_SCHEMA_VERSION, "hardware": scenario.hardware.id,
                          "model": scenario.model.id, "measured_step_s": step_s,
                          "expected_step_s_before": result.expected_step_s_before, "parameter": result.parameter,
                          "value": result.value, "reason": result.reason,
                          "saved": None if saved is None else str(saved)}, indent=2))
        return 1 if result.value is None else 0
    print(f"{scenario.model.name} on {scenario.hardware.name}: measured step {step_s * 1e3:.3f} ms, "
          f"expected before {result.expected_step_s_before * 1e3:.3f} ms")
    if result.value is None:
        print(f"no calibration: {result.reason}")
        return 1
    print(f"{result.parameter} that reproduces it: {result.value:.3f}")
    if args.save:
        print(f"saved: {_save_calibration(args, scenario, step_s, result)}")
    return 0


def _save_calibration(args: argparse.Namespace, scenario, step_s: float, result):
    from roofline.presets.user_presets import save_calibrated_hardware

    batch = scenario.batching.batch_size
    note = f"measured decode step {step_s * 1e3:.3f} ms for {scenario.model.id} batch {batch}"
    try:
        return save_calibrated_hardware(scenario.hardware.id, {result.parameter: result.value}, note,
                                        force=args.force)
    except (FileExistsError, OSError) as err:
        raise UsageError(f"--save: {err}") from None


def _run_presets(args: argparse.Namespace) -> int:
    from roofline.tui.cli.presets import run_presets

    return run_presets(args)


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

            explorer_args = explorer_args_from_namespace(args)
            if args.present and explorer_args:
                raise UsageError(f"--present: the talk's scenarios come from its deck; {explorer_args[0].split('=')[0]}"
                                 " and the other explorer flags do not apply to it")
            return run_serve(args.host, args.port, explorer_args, args.present, public=args.public_url,
                             max_sessions=args.max_sessions)
        if args.command == "present":
            from roofline.tui.cli.present import run_present

            return run_present(args)
        if args.command == "calibrate":
            return _run_calibrate(args)
        if args.command == "validate":
            from roofline.tui.cli.validate_bench import bench_requested, run_validate_bench

            if bench_requested(args):
                return run_validate_bench(args)
            from roofline.tui.cli.validate import run_validate

            return run_validate(args)
        if args.command == "measure":
            from roofline.tui.cli.measure import run_measure

            return run_measure(args)
        if args.command == "detect":
            from roofline.tui.cli.detect import run_detect

            return run_detect(args)
        if args.command == "completion":
            from roofline.tui.cli.completion import run_completion

            return run_completion(args, build_parser)
        if args.command == "history":
            from roofline.tui.cli.history import run_history

            return run_history(args)
        if args.command == "plan":
            from roofline.tui.cli.plan import run_plan

            return run_plan(args)
    except BrokenPipeError:  # `roofline report | head`
        return 0
    except (UsageError, ValueError, OSError) as err:  # OSError: a save refused or failed (SaveError), a full disk
        print(f"roofline {args.command}: error: {one_line(_os_error_text(err))}", file=sys.stderr)
        return EXIT_USAGE
    try:
        form, scenario_file, catalog = _explorer_form(args)
        from roofline.tui.cli.validate_bench import explorer_engine_args

        engine_url, measured_runs = explorer_engine_args(args)
    except (UsageError, ValueError) as err:
        print(f"roofline: error: {one_line(str(err))}", file=sys.stderr)
        return EXIT_USAGE
    from roofline.tui.app import run_explorer

    # no --hardware and no scenario file: open on the local GPUs when there are any
    return run_explorer(form, scenario_file=scenario_file, catalog=catalog,
                        detect_hardware=args.hardware_id is None and not args.scenario,
                        engine_url=engine_url, measured_runs=measured_runs)


def _os_error_text(err: Exception) -> str:
    """An error's one line; an ``OSError`` with a file name says which file (``[Errno 28] ...`` becomes
    ``/dev/full: No space left on device``)."""
    if isinstance(err, OSError) and not isinstance(err, UsageError) and err.strerror and type(err).__str__ is \
            OSError.__str__:
        name = err.filename if err.filename is not None else ""
        return f"{name}: {err.strerror}" if name else err.strerror
    return str(err)


def _explorer_form(args: argparse.Namespace):
    """The explorer's starting form from the flags; checked before the full screen opens."""
    from roofline.presets import load_catalog
    from roofline.tui.inputs.form import FormError, ScenarioForm, build_scenario
    from roofline.tui.preferences import load_preferences

    prefs, _ = load_preferences()  # a broken file is reported by the explorer itself
    catalog = load_catalog()
    form = ScenarioForm(**_preferred_ids(prefs, catalog))
    scenario_file = None  # a file given is applied to the form here
    if args.scenario:
        form, from_file = scenario_file_form(args, ScenarioForm())
    else:
        from_file = frozenset()  # file keys the scenario file set
    form = form_from_args(args, form)
    try:
        form = _canonical_ids(form, catalog)
        build_scenario(form, catalog)
    except FormError as err:
        from roofline.tui.inputs.file_values import file_key

        key = file_key(input_for_model_error(err.field))
        if key in from_file and getattr(args, input_for_model_error(err.field), None) is None:
            # the file's value, not a flag the user did not pass: name the file and its key
            raise UsageError(f"--scenario: {args.scenario}: {key}: {err.message}") from None
        raise UsageError(f"{flag_for(err.field)}: {err.message}{_id_hint(err.field, form, catalog)}") from None
    return form, scenario_file, catalog


def _preferred_ids(prefs, catalog) -> dict[str, str]:
    """The preferences' hardware and model as form fields; one that is no longer a preset is a one-line warning
    and left out, so the explorer opens on the default."""
    from roofline.presets.ids import match_id
    from roofline.tui.preferences import preferences_path

    chosen: dict[str, str] = {}
    for field, key, value, ids in (("hardware_id", "hardware", prefs.hardware, catalog.hardware),
                                   ("model_ref", "model", prefs.model, catalog.models)):
        if not value:
            continue
        if match_id(value, ids) is None:
            print(one_line(f"roofline: warning: {preferences_path()}: {key} {value!r} is not a preset (see roofline "
                           f"presets); opening on the default"), file=sys.stderr)
            continue
        chosen[field] = value
    return chosen


def _canonical_ids(form, catalog):
    """``H100-SXM`` -> ``h100-sxm``, ``Llama-3.1-8B`` -> ``llama-3.1-8b``; paths and unknown ids unchanged."""
    from dataclasses import replace

    from roofline.presets.ids import match_id

    return replace(form, hardware_id=match_id(form.hardware_id, catalog.hardware) or form.hardware_id,
                   model_ref=match_id(form.model_ref, catalog.models) or form.model_ref)


def _id_hint(field: str, form, catalog) -> str:
    from roofline.presets.ids import short_name_matches, suggest_ids

    if field not in ("hardware_id", "model_ref"):
        return ""
    ids = catalog.hardware if field == "hardware_id" else catalog.models
    ref = form.hardware_id if field == "hardware_id" else form.model_ref
    several = short_name_matches(ref, ids)
    if len(several) > 1:  # h100: the SXM, PCIe or NVL part
        return f" ({ref!r} could mean several presets: did you mean {', '.join(several)}?)"
    near = suggest_ids(ref, ids)
    return f" (did you mean {', '.join(near)}?)" if near else ""


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
