"""The scenario's command-line flags, generated from the input registry, and the form they describe.

Every flag defaults to None (not given), so that a ``--scenario`` file's values are kept unless a flag overrides
them; the registry's defaults fill the rest. Values are checked here against the same ranges as the explorer's
fields, so a bad value exits 2 with one line before anything opens.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import replace

from roofline.tui.cli.completion import completion_ids
from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.inputs.limits import check_number
from roofline.tui.inputs.registry import INPUTS, ScenarioInput


def _number_type(spec: ScenarioInput):
    def parse(text: str):
        cleaned = text.strip().replace("_", "").replace(",", "")
        try:
            value = float(cleaned)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if spec.whole and math.isfinite(value) and value != int(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
        try:
            return check_number(spec.name, value)
        except ValueError as err:
            raise argparse.ArgumentTypeError(f"{text!r}: {err}") from None

    parse.__name__ = spec.flag or spec.name  # argparse names the type in "invalid <name> value"
    return parse


def _choice_type(spec: ScenarioInput):
    def parse(text: str) -> str:
        value = text.lower()
        if value not in spec.choices:
            what = "dtype" if spec.name not in ("engine", "topology") else spec.name
            raise argparse.ArgumentTypeError(f"unknown {what} {text!r} (choose from {', '.join(spec.choices)})")
        return value

    return parse


def _help(spec: ScenarioInput) -> str:
    if spec.kind == "dtype":
        default = spec.empty_means if spec.default is None else spec.default
        return f"{spec.help} ({' '.join(spec.choices)}; default: {default})"
    if spec.kind == "bool":
        return f"{spec.help} (default: {'on' if spec.default else 'off'})"
    if spec.optional:
        return f"{spec.help} (default: {spec.empty_means})"
    return f"{spec.help} (default: {spec.default})"


def add_scenario_flags(group, *, only: tuple[str, ...] | None = None) -> None:
    """Add every registry input that has a flag (or the named ones) to an argparse parser or group."""
    for spec in INPUTS:
        if spec.flag is None or (only is not None and spec.name not in only):
            continue
        kwargs: dict = {"dest": spec.name, "default": None, "help": _help(spec)}
        if spec.kind == "bool":
            group.add_argument(spec.flag, action=argparse.BooleanOptionalAction, **kwargs)
            continue
        if spec.kind in ("int", "float"):
            kwargs["type"] = _number_type(spec)
            kwargs["metavar"] = spec.flag.lstrip("-").split("-")[0].upper()
        elif spec.kind == "dtype":
            kwargs["type"] = _choice_type(spec)
            kwargs["metavar"] = spec.name.upper() if spec.name in ("engine", "topology") else "DTYPE"
        else:
            kwargs["metavar"] = "ID|PATH" if spec.name == "model_ref" else "ID"
            kwargs["choices"] = completion_ids("models" if spec.name == "model_ref" else "hardware")
        group.add_argument(spec.flag, **kwargs)


def form_from_args(args: argparse.Namespace, base: ScenarioForm | None = None) -> ScenarioForm:
    """``base`` (the registry's defaults when None) with every flag the user gave."""
    given = {spec.name: getattr(args, spec.name) for spec in INPUTS
             if spec.flag and getattr(args, spec.name, None) is not None}
    return replace(base or ScenarioForm(), **given)
