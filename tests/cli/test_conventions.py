"""What a CLI user expects (issue 20): --version, shell completion, JSON with schema_version, forgiving ids,
the presets table, and the history command's baseline, claim lines and labels."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
from importlib.metadata import version
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from roofline.presets.ids import match_id, suggest_ids
from roofline.presets.loader import preset_ids
from tests.conftest import run_cli

HARDWARE_IDS = preset_ids("hardware", user_dir=None)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _no_user_presets(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path / "none"))


def test_version_is_the_package_metadata(capsys):
    code, out, _ = run_cli(["--version"], capsys)
    assert code == 0 and out.strip() == f"roofline {version('roofline-explorer')}"


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_script_names_commands_flags_and_ids(shell, capsys):
    code, out, err = run_cli(["completion", shell], capsys)
    assert code == 0 and err == ""
    for word in ("report", "history", "presets", "completion", "--hardware", "--format", "h100-sxm", "llama-3.1-8b"):
        assert word in out, word


def test_bash_completion_script_parses(capsys):
    _, out, _ = run_cli(["completion", "bash"], capsys)
    result = subprocess.run([shutil.which("bash") or "bash", "-n"], input=out, text=True, capture_output=True)
    assert result.returncode == 0, result.stderr


def test_every_id_flag_completes_to_the_catalogue(capsys):
    """Each flag that takes a preset id lists the ids in the script (bash keeps them per subcommand and flag)."""
    _, out, _ = run_cli(["completion", "bash"], capsys)
    for variable in ("_shtab_roofline___hardware_choices", "_shtab_roofline___model_choices",
                     "_shtab_roofline_report___hardware_choices", "_shtab_roofline_history___from_choices",
                     "_shtab_roofline_history___to_choices", "_shtab_roofline_measure___hardware_choices",
                     "_shtab_roofline_calibrate___model_choices", "_shtab_roofline_plan___draft_choices"):
        line = next(line for line in out.splitlines() if line.startswith(variable + "="))
        assert ("h100-sxm" if "model" not in variable and "draft" not in variable else "llama-3.1-8b") in line


def test_id_choices_belong_to_the_script_only():
    """Parsing takes any id or path (a config.json folder, a user preset made after the script was written)."""
    from roofline.tui.cli.completion import completion_ids
    from roofline.tui.cli.main import build_parser

    assert completion_ids("hardware") is None
    args = build_parser().parse_args(["report", "--hardware", "not-a-preset", "--model", "./some/folder"])
    assert (args.hardware_id, args.model_ref) == ("not-a-preset", "./some/folder")


def test_completion_needs_a_known_shell(capsys):
    code, _, err = run_cli(["completion", "tcsh2"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1


# ---- JSON: schema_version everywhere ------------------------------------------------------------
@pytest.mark.parametrize("argv", [
    ["presets", "--format", "json"],
    ["history", "--format", "json"],
    ["detect", "--format", "json"],
    ["calibrate", "--measured-itl-ms", "8", "--format", "json"],
    ["validate", "tests/data/measured-dev-validation.csv", "--format", "json"],
], ids=lambda argv: argv[0])
def test_json_has_a_schema_version(argv, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out, _ = run_cli(argv, capsys)
    assert code == 0
    assert json.loads(out)["schema_version"] >= 1


def test_measure_json_has_a_schema_version(capsys):
    """A quick host measurement (numpy, tiny sizes): only the JSON's shape is checked, never a speed."""
    code, out, _ = run_cli(["measure", "--device", "cpu", "--quick", "--dtypes", "fp32", "--format", "json"], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["schema_version"] == 1 and data["mem_bw_bytes_per_s"] > 0


@pytest.mark.parametrize("command", ["calibrate", "history", "presets", "detect", "measure", "validate"])
def test_json_format_is_documented_in_help(command, capsys):
    code, out, _ = run_cli([command, "--help"], capsys)
    assert code == 0
    assert "schema_version" in " ".join(out.split())


# ---- ids ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("typed", "expected"), [
    ("H100-SXM", "h100-sxm"), ("h100 sxm", "h100-sxm"), ("RTX_4090", "rtx-4090"), ("h100-sxm", "h100-sxm"),
    ("h100", None), ("nope", None)])
def test_match_id_ignores_case_and_separators(typed, expected):
    assert match_id(typed, HARDWARE_IDS) == expected


def test_suggestions_rank_prefixes_first():
    """a100 names the three A100s before a10/a10g; h100 names the three H100s first."""
    assert suggest_ids("a100", HARDWARE_IDS)[:3] == ["a100-pcie-80gb", "a100-sxm4-40gb", "a100-sxm4-80gb"]
    assert set(suggest_ids("h100", HARDWARE_IDS)[:3]) == {"h100-sxm", "h100-pcie", "h100-nvl"}


@given(st.sampled_from(HARDWARE_IDS), st.sampled_from([str.upper, str.title, lambda s: s.replace("-", " ")]))
def test_any_spelling_of_an_id_finds_it(hw_id, spell):
    assert match_id(spell(hw_id), HARDWARE_IDS) == hw_id


def test_report_takes_ids_as_written_on_model_pages(capsys):
    code, out, err = run_cli(["report", "--hardware", "H100-SXM", "--model", "Llama-3.1-8B", "--format", "json",
                              "--no-ops"], capsys)
    assert code == 0, err
    assert json.loads(out)["schema_version"] >= 1


def test_explorer_flags_take_any_case(capsys):
    from roofline.tui.cli.main import _explorer_form, build_parser

    form, _, _ = _explorer_form(build_parser().parse_args(["--hardware", "H100-SXM", "--model", "Llama-3.1-8B"]))
    assert (form.hardware_id, form.model_ref) == ("h100-sxm", "llama-3.1-8b")


def test_unknown_hardware_suggests_the_a100s(capsys):
    code, out, err = run_cli(["report", "--hardware", "a100"], capsys)
    assert code == 2 and out == ""
    assert "did you mean a100-pcie-80gb, a100-sxm4-40gb, a100-sxm4-80gb" in err


# ---- presets ----------------------------------------------------------------------------------------
def test_presets_text_shows_capacity_bandwidth_ridge_and_peaks(capsys):
    """H100 SXM: 80 GiB, 3.35 TB/s, ridge 989.4 / 3.35 = 295 FLOP/B, 989 TFLOP/s bf16, 1.98 PFLOP/s fp8.
    Llama-3.1-8B: 32 layers x 8 KV heads x (128 + 128) x 2 bytes = 131,072 B = 128.0 KiB per token; 131,072
    context."""
    code, out, _ = run_cli(["presets"], capsys)
    assert code == 0
    h100 = next(line for line in out.splitlines() if line.split()[:1] == ["h100-sxm"])
    for figure in ("80 GiB", "3.35 TB/s", "295", "989 TFLOP/s", "1.98 PFLOP/s"):
        assert figure in h100, figure
    llama = next(line for line in out.splitlines() if line.split()[:1] == ["llama-3.1-8b"])
    assert llama.split()[-4:] == ["32", "128.0", "KiB", "131,072"]
    assert "source:" not in out
    code, out, _ = run_cli(["presets", "--sources"], capsys)
    assert out.count("source:") == len(HARDWARE_IDS) + len(preset_ids("models", user_dir=None))


def test_presets_json_carries_the_figures_and_sources(capsys):
    code, out, _ = run_cli(["presets", "--format", "json"], capsys)
    data = json.loads(out)
    h100 = next(h for h in data["hardware"] if h["id"] == "h100-sxm")
    assert h100["ridge_flops_per_byte"] == pytest.approx(989.4e12 / 3.35e12)
    # NVIDIA's sheet: 1,978.9 TFLOP/s FP8 dense, twice 989.4 up to its rounding
    assert h100["peak_8bit_flops_per_s"] == pytest.approx(2 * h100["peak_16bit_flops_per_s"], rel=1e-4)
    assert h100["source"] and isinstance(h100["sources"], dict)
    llama = next(m for m in data["models"] if m["id"] == "llama-3.1-8b")
    assert (llama["layers"], llama["kv_bytes_per_token_bf16"], llama["max_context_tokens"]) == (32, 131072, 131072)


# ---- history ----------------------------------------------------------------------------------------
def _history(capsys, *argv):
    code, out, err = run_cli(["history", *argv], capsys)
    assert code == 0, err
    return out


def test_history_fp8_starts_at_the_earliest_part_that_has_it(capsys):
    """No 2012 part has FP8: the baseline is the earliest datacenter part with it (2022: gaudi2, by id)."""
    data = json.loads(_history(capsys, "--metric", "fp8", "--format", "json"))
    assert data["baseline"] == "gaudi2" and data["endpoint"] == "h100-sxm"
    assert data["growth"]["from"] == "gaudi2"


def test_history_amd_normalises_to_an_amd_part(capsys):
    """--vendor AMD: MI100 (2020) to the newest AMD part (MI355X, 2025); bf16 2516.6 / 184.6 TFLOP/s,
    8000 / 1228.8 GB/s."""
    data = json.loads(_history(capsys, "--vendor", "AMD", "--format", "json"))
    assert (data["baseline"], data["endpoint"]) == ("mi100", "mi355x")
    assert {d["vendor"] for d in data["devices"]} == {"AMD"}
    assert not data["claim_applies"] and data["claim_checks"] == {} and data["close_pairs"] == []
    text = _history(capsys, "--vendor", "AMD")
    assert "mi100 -> mi355x" in text and "k20x" not in text and "claim:" not in text


def test_history_claim_lines_only_when_they_apply(capsys):
    text = _history(capsys)
    assert "claim:" in text and "the direction is right" in text
    assert "claim:" not in _history(capsys, "--from", "a100-sxm4-80gb")


def test_history_chart_labels_devices_and_the_endpoint_multipliers(capsys):
    """K20X -> H100 SXM: compute 989.4 / 3.95 = x250, bandwidth 3350 / 250 = x13.4, gap 250.5 / 13.4 = x18.7."""
    text = _history(capsys, "--width", "120", "--height", "30")
    assert "h100-sxm: compute x250, bandwidth x13.4, gap x18.7" in text
    assert "x250" in text.split("h100-sxm: compute")[1]  # beside the point too, not only in the legend
    labelled = [hw_id for hw_id in ("v100-sxm2", "mi300x", "b200", "t4", "l4") if hw_id in text]
    assert len(labelled) >= 3, labelled


def test_history_ids_ignore_case(capsys):
    data = json.loads(_history(capsys, "--from", "K20", "--to", "MI250X", "--format", "json"))
    assert (data["baseline"], data["endpoint"]) == ("k20", "mi250x")


# ---- private names of libraries live in tui/perf/ only --------------------------------------------
# Each use outside tui/perf/ where no public path exists: (file, name) -> why, and the test that pins the release.
LIBRARY_PRIVATE_NAMES = {
    ("tui/cli/serve.py", "_process"): "textual-serve's AppService keeps the session's process only there; pinned by "
    "tests/cli/test_serve_security.py::test_textual_serve_is_the_release_whose_private_name_is_used",
    ("tui/probe/measure_gpu.py", "_scaled_mm"): "torch has no public FP8 GEMM; probed with hasattr, skipped without",
}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def library_private_names(root: Path = ROOT) -> set[tuple[str, str]]:
    """(file, name) for every private name of another package read outside tui/perf/: ``obj._name`` (also on
    ``self``, an inherited one) where no roofline module defines ``_name``; ``getattr(obj, "_name")`` on anything
    but ``self``; ``from library import _name``."""
    trees = {path: ast.parse(path.read_text(encoding="utf-8"))
             for folder in ("tui", "models", "presets") for path in sorted((root / folder).rglob("*.py"))}
    defined: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defined.add(node.name)
            elif isinstance(node, ast.Name | ast.Attribute) and isinstance(node.ctx, ast.Store):
                defined.add(node.id if isinstance(node, ast.Name) else node.attr)
            elif isinstance(node, ast.arg):
                defined.add(node.arg)
            elif isinstance(node, ast.alias):
                defined.add(node.asname or node.name)
    found: set[tuple[str, str]] = set()
    for path, tree in trees.items():
        rel = path.relative_to(root).as_posix()
        if rel.startswith("tui/perf/"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in defined:
                found.add((rel, node.attr))
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                  and node.func.id in ("getattr", "hasattr", "setattr") and len(node.args) > 1
                  and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
                  and _private(node.args[1].value)):
                target = node.args[0]
                if not (isinstance(target, ast.Name) and target.id == "self") or node.args[1].value not in defined:
                    found.add((rel, node.args[1].value))
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and not (node.module or "").startswith(
                    "roofline"):
                found.update((rel, alias.name) for alias in node.names if _private(alias.name))
    return found


def test_private_library_names_outside_perf_are_the_listed_ones():
    """A new private name of Textual, argparse, textual-serve... outside tui/perf/ fails here: use the public API,
    or list it with the reason and the test that pins the library release."""
    assert library_private_names() == set(LIBRARY_PRIVATE_NAMES)  # one no longer used leaves the list


def test_the_private_name_scan_sees_each_form(tmp_path):
    (tmp_path / "tui" / "cli").mkdir(parents=True)
    (tmp_path / "tui" / "perf").mkdir()
    (tmp_path / "tui" / "cli" / "a.py").write_text(
        "import argparse\nfrom textual.widget import _thing\n"
        "def f(parser, service):\n    parser._actions\n    getattr(service, '_own')\n    argparse._Sub\n"
        "class C:\n    def __init__(self):\n        self._own = 1\n    def g(self):\n"
        "        return self._own, self._inherited, getattr(self, '_own')\n")
    (tmp_path / "tui" / "perf" / "p.py").write_text("def f(x):\n    return x._allowed_here\n")
    assert library_private_names(tmp_path) == {
        ("tui/cli/a.py", "_thing"), ("tui/cli/a.py", "_actions"), ("tui/cli/a.py", "_own"),
        ("tui/cli/a.py", "_Sub"), ("tui/cli/a.py", "_inherited")}
