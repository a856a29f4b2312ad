"""The command line imports neither Textual nor plotext: `roofline report` and friends start without them, and
only the subcommand that draws (the explorer, the talk, history's charts) imports them when it runs."""

import subprocess
import sys

BLOCKED = """
import importlib, pkgutil, sys
for name in ("textual", "textual_plotext", "plotext"):
    sys.modules[name] = None  # any import of them now raises ImportError
import roofline.tui.cli as cli
for info in pkgutil.iter_modules(cli.__path__):
    if info.name != "__main__":
        importlib.import_module(f"roofline.tui.cli.{info.name}")
import roofline.tui.views.results, roofline.tui.views.formatting, roofline.tui.views.report_text
import roofline.tui.inputs.registry, roofline.tui.inputs.form, roofline.tui.probe.detect
print("ok")
"""


def test_cli_modules_import_with_textual_and_plotext_blocked():
    done = subprocess.run([sys.executable, "-c", BLOCKED], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"


def test_report_runs_with_textual_and_plotext_blocked():
    code = ("import sys\nfor n in ('textual', 'textual_plotext', 'plotext'): sys.modules[n] = None\n"
            "from roofline.tui.cli import main\nsys.exit(main(['report', '--no-ops', '--format', 'json']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert '"schema_version"' in done.stdout
