"""Packaging and layering: pyproject lists every package and its data, models/ and presets/ stay light and pure."""

from __future__ import annotations

import io
import subprocess
import sys
import tokenize
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
TOP_PACKAGES = ("models", "presets", "tui")
HEAVY = ("textual", "plotext", "rich", "textual_plotext")


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _package_folders() -> set[str]:
    """Every folder with an __init__.py under models/, presets/, tui/, as an installed dotted name."""
    names = set()
    for top in TOP_PACKAGES:
        for init in (ROOT / top).rglob("__init__.py"):
            if ".venv" in init.parts or "__pycache__" in init.parts:
                continue
            relative = init.parent.relative_to(ROOT).parts
            names.add(".".join(("roofline", *relative)))
    return names


def _modules(top: str) -> list[str]:
    """Dotted names of every module in one top-level package folder."""
    names = []
    for path in sorted((ROOT / top).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(("roofline", *parts)))
    return names


def test_pyproject_lists_every_package():
    """[tool.setuptools] packages = every folder with __init__.py (subpackages too), mapped to roofline.*."""
    config = _pyproject()["tool"]["setuptools"]
    assert sorted(config["packages"]) == sorted(_package_folders())
    for top in TOP_PACKAGES:
        assert config["package-dir"][f"roofline.{top}"] == top


def test_pyproject_package_data_ships_presets_and_styles():
    """Preset TOML files and Textual stylesheets are included as package data."""
    data = _pyproject()["tool"]["setuptools"]["package-data"]
    assert {"hardware/*.toml", "models/*.toml"} <= set(data["roofline.presets"])
    assert "*.tcss" in data["roofline.tui"]


def test_console_script_points_at_cli_main():
    """The `roofline` script runs roofline.tui.cli:main."""
    assert _pyproject()["project"]["scripts"]["roofline"] == "roofline.tui.cli:main"


def test_models_and_presets_import_nothing_heavy():
    """Importing every module of models/ and presets/ (and the report) pulls in no terminal UI library."""
    modules = ["roofline.models.report", "roofline.models.inference", "roofline.presets",
               *_modules("models"), *_modules("presets")]
    assert len(modules) > 10
    code = ("import importlib, sys\n"
            f"for name in {modules!r}:\n    importlib.import_module(name)\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def _code_without_strings(path: Path) -> str:
    """The file's code with comments and string literals (docstrings included) removed."""
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    return " ".join(t.string for t in tokens if t.type not in (tokenize.COMMENT, tokenize.STRING))


def test_models_do_no_io():
    """No module under models/ opens files or imports os, pathlib, tomllib or json (docstrings may mention them)."""
    forbidden = ("open (", "import os", "from os", "pathlib", "tomllib", "tomli", "json")
    offenders = []
    for path in sorted((ROOT / "models").rglob("*.py")):
        code = _code_without_strings(path)
        offenders += [f"{path.name}: {word}" for word in forbidden if word in code]
    assert offenders == []


def test_io_scan_sees_code_but_not_docstrings(tmp_path):
    """The scan above is not blind: it ignores a docstring mentioning config.json but sees open( and imports."""
    sample = tmp_path / "sample.py"
    sample.write_text('"""Reads config.json."""\nimport json\nwith open("x") as f:\n    pass\n', encoding="utf-8")
    code = _code_without_strings(sample)
    assert "config" not in code
    assert "import json" in code and "open (" in code


def test_license_is_spdx_with_its_file():
    """PEP 639: an SPDX expression and the file it names (the table form stops building in 2027)."""
    project = _pyproject()["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    assert "MIT License" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    requires = _pyproject()["build-system"]["requires"]
    assert any(r.replace(" ", "").startswith("setuptools>=") and int(r.split(">=")[1].split(".")[0]) >= 77
               for r in requires), requires
    assert not any(c.startswith("License ::") for c in project["classifiers"])  # setuptools refuses both


def test_directly_imported_libraries_are_declared():
    """rich is imported by tui/ modules directly; shtab by `roofline completion`."""
    names = {d.split(";")[0].split(">")[0].split("<")[0].split("=")[0].strip()
             for d in _pyproject()["project"]["dependencies"]}
    assert {"rich", "shtab", "textual", "numpy"} <= names
    uses_rich = [p for p in (ROOT / "tui").rglob("*.py") if "from rich" in p.read_text(encoding="utf-8")
                 or "import rich" in p.read_text(encoding="utf-8")]
    assert uses_rich


def test_python_range_includes_3_14_and_classifiers_match():
    project = _pyproject()["project"]
    assert project["requires-python"] == ">=3.10,<3.15"
    prefix = "Programming Language :: Python :: 3."
    listed = {c.rsplit(" ", 1)[-1] for c in project["classifiers"] if c.startswith(prefix)}
    assert listed == {"3.10", "3.11", "3.12", "3.13", "3.14"}
