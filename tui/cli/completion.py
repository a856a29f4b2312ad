"""``roofline completion bash|zsh|fish``: a shell completion script for every command and flag, printed.

The script comes from shtab (static: the shell does not start Python on each TAB). Hardware and model ids
complete from the catalogue as it is when the script is generated; regenerate after adding presets.
"""

from __future__ import annotations

import argparse

SHELLS = ("bash", "zsh", "fish")
INSTALL_HELP = {
    "bash": "roofline completion bash > ~/.local/share/bash-completion/completions/roofline",
    "zsh": "roofline completion zsh > ~/.zfunc/_roofline  (with fpath+=~/.zfunc before compinit in ~/.zshrc)",
    "fish": "roofline completion fish > ~/.config/fish/completions/roofline.fish",
}
# flags (by dest) whose values are preset ids of a kind
_ID_FLAGS = {"hardware_id": "hardware", "hardware": "hardware", "from_id": "hardware", "to_id": "hardware",
             "model_ref": "models", "model": "models"}


def add_completion_parser(sub) -> argparse.ArgumentParser:
    """Add ``completion`` to a subparsers object; returns the new parser."""
    parser = sub.add_parser("completion", help="print a shell completion script (bash, zsh or fish)",
                            formatter_class=argparse.RawDescriptionHelpFormatter,
                            description="Print the completion script for a shell. Install it with:\n  "
                            + "\n  ".join(INSTALL_HELP.values()))
    parser.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    return parser


def _with_id_choices(parser: argparse.ArgumentParser, ids: dict[str, list[str]]) -> None:
    """Give id flags the catalogue's ids as choices, in this parser and its subcommands (only the copy built
    for the script: parsing keeps accepting any id or path)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _with_id_choices(child, ids)
        elif action.option_strings and action.dest in _ID_FLAGS and action.choices is None:
            action.choices = ids[_ID_FLAGS[action.dest]]


def completion_script(shell: str) -> str:
    """The completion script of ``roofline`` for ``shell`` (one of :data:`SHELLS`)."""
    import shtab

    from roofline.presets.loader import preset_ids
    from roofline.tui.cli.main import build_parser

    parser = build_parser()
    _with_id_choices(parser, {kind: preset_ids(kind) for kind in ("hardware", "models")})
    return shtab.complete(parser, shell=shell)


def run_completion(args: argparse.Namespace) -> int:
    print(completion_script(args.shell))
    return 0
