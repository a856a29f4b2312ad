"""The scenario's command-line flags, generated from the input registry, and the form they describe.

Every flag defaults to None (not given), so that a ``--scenario`` file's values are kept unless a flag overrides
them; the registry's defaults fill the rest. Values are checked here against the same ranges as the explorer's
fields, so a bad value exits 2 with one line before anything opens.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

from roofline.models.engines import unknown_engine_message
from roofline.presets.number_text import parse_number_text, shown_text
from roofline.tui.cli.completion import completion_ids
from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.inputs.limits import check_number, number_text
from roofline.tui.inputs.registry import INPUTS, ScenarioInput


def _number_type(spec: ScenarioInput):
    def parse(text: str):
        try:  # the one number reader (presets/number_text.py): 1,5 is refused, not read as 15
            value = parse_number_text(text)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
        if spec.whole and math.isfinite(value) and value != int(value):
            raise argparse.ArgumentTypeError(f"{shown_text(text)} is not a whole number")
        try:
            return check_number(spec.name, value)
        except ValueError as err:
            raise argparse.ArgumentTypeError(f"{shown_text(text)}: {err}") from None

    parse.__name__ = spec.flag or spec.name  # argparse names the type in "invalid <name> value"
    return parse


def _choice_type(spec: ScenarioInput):
    def parse(text: str) -> str:
        value = text.lower()
        if value not in spec.choices:
            if spec.name == "engine":  # the engine profiles: the closest ids, and unknown
                raise argparse.ArgumentTypeError(unknown_engine_message(text))
            what = "dtype" if spec.group == "precision" else spec.label
            raise argparse.ArgumentTypeError(f"unknown {what} {text!r} (choose from {', '.join(spec.choices)})")
        return value

    return parse


@dataclass(frozen=True, slots=True)
class ListFlag:
    """How a flag takes ``X`` or ``a,b,c``: each value checked as the input's own flag checks it;
    ``unique_sorted`` (values evaluated in order, each once), ``at_most`` values, ``keep_words`` that stand for
    None (``preset``: a device keeps its own value)."""

    unique_sorted: bool = False
    at_most: int | None = None
    keep_words: tuple[str, ...] = ()


def _list_type(spec: ScenarioInput, how: ListFlag, one):
    def parse(text: str) -> list:
        parts = text.split(",")
        if any(not part.strip() for part in parts):
            raise argparse.ArgumentTypeError(f"{text!r}: give {spec.flag_metavar} or a,b,c")
        values = [None if part.strip().lower() in how.keep_words else one(part) for part in parts]
        if how.unique_sorted:
            values = sorted(set(values))
        if how.at_most is not None and len(values) > how.at_most:
            raise argparse.ArgumentTypeError(f"at most {how.at_most:,} values, got {len(values):,}")
        return values

    parse.__name__ = spec.flag or spec.name
    return parse


def _span(spec: ScenarioInput) -> str:
    """The range every command checks, as --help says it: ``1 to 1,048,576``."""
    return f"{number_text(spec.low)} to {number_text(spec.high)}"


def _help(spec: ScenarioInput) -> str:
    if spec.kind == "dtype":
        default = spec.empty_means if spec.default is None else spec.default
        return f"{spec.help} ({' '.join(spec.choices)}; default: {default})"
    if spec.kind == "bool":
        return f"{spec.help} (default: {'on' if spec.default else 'off'})"
    if spec.kind not in ("int", "float"):
        return f"{spec.help} (default: {spec.default})"
    span = _span(spec)
    if spec.optional:
        return f"{spec.help} ({span}; default: {spec.empty_means})"
    return f"{spec.help} ({span}; default: {number_text(spec.default)})"


def add_scenario_flags(group, *, only: tuple[str, ...] | None = None, dest_prefix: str = "",
                       lists: Mapping[str, ListFlag] | None = None,
                       helps: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Add every registry input that has a flag (or the named ones) to an argparse parser or group; the names of
    the inputs added. ``dest_prefix`` keeps the top-level parser's values apart from a subcommand's (main.py
    merges them, so a flag before the command is not overwritten by the command's own default).
    ``lists``: inputs whose flag takes ``X`` or ``a,b,c`` here (a command comparing several values); ``helps``: a
    command's own words for an input (its range and type stay the registry's)."""
    added: list[str] = []
    lists, helps = lists or {}, helps or {}
    for spec in INPUTS:
        if spec.flag is None or (only is not None and spec.name not in only):
            continue
        added.append(spec.name)  # a list flag too: one value before the command is a list of one
        kwargs: dict = {"dest": dest_prefix + spec.name, "default": None, "help": _help(spec)}
        if spec.kind == "bool":
            group.add_argument(spec.flag, action=argparse.BooleanOptionalAction, **kwargs)
            continue
        kwargs["metavar"] = spec.flag_metavar
        if spec.kind in ("int", "float"):
            kwargs["type"] = _number_type(spec)
        elif spec.kind == "dtype":
            kwargs["type"] = _choice_type(spec)
        else:
            kwargs["choices"] = completion_ids(spec.preset_kind)
        if spec.name in lists:
            kwargs["type"] = _list_type(spec, lists[spec.name], kwargs["type"])
            kwargs["metavar"] = f"{spec.flag_metavar}|a,b,c"
        if spec.name in helps:  # the command's words, the registry's range
            span = f" ({_span(spec)})" if spec.kind in ("int", "float") else ""
            kwargs["help"] = helps[spec.name] + span
        group.add_argument(spec.flag, **kwargs)
    return tuple(added)


def form_from_args(args: argparse.Namespace, base: ScenarioForm | None = None) -> ScenarioForm:
    """``base`` (the registry's defaults when None) with every flag the user gave."""
    given = {spec.name: getattr(args, spec.name) for spec in INPUTS  # a list (plan's a,b,c) is not one value
             if spec.flag and getattr(args, spec.name, None) is not None and not isinstance(getattr(args, spec.name),
                                                                                              list)}
    return replace(base or ScenarioForm(), **given)
