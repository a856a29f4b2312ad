"""``roofline detect``: list the local accelerators and the hardware preset that matches them (text or JSON).

Finding nothing is a normal answer (exit 0): a laptop, a box without drivers, or ``ROOFLINE_NO_DETECT=1``. What the
tools say is never trusted: ``--timeout`` bounds the whole detection, each tool's output is capped at 1 MiB, and every
printed line is stripped of escape sequences and control characters.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from roofline.tui.inputs.limits import FIELD_LIMITS
from roofline.tui.probe.detect import DEFAULT_TIMEOUT_S, Detection, detect_accelerators
from roofline.tui.probe.match import format_gib
from roofline.tui.probe.tool_run import MAX_TOOL_OUTPUT_BYTES, printable

MAX_TP = int(FIELD_LIMITS["tp"][1])
# --format json: bumped when a key is renamed or removed or its meaning changes (adding one is not a bump).
DETECT_SCHEMA_VERSION = 1


def _timeout(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value <= 600:
        raise argparse.ArgumentTypeError(f"{text!r} must be more than 0 and at most 600 seconds")
    return value


def add_detect_parser(sub) -> argparse.ArgumentParser:
    """Add the ``detect`` subcommand to ``sub`` (the object ``add_subparsers`` returned)."""
    detect = sub.add_parser("detect",
                            help="find local GPUs (NVML, nvidia-smi, amd-smi, rocm-smi) and the matching preset",
                            description="Find the local accelerators and the hardware preset that describes them. "
                            "Set ROOFLINE_NO_DETECT=1 to turn detection off.")
    detect.add_argument("--format", choices=("text", "json"), default="text",
                        help="output format (default text); json: schema_version, devices [index, name, "
                        "memory_bytes], count, preset, preset_reason, source, problems, types")
    detect.add_argument("--timeout", dest="timeout_s", type=_timeout, default=DEFAULT_TIMEOUT_S, metavar="S",
                        help=f"seconds the whole detection may take, every source together (default "
                        f"{DEFAULT_TIMEOUT_S:g}); each tool's output is capped at "
                        f"{MAX_TOOL_OUTPUT_BYTES // 1024**2} MiB")
    return detect


def explorer_hint(detection: Detection) -> str | None:
    """The command that opens the explorer on the detected box, or None when there is no preset."""
    if detection.preset_id is None:
        return None
    tp = min(detection.preset_count, MAX_TP)
    return f"roofline --hardware {detection.preset_id}" + (f" --tp {tp}" if tp > 1 else "")


def detection_json(detection: Detection) -> dict[str, Any]:
    """The JSON contract: schema_version, devices, count, preset, preset_reason, source, problems (+ types, one
    per device type)."""
    return {
        "schema_version": DETECT_SCHEMA_VERSION,
        "devices": [{"index": d.index, "name": d.name, "memory_bytes": d.memory_bytes} for d in detection.devices],
        "count": detection.count,
        "preset": detection.preset_id,
        "preset_reason": detection.preset_reason,
        "source": detection.source,
        "problems": list(detection.problems),
        "types": [{"name": g.name, "memory_bytes": g.memory_bytes, "count": g.count, "preset": g.preset_id,
                   "preset_reason": g.preset_reason} for g in detection.groups],
    }


def detection_text(detection: Detection) -> str:
    """One line per device type, the box's preset when mixed, the explorer command, then any problems."""
    if not detection.devices:
        return printable("no accelerators found: " + "; ".join(detection.problems))
    lines = []
    for group in detection.groups:
        found = f"{group.count} x {group.name} ({format_gib(group.memory_bytes)}) via {detection.source}"
        if group.preset_id:
            lines.append(f"{found} -> preset {group.preset_id}")
        else:
            lines.append(f"{found} -> no preset: {group.preset_reason}")
    if len(detection.groups) > 1:
        lines.append(detection.preset_reason)
    hint = explorer_hint(detection)
    if hint:
        lines.append(f"open it: {hint}")
    lines.extend(f"note: {problem}" for problem in detection.problems)
    return "\n".join(printable(line) for line in lines)  # names are cleaned at the source; this is the backstop


def run_detect(args: argparse.Namespace) -> int:
    """Print the detection as ``args.format`` ("text" or "json"); always exit 0 (nothing found is an answer)."""
    detection = detect_accelerators(timeout_s=getattr(args, "timeout_s", DEFAULT_TIMEOUT_S))
    if args.format == "json":
        print(json.dumps(detection_json(detection), indent=2))
    else:
        print(detection_text(detection))
    return 0
