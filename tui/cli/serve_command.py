"""What each ``roofline serve`` session runs: the explorer's command line, with the user's explorer flags passed
through as one word each. No Textual, no textual-serve."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

# sessions at once (each is an explorer process of about 100 MB): a tab beyond it gets "the server is full"
DEFAULT_MAX_SESSIONS = 8


def build_command(explorer_args: list[str], present: bool) -> str:
    """The shell command textual-serve runs for each browser session.

    ``exec <python> -m roofline.tui.cli [explorer args]``, or with ``present`` the ``present`` subcommand after
    the explorer args (they are top-level options, so argparse needs them before the subcommand). Every word is
    shell-quoted: textual-serve hands the string to ``/bin/sh``. ``exec`` makes the shell become the explorer,
    so the process textual-serve holds (and this module signals) is the explorer itself.
    """
    words = [sys.executable, "-m", "roofline.tui.cli", *explorer_args]
    if present:
        words.append("present")
    return "exec " + shlex.join(words)


def explorer_args_from_namespace(args: argparse.Namespace) -> list[str]:
    """The explorer flags the user gave (``roofline --hardware X serve``), as words to pass through.

    Every value travels as one word ``--flag=VALUE``, so a value that starts with ``-`` (``--model -x``) is not
    taken for a flag; on/off flags become ``--flag`` or ``--no-flag``. The flags are the input registry's, so a
    new input passes through without a change here. A ``--scenario`` path is made absolute so that it does not
    depend on the server's working directory.
    """
    from roofline.tui.inputs.registry import INPUTS

    words: list[str] = []
    for spec in INPUTS:
        value = getattr(args, spec.name, None) if spec.flag else None
        if value is None:
            continue
        if spec.kind == "bool":
            words.append(spec.flag if value else "--no-" + spec.flag.removeprefix("--"))
        else:
            words.append(f"{spec.flag}={value}")
    scenario = getattr(args, "scenario", None)
    if scenario is not None:
        words.append(f"--scenario={_absolute(scenario)}")
    return words


def _absolute(scenario: str) -> Path:
    """The scenario path, ``~`` expanded and absolute; ``ValueError`` naming ``--scenario`` for a path the OS
    refuses (``~nouser``, a name over 255 bytes, a NUL, a loop of links)."""
    from roofline.presets.safe_files import FileRefusedError, user_path

    try:
        return user_path(scenario, what="scenario file").resolve()
    except FileRefusedError as err:
        raise ValueError(f"--scenario: {err}") from None
    except (OSError, RuntimeError) as err:  # resolve(): a loop of links (RuntimeError before Python 3.13)
        raise ValueError(f"--scenario: {scenario!r}: {err}") from None
