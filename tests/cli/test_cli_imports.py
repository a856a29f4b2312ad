"""The command line imports neither Textual nor plotext: `roofline report` and friends start without them, and
only the subcommand that draws (the explorer, the talk, history's charts) imports them when it runs."""

import ast
import subprocess
import sys
from pathlib import Path

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


# ---------------------------------------------------------------- no import cycles in roofline.*

REPO = Path(__file__).resolve().parents[2]
PACKAGES = {"models": "roofline.models", "presets": "roofline.presets", "tui": "roofline.tui"}


def _modules() -> dict[str, Path]:
    """Every module of the installed namespace (``roofline.tui.cli.main``) -> its file in the checkout."""
    found = {}
    for folder, dotted in PACKAGES.items():
        for path in sorted((REPO / folder).rglob("*.py")):
            parts = path.relative_to(REPO / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((dotted, *parts))] = path
    return found


def _imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The roofline modules ``name`` imports anywhere in its file (inside functions too: a deferred import that
    closes a loop is still a loop, one refactor away from an ImportError)."""
    base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    edges: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            edges.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                module = ".".join(base[:len(base) - (node.level - 1)] + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:  # `from pkg import mod` imports the module; `from mod import name`, the module
                full = f"{module}.{alias.name}"
                edges.add(full if full in known else module)
    return {edge for edge in edges if edge in known and edge != name}


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def test_cycle_finder_finds_a_loop_through_three_modules():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_cycles(graph) == [["a", "b", "c"]]
    assert import_cycles({"a": {"b"}, "b": set()}) == []


def test_relative_and_package_imports_resolve_to_modules():
    known = _modules()
    graph = {name: _imports(name, path, known) for name, path in known.items()}
    assert "roofline.tui.cli.preset_loading" in graph["roofline.tui.cli.plan"]  # a deferred import counts
    assert "roofline.models.scenario" in graph["roofline.models.validation"]  # `from .scenario import ...`
    assert "roofline.models.errors" in graph["roofline.models.serving.inputs"]  # `from ..errors import ...`


def test_no_import_cycles_in_the_package():
    """roofline.* imports form no loop (main <-> plan <-> completion once did, through a private helper)."""
    known = _modules()
    graph = {name: _imports(name, path, known) for name, path in known.items()}
    assert import_cycles(graph) == []
