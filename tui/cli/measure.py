"""``roofline measure``: this machine's real copy bandwidth and matmul FLOP/s, optionally saved as a preset.

Progress goes to stderr, results to stdout (a table, or JSON with ``--format json``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import Any

from roofline.tui.cli.completion import completion_ids

EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
_PRESET_ID = re.compile(r"[a-z0-9][a-z0-9._-]{0,199}")  # 200 at most: the file name stays under 255 bytes
# --format json: bumped when a key is renamed or removed or its meaning changes (adding one is not a bump).
MEASURE_SCHEMA_VERSION = 1


# On one H200 (benchmarks/gpu-h200-2026-11-30.md) --quick read bf16 GEMM 6 % and fp8 16 % below a full run.
QUICK_SAVE_WARNING = ("note: --quick sizes run below what the device sustains (an H200 read bf16 GEMM 6 % low); "
                      "save a preset from a full run")


def _device(text: str) -> tuple[str, int]:
    """``auto``, ``cpu``, ``cuda``, ``cuda:N`` (``rocm``/``rocm:N`` alike: ROCm runs through torch.cuda)."""
    value = text.strip().lower()
    kind, _, index = value.partition(":")
    if kind in ("auto", "cpu") and not index:
        return kind, 0
    if kind in ("cuda", "rocm", "gpu") and (not index or index.isdigit()):
        return "cuda", int(index or 0)
    raise argparse.ArgumentTypeError(f"{text!r} is not a device (auto, cpu, cuda or cuda:N)")


def _dtypes(text: str) -> tuple[str, ...]:
    from roofline.tui.probe.measure import MATMUL_DTYPES

    names = tuple(part.strip().lower() for part in text.split(",") if part.strip())
    unknown = [name for name in names if name not in MATMUL_DTYPES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown dtype {', '.join(unknown) or text!r} "
                                         f"(choose from {', '.join(MATMUL_DTYPES)})")
    return names


def _preset_id(text: str) -> str:
    if not _PRESET_ID.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a preset id (lowercase letters, digits, '-', '_', '.')")
    return text


def add_measure_parser(sub: Any) -> argparse.ArgumentParser:
    """Add ``measure`` to a subparsers object; returns the new parser."""
    parser = sub.add_parser(
        "measure", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        help="measure this machine's copy bandwidth and matmul FLOP/s (--save: as a hardware preset)",
        description="Measure real ceilings: copy bandwidth (2 x bytes / best time) and square-GEMM FLOP/s "
                    "(2 n^3 / best time) per dtype, on the host (numpy) or a GPU (PyTorch or CuPy; ROCm too).")
    parser.add_argument("--device", type=_device, default=("auto", 0), metavar="auto|cpu|cuda[:N]",
                        help="what to measure (auto: the first GPU if PyTorch or CuPy sees one, else the CPU)")
    parser.add_argument("--backend", choices=("auto", "torch", "cupy"), default="auto",
                        help="GPU library (auto: PyTorch, then CuPy)")
    parser.add_argument("--dtypes", type=_dtypes, metavar="LIST",
                        help="comma-separated matmul dtypes (default: cpu fp32,fp64; gpu fp32,tf32,bf16,fp16,fp8)")
    parser.add_argument("--quick", action="store_true", help="small sizes and few repeats (seconds; rough figures)")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="output format; json: schema_version, the measurement (device, kind, host, date, "
                        "mem_bw_bytes_per_s, flops_per_s_by_dtype, skipped, method) and preset {id, "
                        "measured_over_spec} or null")
    parser.add_argument("--hardware", metavar="ID", choices=completion_ids("hardware"),
                        help="the preset this device is: shows measured/spec; --save then stores a copy with "
                             "measured [achievable] fractions (GPUs are matched automatically where possible)")
    parser.add_argument("--save", action="store_true", help="store the result as a user hardware preset")
    parser.add_argument("--id", dest="preset_id", type=_preset_id, metavar="ID",
                        help="with --save: the new preset's id (default <preset>-measured-<host> or "
                             "<host>-cpu-measured)")
    parser.add_argument("--force", action="store_true", help="with --save: replace an existing user preset")
    return parser


class _CliError(Exception):
    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code


def _one_line(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _open_backend(args: argparse.Namespace):
    from roofline.tui.probe.measure import MeasureError, NumpyBackend, open_gpu_backend

    kind, index = args.device
    if kind == "cpu":
        return NumpyBackend()
    try:
        return open_gpu_backend(index, args.backend)
    except MeasureError as err:
        if kind == "cuda":
            raise _CliError(str(err)) from None
        _progress(f"no GPU to measure ({err}); measuring the CPU")
        return NumpyBackend()


def _matched_preset_id(name: str, memory_bytes: int | None) -> str | None:
    """The preset for a GPU by name and memory (:func:`roofline.tui.probe.match.match_part`); None, saying why on
    stderr, when there is no sure one."""
    from roofline.presets.loader import preset_ids

    try:
        from roofline.tui.probe.match import match_part

        found = match_part(name, memory_bytes, preset_ids("hardware"))
    except Exception as err:  # the matcher missing or failing must not stop a measurement
        _progress(f"no preset match ({_one_line(err)})")
        return None
    if found.preset_id is None:
        _progress(f"no preset match: {found.reason}")
    return found.preset_id


def _base_preset(args: argparse.Namespace, info: Any):
    """(id, Hardware) of the preset this device is (``--hardware`` or a GPU match), or (None, None)."""
    from roofline.presets import load_hardware

    preset_id = args.hardware
    if preset_id is None and info.kind != "cpu":
        preset_id = _matched_preset_id(info.name, info.memory_bytes)
        if preset_id:
            _progress(f"matched {info.name} to preset {preset_id} (override with --hardware ID)")
    if preset_id is None:
        return None, None
    try:
        return preset_id, load_hardware(preset_id)
    except KeyError:
        if args.hardware is None:
            return None, None
        raise _CliError(f"--hardware: unknown hardware preset {preset_id!r} (see: roofline presets hardware)") from None
    except ValueError as err:  # a broken preset file, or a user presets folder the OS refuses
        if args.hardware is None:  # the user named no preset: never blame --hardware; measure without one
            _progress(f"preset {preset_id} not used: {_one_line(err)}")
            return None, None
        raise _CliError(f"--hardware: {err}") from None


def _save_target(args: argparse.Namespace, info: Any, base_id: str | None):
    """Where ``--save`` will write, checked before any time is spent measuring: a presets folder the OS refuses
    (``~nouser``, a name over 255 bytes, a folder that cannot be searched) or an existing preset without ``--force``
    is a one-line error naming ``--save``."""
    from roofline.presets.loader import PresetFileError
    from roofline.presets.safe_files import clip
    from roofline.presets.user_presets import measured_preset_id, measured_preset_path
    from roofline.tui.probe.measure import host_name

    preset_id = args.preset_id or measured_preset_id(host_name(), info.kind, info.name, base_id)
    try:
        target = measured_preset_path(preset_id)
        os.lstat(target)
    except FileNotFoundError:
        return target
    except PresetFileError as err:
        raise _CliError(f"--save: {err}") from None
    except OSError as err:  # EACCES on a folder, ENAMETOOLONG, ENOTDIR
        raise _CliError(f"--save: {clip(str(target), 200)}: cannot save: {err.strerror or err}") from None
    if not args.force:
        raise _CliError(f"--save: {target} exists (use --force to replace it)")
    return target


def _ceilings(measurement: Any, quick: bool):
    from roofline.presets.user_presets import MeasuredCeilings

    copy, matmul = measurement.method["copy"], measurement.method["matmul"]
    sizes = sorted(set(matmul["n_by_dtype"].values()))
    method = (f"copy {copy['bytes_per_array'] / 1024**2:g} MiB best of {copy['repeats']}; GEMM n="
              f"{'/'.join(map(str, sizes)) or '-'} best of {matmul['repeats']}; {measurement.method['library']}"
              + ("; --quick" if quick else ""))
    return MeasuredCeilings(device_name=measurement.device, vendor=measurement.vendor, kind=measurement.kind,
                            host=measurement.host, date=measurement.date,
                            mem_bw_bytes_per_s=measurement.mem_bw_bytes_per_s,
                            flops_per_s_by_dtype=measurement.flops_per_s_by_dtype,
                            memory_bytes=measurement.memory_bytes, method=method)


def _text_report(measurement: Any, fractions: dict[str, float], base_name: str | None) -> str:
    from roofline.tui.views.formatting import gib, si

    method = measurement.method
    copy = method["copy"]
    lines = [f"device    {measurement.device} ({measurement.kind}, {method['library']})",
             f"host      {measurement.host}  {measurement.date}"]
    if measurement.memory_bytes:
        lines.append(f"memory    {gib(measurement.memory_bytes)}")
    if base_name:
        lines.append(f"preset    {base_name} (measured / spec in the last column)")

    def of_spec(key: str) -> str:
        return f"{fractions[key] * 100:5.1f} %" if key in fractions else ""

    lines.append("")
    lines.append(f"{'copy bandwidth':16}{si(measurement.mem_bw_bytes_per_s, 'B/s'):>14}   "
                 f"{copy['bytes_per_array'] / 1024**2:g} MiB, best of {copy['repeats']}  {of_spec('mem_bw')}".rstrip())
    for dtype, flops_per_s in measurement.flops_per_s_by_dtype.items():
        n = method["matmul"]["n_by_dtype"][dtype]
        lines.append(f"{'matmul ' + dtype:16}{si(flops_per_s, 'FLOP/s'):>14}   "
                     f"n={n}, best of {method['matmul']['repeats']}  {of_spec(dtype)}".rstrip())
    for dtype, reason in measurement.skipped.items():
        lines.append(f"{'matmul ' + dtype:16}{'skipped':>14}   {reason}")
    return "\n".join(lines)


def _check_presets_folder() -> None:
    """``--save``: the user presets folder must be a path the OS takes (checked before matching reads it)."""
    from roofline.presets.loader import PresetFileError, user_presets_dir

    try:
        user_presets_dir()
    except PresetFileError as err:
        raise _CliError(f"--save: {err}") from None


def _measure(args: argparse.Namespace) -> int:
    from roofline.presets.user_presets import save_measured_hardware, spec_fractions
    from roofline.tui.probe.measure import default_settings, measure

    if (args.preset_id or args.force) and not args.save:
        raise _CliError("--id and --force only apply with --save")
    if args.save:
        _check_presets_folder()
    backend = _open_backend(args)
    try:
        info = backend.info
        base_id, base = _base_preset(args, info)
        target = _save_target(args, info, base_id) if args.save else None  # refused before measuring
        settings = default_settings(info.kind, quick=args.quick, dtypes=args.dtypes)
        _progress(f"measuring {info.name} ({info.kind}) with {info.library}")
        measurement = measure(backend, settings, _progress)
    finally:
        backend.close()
    ceilings = _ceilings(measurement, args.quick)
    fractions = spec_fractions(base, ceilings) if base is not None else {}
    if args.format == "json":
        out = {"schema_version": MEASURE_SCHEMA_VERSION, **measurement.to_json()}
        out["preset"] = {"id": base_id, "measured_over_spec": fractions} if base_id else None
        print(json.dumps(out, indent=2))
    else:
        print(_text_report(measurement, fractions, base.name if base is not None else None))
    if target is not None:
        try:
            path = save_measured_hardware(ceilings, base_id=base_id, preset_id=target.stem, force=args.force)
        except FileExistsError as err:
            raise _CliError(f"--save: {err}") from None
        except (OSError, ValueError) as err:
            raise _CliError(f"--save: {err}", EXIT_FAILURE) from None
        print(f"saved: {path} (use it: roofline --hardware {path.stem})",
              file=sys.stderr if args.format == "json" else sys.stdout)
        if args.quick:
            _progress(QUICK_SAVE_WARNING)
    return 0


def run_measure(args: argparse.Namespace) -> int:
    """Run ``roofline measure``; one-line errors on stderr (exit 2 usage, 1 failure), Ctrl-C exits 130."""
    from roofline.tui.probe.measure import MeasureError

    try:
        return _measure(args)
    except _CliError as err:
        print(f"roofline measure: error: {err}", file=sys.stderr)
        return err.code
    except (MeasureError, RuntimeError) as err:  # RuntimeError: PyTorch's and CuPy's errors (out of memory...)
        print(f"roofline measure: error: {_one_line(err)}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print("roofline measure: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except MemoryError:
        print("roofline measure: error: out of memory (try --quick)", file=sys.stderr)
        return EXIT_FAILURE
    except OSError as err:  # a file or folder the OS refused where no flag is to blame
        print(f"roofline measure: error: {_one_line(err)}", file=sys.stderr)
        return EXIT_FAILURE
