"""The ``roofline`` command line: the report JSON contract, text formats, presets listing and usage errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli

REQUIRED_IDS = {"hardware": ["h100-sxm", "mi300x", "tpu-v5p"], "models": ["llama-3.1-8b", "deepseek-v3"]}


@pytest.fixture(autouse=True)
def _no_user_presets(tmp_path, monkeypatch):
    """Point the user preset folder at an empty folder so this machine's presets cannot interfere."""
    monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path / "no-user-presets"))


run = run_cli


def report_json(capsys, *args):
    code, out, err = run(["report", "--format", "json", *args], capsys)
    assert code == 0, err
    return json.loads(out)


# ---- the JSON contract -------------------------------------------------------------------------
PHASE_KEYS = {"prefill": ["time_s"], "generation": ["time_s", "output_tokens_per_s"],
              "decode": ["step_time_s", "tokens_per_s_per_seq", "tokens_per_s", "idle_core_pct", "mbu_pct",
                         "arithmetic_intensity_flops_per_byte", "limited_by"]}
OP_KEYS = ["phase", "name", "count", "flops", "weight_bytes", "activation_bytes", "kv_read_bytes", "kv_write_bytes",
           "arithmetic_intensity_flops_per_byte", "limited_by", "time_s"]


def test_report_json_contract(capsys):
    """report --format json carries every documented key with the right types."""
    report = report_json(capsys)
    hw = report["hardware"]
    for key in ["id", "name", "devices", "peak_flops_per_s", "mem_bw_bytes_per_s", "ridge_flops_per_byte"]:
        assert key in hw, key
    assert hw["id"] == "h100-sxm" and hw["devices"] == 1
    for key in ["id", "name", "params", "active_params"]:
        assert key in report["model"], key
    memory = report["memory"]
    for key in ["weights_bytes", "kv_cache_bytes", "activation_bytes", "total_bytes", "per_device_bytes",
                "capacity_bytes", "max_batch"]:
        assert isinstance(memory[key], int | float) and memory[key] > 0, key
    assert memory["fits"] is True
    for name in ["bound", "expected"]:
        for phase, keys in PHASE_KEYS.items():
            for key in keys:
                assert key in report[name][phase], f"{name}.{phase}.{key}"
        assert report[name]["decode"]["limited_by"] in {"memory", "compute"}
    assert report["ops"], "no ops"
    for op in report["ops"]:
        for key in OP_KEYS:
            assert key in op, f"op {op.get('name')}: {key}"
        assert op["limited_by"] in {"memory", "compute"}
    assert {op["phase"] for op in report["ops"]} == {"prefill", "decode"}


def test_report_json_no_ops(capsys):
    """--no-ops drops the per-op table but keeps the rest."""
    report = report_json(capsys, "--no-ops")
    assert "ops" not in report
    assert "bound" in report


@pytest.mark.parametrize("args", [
    [],
    ["--batch", "64", "--prompt", "4096"],
    ["--model", "llama-3.1-70b", "--hardware", "h200", "--tp", "4", "--batch", "16"],
    ["--model", "mixtral-8x7b", "--hardware", "mi300x", "--batch", "32", "--weights", "fp8", "--activations", "fp8"],
], ids=["default", "batch64", "70b-tp4", "moe-fp8"])
def test_report_numbers_are_consistent(capsys, args):
    """Aggregate tokens/s = batch x per-sequence; expected never beats bound; ridge = peak / bandwidth."""
    report = report_json(capsys, *args)
    batch = report["batching"]["batch"]
    for name in ["bound", "expected"]:
        decode = report[name]["decode"]
        assert decode["tokens_per_s"] == pytest.approx(batch * decode["tokens_per_s_per_seq"], rel=1e-9)
    bound, expected = report["bound"], report["expected"]
    assert expected["prefill"]["time_s"] >= bound["prefill"]["time_s"]
    assert expected["decode"]["step_time_s"] >= bound["decode"]["step_time_s"]
    assert expected["generation"]["time_s"] >= bound["generation"]["time_s"]
    hw = report["hardware"]
    assert hw["ridge_flops_per_byte"] == pytest.approx(hw["peak_flops_per_s"] / hw["mem_bw_bytes_per_s"], rel=1e-12)


def test_report_h100_default_figures(capsys):
    """Default scenario (Llama 3.1 8B, H100 SXM, batch 1): bf16 peak 989.4 TFLOP/s, decode memory-bound."""
    report = report_json(capsys)
    assert report["hardware"]["peak_flops_per_s"] == pytest.approx(989.4e12)
    assert report["hardware"]["ridge_flops_per_byte"] == pytest.approx(295.3, rel=1e-3)
    assert report["bound"]["decode"]["limited_by"] == "memory"
    assert report["bound"]["decode"]["idle_core_pct"] > 90


def test_batching_raises_aggregate_more_than_per_sequence(capsys):
    """Batch 64 vs 1: aggregate decode tokens/s grows a lot, per-sequence speed barely moves (bound)."""
    one = report_json(capsys, "--no-ops")["bound"]["decode"]
    many = report_json(capsys, "--no-ops", "--batch", "64")["bound"]["decode"]
    assert many["tokens_per_s"] > 10 * one["tokens_per_s"]
    assert many["tokens_per_s_per_seq"] > 0.5 * one["tokens_per_s_per_seq"]


# ---- text and markdown ----------------------------------------------------------------------
HEADLINES = ["time to first token", "decode tokens/s per sequence", "decode tokens/s aggregate", "decode MBU",
             "decode limited by", "generation time"]


def test_report_text_has_headline_rows(capsys):
    """The text report names the scenario and prints the headline rows, bound and expected."""
    code, out, err = run(["report", "--no-ops"], capsys)
    assert code == 0 and err == ""
    assert "Llama 3.1 8B" in out and "H100" in out
    assert "bound" in out and "expected" in out
    for row in HEADLINES:
        assert row in out, row


def test_report_markdown_has_headline_table(capsys):
    """The markdown report has a heading and a table holding the headline rows."""
    code, out, err = run(["report", "--format", "markdown", "--no-ops"], capsys)
    assert code == 0 and err == ""
    assert out.startswith("#")
    assert "| --- |" in out
    for row in HEADLINES:
        assert f"| {row} |" in out, row


def test_presets_text_lists_ids_and_sources(capsys):
    """`roofline presets --sources` lists hardware and models with their sources."""
    code, out, err = run(["presets", "--sources"], capsys)
    assert code == 0 and err == ""
    assert "hardware:" in out and "models:" in out
    for ids in REQUIRED_IDS.values():
        for preset_id in ids:
            assert preset_id in out, preset_id
    assert out.count("source:") >= 49 + 22


def test_presets_hardware_json(capsys):
    """`roofline presets hardware --format json` gives only hardware, each with id, source and file."""
    code, out, err = run(["presets", "hardware", "--format", "json"], capsys)
    assert code == 0 and err == ""
    data = json.loads(out)
    assert [key for key in data if key != "schema_version"] == ["hardware"]
    ids = {item["id"] for item in data["hardware"]}
    assert set(REQUIRED_IDS["hardware"]) <= ids
    for item in data["hardware"]:
        assert item["source"].strip(), item["id"]
        assert item["file"].endswith(f"{item['id']}.toml")


def test_presets_models_json(capsys):
    """`roofline presets models --format json` lists models with params and sources."""
    code, out, _ = run(["presets", "models", "--format", "json"], capsys)
    assert code == 0
    models = {item["id"]: item for item in json.loads(out)["models"]}
    assert set(REQUIRED_IDS["models"]) <= set(models)
    assert models["deepseek-v3"]["active_params"] < models["deepseek-v3"]["params"]
    assert all(item["source"] for item in models.values())


# ---- usage errors ------------------------------------------------------------------------------
@pytest.mark.parametrize(("args", "flag"), [
    (["--batch", "0"], "--batch"),
    (["--batch", "-3"], "--batch"),
    (["--batch", "abc"], "--batch"),
    (["--batch", "1e12"], "--batch"),
    (["--prompt", "0"], "--prompt"),
    (["--output", "2.5"], "--output"),
    (["--tp", "0"], "--tp"),
    (["--tp", "3"], "--tp"),
    (["--hardware", "nope"], "--hardware"),
    (["--model", "nope"], "--model"),
    (["--model", "/no/such/config.json"], "--model"),
    (["--weights", "int3"], "--weights"),
    (["--kv", "q4_0"], "--kv"),
    (["--activations", "int8"], "--activations"),
    (["--kv-compression", "0.5"], "--kv-compression"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_bad_values_exit_2_with_one_line(capsys, args, flag):
    """A bad flag value exits 2 with exactly one stderr line that names the flag; no traceback, no stdout."""
    code, out, err = run(["report", *args], capsys)
    assert code == 2
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert flag in lines[0]
    assert "Traceback" not in err


def test_broken_local_config_exits_2(capsys, tmp_path):
    """A local config.json that is not valid JSON: exit 2, one line naming --model, the file and the line."""
    path = tmp_path / "config.json"
    path.write_text('{\n  "model_type": "llama"\n  "hidden_size": 64\n}\n', encoding="utf-8")
    code, out, err = run(["report", "--model", str(path)], capsys)
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert "--model" in lines[0] and f"{path}:3" in lines[0]


def test_local_config_report(capsys, tmp_path):
    """A valid local config.json folder is accepted by --model."""
    folder = tmp_path / "tiny"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({
        "model_type": "llama", "hidden_size": 512, "intermediate_size": 1024, "num_hidden_layers": 4,
        "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 1000}), encoding="utf-8")
    report = report_json(capsys, "--model", str(folder), "--no-ops")
    assert report["model"]["name"] == "tiny"
    assert report["model"]["layers"] == 4


# ---- subprocess: entry point, --help, no Textual ----------------------------------------------
def _python(code: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "ROOFLINE_PRESETS": os.devnull + "-none"}
    return subprocess.run([sys.executable, code, *args] if code == "-m" else [sys.executable, "-c", code, *args],
                          capture_output=True, text=True, timeout=60, env=env)


@pytest.mark.parametrize("argv", [["--help"], ["report", "--help"]])
def test_help_exits_0_without_textual(argv):
    """--help prints usage and exits 0, and never imports Textual or the plotting libraries."""
    code = ("import sys\nfrom roofline.tui.cli.main import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n    code = e.code\n"
            "heavy = [m for m in ('textual', 'plotext', 'textual_plotext') if m in sys.modules]\n"
            "print('EXIT', code, 'HEAVY', heavy)\n")
    result = _python(code, *argv)
    assert result.returncode == 0, result.stderr
    assert "usage: roofline" in result.stdout
    assert result.stdout.rstrip().endswith("EXIT 0 HEAVY []")


def test_report_does_not_import_textual():
    """A full report run leaves textual out of sys.modules."""
    code = ("import sys, io, contextlib\nfrom roofline.tui.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    rc = main(['report', '--format', 'json'])\n"
            "print(rc, 'textual' in sys.modules)\n")
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0", "False"]


def test_module_entry_point_exit_codes():
    """`python -m roofline.tui.cli`: --help exits 0, a bad value exits 2 with one stderr line."""
    ok = _python("-m", "roofline.tui.cli", "--help")
    assert ok.returncode == 0 and "report" in ok.stdout
    bad = _python("-m", "roofline.tui.cli", "report", "--batch", "0")
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert len(bad.stderr.splitlines()) == 1 and "--batch" in bad.stderr
    good = _python("-m", "roofline.tui.cli", "report", "--format", "json", "--no-ops")
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout)["hardware"]["id"] == "h100-sxm"


def test_console_script_help_and_exit_codes():
    """The installed `roofline` script: --help exits 0, report --help exits 0, a bad value exits 2."""
    script = Path(sys.executable).with_name("roofline")
    script = str(script) if script.exists() else shutil.which("roofline")
    if script is None:
        pytest.skip("the roofline console script is not installed")
    env = {**os.environ, "ROOFLINE_PRESETS": os.devnull + "-none"}
    for argv, status in ((["--help"], 0), (["report", "--help"], 0), (["report", "--tp", "3"], 2)):
        result = subprocess.run([script, *argv], capture_output=True, text=True, timeout=60, env=env)
        assert result.returncode == status, (argv, result.stderr)
        assert "Traceback" not in result.stderr


def test_a_scenario_files_value_is_blamed_on_the_file_not_on_a_flag(tmp_path, capsys):
    """Was: `--tp: 3 does not divide ...` for a file's `tp = 3`, although no --tp was passed."""
    path = tmp_path / "s.toml"
    path.write_text("[scenario]\ntp = 3\n")
    code, out, err = run_cli(["--scenario", str(path)], capsys)
    assert code == 2 and err.strip() == f"roofline: error: --scenario: {path}: tp: 3 does not divide the model's 32 " \
                                        "attention heads"
    code, out, err = run_cli(["--scenario", str(path), "--tp", "5"], capsys)
    assert code == 2 and err.startswith("roofline: error: --tp: 5 does not divide")  # the flag given wins
