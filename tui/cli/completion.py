"""``roofline completion bash|zsh|fish``: a shell completion script for every command and flag, printed.

The script comes from shtab (static: the shell does not start Python on each TAB). Hardware and model ids
complete from the catalogue as it is when the script is generated; regenerate after adding presets.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from contextvars import ContextVar

SHELLS = ("bash", "zsh", "fish")
INSTALL_HELP = {
    "bash": "roofline completion bash > ~/.local/share/bash-completion/completions/roofline",
    "zsh": "roofline completion zsh > ~/.zfunc/_roofline  (with fpath+=~/.zfunc before compinit in ~/.zshrc)",
    "fish": "roofline completion fish > ~/.config/fish/completions/roofline.fish",
}
# While the completion script's parser is built: preset kind -> the catalogue's ids, which id flags take as
# choices (see completion_ids). Outside that, None: parsing keeps accepting any id or path.
_SCRIPT_IDS: ContextVar[dict[str, list[str]] | None] = ContextVar("roofline_completion_ids", default=None)


def completion_ids(kind: str) -> list[str] | None:
    """``choices=`` for an id flag of ``kind`` (``hardware`` or ``models``): the catalogue's ids while the completion
    script's parser is built, else None (any id or config.json path is accepted).

    Declaring them where the flag is declared keeps to argparse's public API (it has none to walk a built parser's
    actions: that is ``parser._actions``)."""
    ids = _SCRIPT_IDS.get()
    return None if ids is None else ids[kind]


def add_completion_parser(sub) -> argparse.ArgumentParser:
    """Add ``completion`` to a subparsers object; returns the new parser."""
    parser = sub.add_parser("completion", help="print a shell completion script (bash, zsh or fish)",
                            formatter_class=argparse.RawDescriptionHelpFormatter,
                            description="Print the completion script for a shell. Install it with:\n  "
                            + "\n  ".join(INSTALL_HELP.values()))
    parser.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    return parser


def completion_script(shell: str, build_parser: Callable[[], argparse.ArgumentParser]) -> str:
    """The completion script for ``shell`` (one of :data:`SHELLS`) of the parser ``build_parser()`` builds (main's
    ``build_parser``, handed in so that this module does not import main), its id flags completing to the
    catalogue's ids."""
    import shtab

    from roofline.presets.loader import preset_ids

    token = _SCRIPT_IDS.set({kind: preset_ids(kind) for kind in ("hardware", "models")})
    try:
        parser = build_parser()
    finally:
        _SCRIPT_IDS.reset(token)
    return shtab.complete(parser, shell=shell)


def run_completion(args: argparse.Namespace, build_parser: Callable[[], argparse.ArgumentParser]) -> int:
    print(completion_script(args.shell, build_parser))
    return 0
