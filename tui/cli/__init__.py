"""The ``roofline`` command line: argparse front end and one module per subcommand.

Imports neither Textual nor plotext (tests/cli/test_cli_imports.py checks it with both blocked); the explorer,
the talk and the charts are imported only by the subcommand that needs them.
"""

from roofline.tui.cli.main import main

__all__ = ["main"]
