"""Engine profiles as data (presets/engines/*.toml): every built-in file loads, every factor names its source and date,
every solved figure is recomputed from its public runs, and broken files are refused with file, line and key."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from roofline.models import engines as model_engines
from roofline.models.engines import DEFAULT_ENGINE, GENERIC, Engine, engine_profile
from roofline.models.errors import ModelInputError
from roofline.presets import builtin_presets_dir
from roofline.presets.engine_profiles import (
    builtin_engines_dir,
    check_engine,
    engine_errors,
    engine_ids,
    load_engine_profiles,
)
from roofline.presets.toml_io import read_toml

CORPUS = Path(__file__).parents[1] / "corpus"


def case(name, key, fragment, line):
    return (name, key, fragment, line)


# Engine profiles read by load_engine_profiles from a folder: each broken file is reported and skipped (the corpus
# completeness check in test_corpus.py lists these too).
ENGINE_CASES = [
    case("eng-missing-name", "name", "missing", None),
    case("eng-unknown-mode", "runtime_mode", "unknown runtime mode 'turbo'", 4),
    case("eng-vendors-string", "vendors", "must be a list of non-empty strings", 3),
    case("eng-factor-no-source", "factors.kernel_overhead_us.source", "needs a public source", 7),
    case("eng-factor-no-value", "factors.kernel_overhead_us.value", "missing", 7),
    case("eng-factor-bad-date", "factors.kernel_overhead_us.date", "must be a date YYYY-MM", 10),
    case("eng-unknown-factor", "factors.speedup", "unknown key", 7),
    case("eng-share-overflow", "factors.decode_gemv_bw_share.value", "not plausible (more than 3)", 8),
    case("eng-chunk-float", "factors.prefill_chunk_tokens.value", "whole number from 1", 8),
    case("eng-flag-string", "factors.gemm_fp16_accumulate.value", "true or false, got 'yes'", 8),
    case("eng-value-nan", "factors.kernel_overhead_us.value", "must be finite, got nan", 8),
    case("eng-id-mismatch", "id", "does not match the file name", 2),
    case("eng-syntax-error", None, "not valid TOML", 6),
]


@pytest.mark.parametrize(("name", "key", "fragment", "line"), ENGINE_CASES, ids=[c[0] for c in ENGINE_CASES])
def test_a_broken_engine_file_is_reported_and_skipped(tmp_path, name, key, fragment, line):
    folder = tmp_path / "engines"
    folder.mkdir()
    shutil.copy(CORPUS / "engines" / f"{name}.toml", folder / f"{name}.toml")
    shutil.copy(builtin_engines_dir() / "vllm.toml", folder / "vllm.toml")
    found, errors = load_engine_profiles(folder)
    assert list(found) == ["vllm"] and len(errors) == 1
    error = errors[0]
    assert error.path == str(folder / f"{name}.toml")
    assert error.key == key, str(error)
    assert fragment in error.message, str(error)
    assert error.line == line, str(error)
    assert "\n" not in str(error) and f"{name}.toml" in str(error)


def test_every_engine_file_on_disk_is_a_corpus_case():
    assert {p.stem for p in (CORPUS / "engines").glob("*.toml")} == {c[0] for c in ENGINE_CASES}


def test_every_builtin_engine_file_loads():
    assert engine_errors() == []
    ids = engine_ids()
    assert ids[0] == DEFAULT_ENGINE
    assert set(ids) == {p.stem for p in builtin_engines_dir().glob("*.toml")}
    assert builtin_engines_dir() == builtin_presets_dir() / "engines"


def _factors(engine_id: str) -> dict:
    data, _ = read_toml(builtin_engines_dir() / f"{engine_id}.toml", what="engine")
    return data.get("factors", {})


def test_every_factor_that_differs_from_generic_names_its_source_and_date():
    """A profile's figure either is the generic value or comes from its file with a source and a date."""
    for engine_id in engine_ids():
        e = engine_profile(engine_id)
        for f in dataclasses.fields(Engine):
            if f.name in ("id", "name", "notes", "vendors", "sources", "source_dates", "superseded", "in_band",
                          "runtime_mode", "dequant_efficiency"):
                continue
            if getattr(e, f.name) != getattr(GENERIC, f.name):
                assert f.name in e.sources and e.source_dates[f.name], (engine_id, f.name)
        for family in e.dequant_efficiency:
            assert e.sources[family] and e.source_dates[family], (engine_id, family)


# every solved figure of the files, recomputed from the public runs in models/engines.py
def _derived(expression: str) -> float:
    return eval(expression, {"__builtins__": {}}, vars(model_engines))  # noqa: S307 (expressions from our own files)


_SI = {"kernel_overhead_us": 1e-6, "custom_all_reduce_latency_us": 1e-6, "request_overhead_ms": 1e-3}


def test_every_solved_figure_is_recomputed_from_its_runs():
    solved = 0
    for engine_id in engine_ids():
        for name, table in _factors(engine_id).items():
            expression = table.get("derived_from")
            if not expression:
                continue
            solved += 1
            value = table["value"] * _SI.get(name, 1.0)
            assert value == pytest.approx(_derived(expression), rel=1e-9), (engine_id, name, expression)
    assert solved >= 15


def test_the_llamacpp_shares_are_medians_of_the_scoreboard():
    """CUDA tg128 shares 1.219, 1.100, 1.068, 0.996, 0.968: the median 1.068 (ggml-org/llama.cpp discussions #15013);
    Metal 0.844, 0.662, 0.899, 0.862 (solved at 5.2 us per Metal dispatch): (0.844 + 0.862) / 2 = 0.853."""
    assert engine_profile("llamacpp").decode_gemv_bw_share == pytest.approx(1.068)
    assert engine_profile("llamacpp-metal").decode_gemv_bw_share == pytest.approx(0.853)


def test_the_generic_file_is_the_schema_default():
    """The generic profile's figures are the Engine defaults: models used without presets get the same numbers."""
    generic = engine_profile("generic")
    same = dataclasses.replace(generic, sources={}, source_dates={}, notes="", name=GENERIC.name)
    assert same == GENERIC


def test_an_engine_without_a_profile_is_named_with_close_ids():
    with pytest.raises(ModelInputError) as err:
        engine_profile("vlm")
    message = str(err.value)
    assert err.value.field == "engine" and "did you mean vllm" in message and "'unknown'" in message
    assert "\n" not in message
    with pytest.raises(ValueError, match=r"^rows.csv line 3: no engine profile 'sglan' \(did you mean sglang"):
        check_engine("sglan", "rows.csv line 3")
    assert check_engine("vllm") == "vllm"
