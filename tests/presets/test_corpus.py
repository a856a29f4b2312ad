"""A corpus of broken input files (tests/corpus/): each must be refused with the key, a message and the line.

Every file has exactly one thing wrong. Hardware and model presets go through ``load_catalog`` from a user
folder (the broken file is reported in ``catalog.errors`` and skipped, every built-in still loads);
``config.json`` files through ``resolve_model``; scenario files through ``read_scenario``. The command line
must turn each of them into exit status 2 and one line on stderr.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import roofline.tui.app as app_module
from roofline.presets import builtin_presets_dir, load_catalog, resolve_model
from roofline.presets.loader import PresetFileError
from roofline.presets.scenario_file import read_scenario
from roofline.tui.inputs.file_values import check_file_value
from roofline.tui.inputs.registry import FILE_KEY_TYPES
from tests.conftest import run_cli
from tests.presets.test_engine_files import ENGINE_CASES

CORPUS = Path(__file__).parents[1] / "corpus"

def case(name, key, fragment, line, bug=None):
    return (name, key, fragment, line, bug)


def params(cases, *, cli=False):
    """pytest params, one per corpus file (``cli`` kept for call sites; every case applies)."""
    del cli
    return [pytest.param(name, key, fragment, line, id=name) for name, key, fragment, line, _ in cases]


# file -> (key named, message fragment, line). Lines count the file's leading comment.
HARDWARE_CASES = [
    case("hw-syntax-error", None, "not valid TOML", 8),
    case("hw-missing-name", "name", "missing", None),
    case("hw-empty-file", "name", "missing", None),
    case("hw-name-empty", "name", "non-empty string", 2),
    case("hw-not-utf8", None, "not UTF-8 text (byte 0xff at offset 15)", 1),
    case("hw-year-string", "year", "between 1990 and 2100, got '2020'", 4),
    case("hw-year-1800", "year", "between 1990 and 2100, got 1800", 4),
    case("hw-year-float", "year", "got 2020.5", 4),
    case("hw-mem-bw-zero", "mem_bw_gb_per_s", "must be > 0", 8),
    case("hw-negative-capacity", "memory_capacity_gib", "must be > 0, got -24", 7),
    case("hw-both-capacities", "memory_capacity_gib", "exactly one of memory_capacity_gib or memory_capacity_gb", 7),
    case("hw-no-capacity", "memory_capacity_gib", "exactly one", None),
    case("hw-empty-peaks", "dense_peak_tflops", "at least one peak", 13),
    case("hw-no-peaks", "dense_peak_tflops", "missing", None),
    case("hw-peaks-not-table", "dense_peak_tflops", "must be a table", 12),
    case("hw-unknown-peak-dtype", "dense_peak_tflops.fp12", "unknown key", 18),
    case("hw-peak-string", "dense_peak_tflops.bf16", "must be a number", 15),
    case("hw-achievable-1.5", "achievable.matmul_fraction", "fraction in (0, 1], got 1.5", 20),
    case("hw-mem-fraction-zero", "achievable.mem_bw_fraction", "must be > 0", 20),
    case("hw-id-mismatch", "id", "does not match the file name", 2),
    case("hw-nan-bandwidth", "mem_bw_gb_per_s", "must be finite, got nan", 8),
    case("hw-inf-capacity", "memory_capacity_gib", "must be finite, got inf", 7),
    case("hw-neg-inf-peak", "dense_peak_tflops.bf16", "must be finite, got -inf", 15),
    case("hw-latency-nan", "interconnect_latency_us", "must be finite", 12),
    case("hw-tdp-negative", "tdp_w", "must be > 0", 12),
    case("hw-devices-per-package-0", "devices_per_package", "from 1 to 8, got 0", 2),
    case("hw-devices-per-package-9", "devices_per_package", "from 1 to 8, got 9", 2),
    case("hw-capacity-overflow", "memory_capacity_gib", "plausible", 7),
    case("hw-bandwidth-overflow", "mem_bw_gb_per_s", "plausible", 8),
    case("hw-peak-overflow", "dense_peak_tflops.bf16", "plausible", 15),
    case("hw-subnormal-bandwidth", "mem_bw_gb_per_s", "5e-324 is not plausible (less than 0.01)", 8),
    case("hw-tiny-peak", "dense_peak_tflops.bf16", "not plausible (less than 0.001)", 15),
    case("hw-fraction-tiny", "achievable.mem_bw_fraction", "not plausible (less than 0.0001)", 20),
    case("hw-huge-integer", None, "not valid TOML: a number too long to read", 8),
    case("hw-long-integer", "mem_bw_gb_per_s", "digits> is not plausible", 8),
    case("hw-deep-nesting", None, "not valid TOML: nested too deeply", 9),
    case("hw-year-long-string", "year", "2222…", 4),
    case("hw-fp16-accumulate-below-peak", "fp16_accumulate_dense_tflops", "at least the fp16 peak (121), got 60", 12),
    case("hw-fp16-accumulate-string", "fp16_accumulate_dense_tflops", "must be a number", 12),
    case("hw-devices-per-node-0", "devices_per_node", "from 1 to 1024, got 0", 12),
    case("hw-scale-out-no-figure", "scale_out", "go together", 12),
    case("hw-scale-out-bw-string", "scale_out_unidirectional_gb_per_s", "must be a number", 13),
    case("hw-fabric-no-source", "devices_per_node", "needs fabric_source", 12),
]

MODEL_CASES = [
    case("model-no-config", "config", "missing", None),
    case("model-config-not-table", "config", "must be a table", 4),
    case("model-heads-0", "config.num_attention_heads", "positive integer, got 0", 9),
    case("model-kv-heads-7", "config.num_key_value_heads", "7 does not divide num_attention_heads 32", 11),
    case("model-bert", "config.model_type", "'bert' is not supported", 6),
    case("model-no-model-type", "config.model_type", "missing", None),
    case("model-hidden-string", "config.hidden_size", "positive integer, got '4096'", 7),
    case("model-hidden-float", "config.hidden_size", "positive integer, got 4096.0", 7),
    case("model-default-weights-int3", "default_weights", "unknown dtype 'int3'", 4),
    case("model-default-activations-int4", "default_activations", "unknown dtype 'int4'", 4),
    case("model-sliding-window-negative", "config.sliding_window", "positive integer or null, got -1", 15),
    case("model-layer-types-length", "config.layer_types", "one type per layer (32)", 15),
    case("model-sliding-without-window", "config.sliding_window", "no window", None),
    case("model-id-mismatch", "id", "does not match the file name", 2),
    case("model-missing-source", "source", "missing", None),
    case("model-published-params-negative", "published_params", "must be > 0", 4),
    case("model-published-params-nan", "published_params", "must be finite", 4),
    case("model-tie-yes", "config.tie_word_embeddings", "true or false, got 'yes'", 14),
    case("model-vocab-missing", "config.vocab_size", "missing", None),
    case("model-text-config", "config.text_config", "multimodal", 16),
    case("model-mixtral-topk-too-big", "config.num_experts_per_tok", "between 1 and the number of experts", 16),
    case("model-huge-layer-count", "config.num_hidden_layers", "not plausible", 10),
]

CONFIG_CASES = [
    case("cfg-invalid-json", None, "not valid JSON", 4),
    case("cfg-empty-file", None, "not valid JSON", 1),
    case("cfg-top-level-list", "config", "must be a JSON object", None),
    case("cfg-missing-vocab", "vocab_size", "missing", None),
    case("cfg-layers-0", "num_hidden_layers", "positive integer, got 0", 6),
    case("cfg-tie-yes", "tie_word_embeddings", "true or false, got 'yes'", 10),
    case("cfg-model-type-bert", "model_type", "'bert' is not supported", 2),
    case("cfg-hidden-nan", "hidden_size", "got nan", 3),
    case("cfg-kv-heads-7", "num_key_value_heads", "does not divide", 7),
    case("cfg-text-config", "text_config", "multimodal", 11),
    case("cfg-deep-nesting", None, "not valid JSON: nested too deeply", 1),
    case("cfg-huge-integer", None, "not valid JSON: a number too long to read", 3),
]

SCENARIO_CASES = [
    case("sc-batch-negative", "batch", "must be between 1 and 1,048,576, got -1", 4),
    case("sc-batch-zero", "batch", "must be between 1 and 1,048,576, got 0", 2),
    case("sc-batch-string", "batch", "must be int, got '8'", 3),
    case("sc-batch-bool", "batch", "must be int, got True", 2),
    case("sc-batch-float", "batch", "must be int, got 8.5", 2),
    case("sc-no-scenario-table", "scenario", "missing [scenario] table", None),
    case("sc-scenario-not-table", "scenario", "missing [scenario] table", None),
    case("sc-syntax-error", None, "not valid TOML", None),
    case("sc-flash-string", "flash_attention", "must be bool", 2),
    case("sc-hardware-number", "hardware", "must be str, got 100", 2),
    case("sc-bandwidth-nan", "mem_bw_override_gb_per_s", "finite", 3),
    case("sc-capacity-inf", "capacity_override_gib", "finite", 3),
    case("sc-deep-nesting", None, "not valid TOML: nested too deeply", 3),
    case("sc-huge-integer", None, "not valid TOML: a number too long to read", 2),
    case("sc-long-string", "batch", "must be int, got 'xxx", 2),
]


# Unknown keys are warned about and ignored: the file still loads. (folder, file, key, line)
WARNING_CASES = [
    ("hardware", "hw-achievable-unknown-key", "achievable.speedup", 20),
    ("hardware", "hw-unknown-top-key", "colour", 12),
    ("models", "model-unknown-top-key", "licence", 4),
    ("scenario", "sc-unknown-key", "colour", 3),
]


def test_corpus_is_complete():
    """Every corpus file is in a table and every table entry has its file (at least 30 files)."""
    tables = {"hardware": HARDWARE_CASES, "models": MODEL_CASES, "config": CONFIG_CASES, "scenario": SCENARIO_CASES,
              "engines": ENGINE_CASES}
    listed = {f"{sub}/{c[0]}" for sub, cases in tables.items() for c in cases}
    listed |= {f"{sub}/{name}" for sub, name, _, _ in WARNING_CASES}
    # bench/: benchmark result files, listed and checked by tests/presets/test_bench_files.py
    on_disk = {f"{p.parent.name}/{p.stem}" for p in CORPUS.glob("*/*") if p.is_file() and p.parent.name != "bench"}
    assert listed == on_disk
    assert len(on_disk) >= 30


@pytest.fixture(scope="module")
def builtin():
    """The built-in catalog alone (an empty user folder)."""
    catalog = load_catalog(user_dir=CORPUS / "no-such-folder")
    assert catalog.errors == []
    return catalog


def _check_error(error, path: Path, key, fragment, line):
    assert error.path == str(path)
    assert error.key == key, str(error)
    assert fragment in error.message, str(error)
    assert error.line == line, str(error)
    assert path.name in str(error) and "\n" not in str(error)
    assert len(str(error)) < len(str(path)) + 300, str(error)  # a long value is quoted cut, not whole


def _user_folder(tmp_path: Path, kind: str, name: str) -> Path:
    """A user preset folder holding just this corpus file, under its own name."""
    (tmp_path / kind).mkdir()
    target = tmp_path / kind / f"{name}.toml"
    shutil.copyfile(CORPUS / kind / f"{name}.toml", target)
    return target


def _check_catalog(tmp_path, kind, name, key, fragment, line, builtin):
    target = _user_folder(tmp_path, kind, name)
    catalog = load_catalog(user_dir=tmp_path, kinds=(kind,))
    assert len(catalog.errors) == 1, [str(e) for e in catalog.errors]
    _check_error(catalog.errors[0], target, key, fragment, line)
    loaded = catalog.hardware if kind == "hardware" else catalog.models
    expected = builtin.hardware if kind == "hardware" else builtin.models
    assert name not in loaded
    assert set(loaded) == set(expected)
    for preset_id in expected:  # the broken file replaced nothing (hw-id-mismatch claims the id l4)
        assert catalog.origins[f"{kind}/{preset_id}"].parent == builtin_presets_dir() / kind
        assert loaded[preset_id] == expected[preset_id]


@pytest.mark.parametrize(("name", "key", "fragment", "line"), params(HARDWARE_CASES))
def test_broken_hardware_preset_is_reported_and_skipped(tmp_path, builtin, name, key, fragment, line):
    _check_catalog(tmp_path, "hardware", name, key, fragment, line, builtin)


@pytest.mark.parametrize(("name", "key", "fragment", "line"), params(MODEL_CASES))
def test_broken_model_preset_is_reported_and_skipped(tmp_path, builtin, name, key, fragment, line):
    _check_catalog(tmp_path, "models", name, key, fragment, line, builtin)


@pytest.mark.parametrize(("name", "key", "fragment", "line"), params(CONFIG_CASES))
def test_broken_config_json_raises_preset_file_error(name, key, fragment, line):
    path = CORPUS / "config" / f"{name}.json"
    with pytest.raises(PresetFileError) as info:
        resolve_model(str(path))
    _check_error(info.value.error, path, key, fragment, line)


@pytest.mark.parametrize(("name", "key", "fragment", "line"), params(SCENARIO_CASES))
def test_broken_scenario_raises_preset_file_error(name, key, fragment, line):
    path = CORPUS / "scenario" / f"{name}.toml"
    with pytest.raises(PresetFileError) as info:
        read_scenario(path, keys=FILE_KEY_TYPES, check=check_file_value)  # the explorer's keys and ranges
    _check_error(info.value.error, path, key, fragment, line)


# ---- the command line: exit 2, one stderr line, nothing on stdout ------------------------------
_run = run_cli


def _one_line_error(code, out, err, prefix, *needles):
    assert code == 2, (out[-500:], err[-2000:])
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(prefix), lines[0]
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.fixture
def no_explorer(monkeypatch):
    """The explorer must never open here: if the CLI gets that far, record it instead."""
    opened = []
    monkeypatch.setattr(app_module, "run_explorer", lambda *a, **k: opened.append((a, k)) or 0)
    return opened


@pytest.mark.parametrize(("name", "key", "fragment", "line"), params(CONFIG_CASES, cli=True))
def test_cli_report_with_bad_config_json_exits_2_with_one_line(capsys, tmp_path, monkeypatch, name, key, fragment,
                                                                line):
    monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path / "none"))
    path = CORPUS / "config" / f"{name}.json"
    code, out, err = _run(["report", "--model", str(path)], capsys)
    _one_line_error(code, out, err, "roofline report: error: --model: ", fragment, *([key] if key else []))


def test_cli_report_with_bad_config_json_folder_exits_2(capsys, tmp_path, monkeypatch):
    """A folder holding a broken config.json is refused the same way."""
    monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path / "none"))
    folder = tmp_path / "my-model"
    folder.mkdir()
    shutil.copyfile(CORPUS / "config" / "cfg-tie-yes.json", folder / "config.json")
    code, out, err = _run(["report", "--model", str(folder)], capsys)
    _one_line_error(code, out, err, "roofline report: error: --model: ", "config.json", "tie_word_embeddings")


@pytest.mark.parametrize(("name", "key", "fragment", "line"), params(HARDWARE_CASES, cli=True))
def test_cli_report_with_bad_user_hardware_exits_2(capsys, tmp_path, monkeypatch, name, key, fragment, line):
    _user_folder(tmp_path, "hardware", name)
    monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path))
    code, out, err = _run(["report", "--hardware", name, "--no-ops"], capsys)
    _one_line_error(code, out, err, "roofline report: error: --hardware: ", name, fragment)


@pytest.mark.parametrize(("name", "key", "fragment", "line"), params(MODEL_CASES, cli=True))
def test_cli_report_with_bad_user_model_exits_2(capsys, tmp_path, monkeypatch, name, key, fragment, line):
    _user_folder(tmp_path, "models", name)
    monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path))
    code, out, err = _run(["report", "--model", name, "--no-ops"], capsys)
    _one_line_error(code, out, err, "roofline report: error: --model: ", name, fragment)


@pytest.mark.parametrize(("name", "key", "fragment", "line"), params(SCENARIO_CASES, cli=True))
def test_cli_explorer_with_bad_scenario_exits_2_before_opening(capsys, tmp_path, monkeypatch, no_explorer, name,
                                                                key, fragment, line):
    monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path / "none"))
    code, out, err = _run(["--scenario", str(CORPUS / "scenario" / f"{name}.toml")], capsys)
    assert no_explorer == []
    _one_line_error(code, out, err, "roofline: error: --scenario: ", fragment, *([key] if key else []))


def test_cli_presets_lists_every_builtin_and_skips_broken_user_files(capsys, tmp_path, monkeypatch, builtin):
    """The whole corpus in one user folder: each file skipped with one stderr line, the built-ins listed."""
    for kind in ("hardware", "models"):
        (tmp_path / kind).mkdir()
        for path in (CORPUS / kind).glob("*.toml"):
            shutil.copyfile(path, tmp_path / kind / path.name)
    monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path))
    code, out, err = _run(["presets"], capsys)
    assert code == 0
    lines = err.splitlines()
    skipped = [line for line in lines if line.startswith("roofline presets: skipped ")]
    warned_lines = [line for line in lines if line.startswith("roofline presets: warning: ")]
    assert len(skipped) + len(warned_lines) == len(lines)
    warned = {name for kind, name, _, _ in WARNING_CASES if kind != "scenario"}
    warned_files = {Path(line.removeprefix("roofline presets: warning: ").split(":")[0]).stem for line in warned_lines}
    assert warned_files == warned
    expected = {p.stem for kind in ("hardware", "models") for p in (tmp_path / kind).glob("*.toml")} - warned
    assert {Path(line.removeprefix("roofline presets: skipped ").split(":")[0]).stem for line in skipped} == expected
    for preset_id in [*builtin.hardware, *builtin.models]:
        assert f"  {preset_id} " in out


@pytest.mark.parametrize(("kind", "name", "key", "line"), WARNING_CASES, ids=[c[1] for c in WARNING_CASES])
def test_unknown_keys_are_warned_about_and_the_file_still_loads(tmp_path, capsys, monkeypatch, kind, name, key, line):
    from roofline.presets.scenario_file import read_scenario

    warnings: list = []
    if kind == "scenario":
        values = read_scenario(CORPUS / kind / f"{name}.toml", warnings, keys=FILE_KEY_TYPES)
        assert key not in values
    else:
        target = _user_folder(tmp_path, kind, name)
        catalog = load_catalog(user_dir=tmp_path, kinds=(kind,))
        assert catalog.errors == []
        assert name in (catalog.hardware if kind == "hardware" else catalog.models)
        warnings = catalog.warnings
        assert warnings[0].path == str(target)
        monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path))
        flag = "--hardware" if kind == "hardware" else "--model"
        code, out, err = _run(["report", flag, name, "--format", "json", "--no-ops"], capsys)
        assert code == 0 and out.startswith("{")
        assert err.startswith("roofline: warning: ") and key in err and len(err.strip().splitlines()) == 1
    assert [(w.key, w.line) for w in warnings] == [(key, line)]
    assert "ignored" in warnings[0].message
