"""Preset data (built-in hardware and model TOML files), user preset folders and local config.json files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from roofline.presets import builtin_presets_dir, load_catalog, resolve_model, user_presets_dir
from roofline.presets.loader import ENV_PRESETS_DIR, PresetFileError


def _ids(text: str) -> list[str]:
    """Ids written as a block of words."""
    return text.split()


REQUIRED_HARDWARE = _ids("""
k20x k40 p100-sxm2 v100-sxm2 t4 a10 a10g a100-sxm4-40gb a100-sxm4-80gb a100-pcie-80gb l4 l40s h100-sxm
h100-pcie h100-nvl h200 gh200 b200 gb200 b300 mi100 mi250x mi300x mi325x mi355x rx-7900-xtx tpu-v4 tpu-v5e
tpu-v5p tpu-v6e tpu-v7 gaudi2 gaudi3 m1 m1-max m2-ultra m3-max m4-max rtx-3090 rtx-3090-ti rtx-4090 rtx-5090
rtx-6000-ada jetson-agx-orin-64gb m2090 gtx-680 k20 k80 m40
""")
REQUIRED_MODELS = _ids("""
llama-2-7b llama-2-13b llama-2-70b codellama-34b llama-3-8b llama-3-70b llama-3.1-8b llama-3.1-70b
llama-3.1-405b llama-3.3-70b mistral-7b mixtral-8x7b mixtral-8x22b qwen2.5-7b qwen2.5-72b qwen3-235b-a22b
deepseek-v3 gemma-2-9b gemma-2-27b phi-3-mini gpt-oss-20b gpt-oss-120b
""")
GIB = 1024**3


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    """The built-in catalog only (an empty user folder, so nothing on this machine leaks in)."""
    return load_catalog(user_dir=tmp_path_factory.mktemp("no-user-presets"))


# ---- built-in presets load -------------------------------------------------------------------
def test_builtin_presets_load_without_errors(catalog):
    """Every built-in hardware and model file parses and validates."""
    assert catalog.errors == []


def test_required_hardware_ids_exist(catalog):
    """Every hardware id the project promises has a preset."""
    missing = sorted(set(REQUIRED_HARDWARE) - set(catalog.hardware))
    assert missing == []


def test_required_model_ids_exist(catalog):
    """Every model id the project promises has a preset."""
    missing = sorted(set(REQUIRED_MODELS) - set(catalog.models))
    assert missing == []


# ---- hardware plausibility -------------------------------------------------------------------
@pytest.mark.parametrize("hw_id", REQUIRED_HARDWARE)
def test_hardware_values_are_plausible(catalog, hw_id):
    """Year, bandwidth, capacity, peaks, source, fractions and ridge are in physically sane ranges (SI units)."""
    hw = catalog.hardware[hw_id]
    assert 2010 <= hw.year <= 2026
    assert 50e9 <= hw.mem_bw_bytes_per_s <= 10e12
    assert 1 * GIB <= hw.memory_capacity_bytes <= 300 * GIB
    assert hw.dense_peak_flops_per_s, "no peaks"
    for dtype, peak in hw.dense_peak_flops_per_s.items():
        assert 0.05e12 <= peak <= 25_000e12, f"{dtype} peak {peak} FLOP/s"
    assert hw.source.strip()
    peaks = hw.dense_peak_flops_per_s
    if "bf16" in peaks and "fp8" in peaks:
        assert peaks["fp8"] >= peaks["bf16"]
    for dtype, fraction in hw.achievable_matmul_fraction.items():
        assert 0 < fraction <= 1, dtype
    if hw.achievable_mem_bw_fraction is not None:
        assert 0 < hw.achievable_mem_bw_fraction <= 1
    ridge = hw.matmul_peak("bf16")[1] / hw.mem_bw_bytes_per_s
    assert 1 <= ridge <= 1000


@pytest.mark.parametrize(
    ("hw_id", "ridge"),
    [("h100-sxm", 989.4e12 / 3.35e12), ("h100-pcie", 378), ("h200", 206), ("mi300x", 247), ("a100-sxm4-80gb", 153)],
)
def test_bf16_ridge_matches_memory_wall_claims(catalog, hw_id, ridge):
    """bf16 ridge points agree with data/memory-wall-claims.md (H100 SXM exactly 295.3; others as rounded there)."""
    hw = catalog.hardware[hw_id]
    got = hw.ridge_flops_per_byte("bf16")
    tolerance = 1e-3 if hw_id == "h100-sxm" else 0.5 / ridge  # the table rounds to whole FLOP/byte
    assert got == pytest.approx(ridge, rel=tolerance)


# ---- models ------------------------------------------------------------------------------------
@pytest.mark.parametrize("model_id", REQUIRED_MODELS)
def test_model_params_match_published(catalog, model_id):
    """The parameter count derived from the config is within 2% of the published total."""
    model = catalog.models[model_id]
    assert model.published_params is not None
    assert model.params == pytest.approx(model.published_params, rel=0.02)


MOE_MODELS = ["mixtral-8x7b", "mixtral-8x22b", "qwen3-235b-a22b", "deepseek-v3"]


@pytest.mark.parametrize("model_id", MOE_MODELS)
def test_moe_active_params_match_published(catalog, model_id):
    """For MoE models, parameters used per token are within 2% of the published active count."""
    model = catalog.models[model_id]
    assert model.moe is not None
    assert model.active_params == pytest.approx(model.published_active_params, rel=0.02)


@pytest.mark.parametrize("model_id", ["gpt-oss-20b", "gpt-oss-120b"])
def test_gpt_oss_active_params_match_published_without_embedding(catalog, model_id):
    """OpenAI's gpt-oss model card counts active parameters without the input embedding table (a lookup,
    not a matmul), so the comparison is active_params - embedding_params() against the published figure."""
    model = catalog.models[model_id]
    assert model.moe is not None
    assert model.active_params - model.embedding_params() == pytest.approx(model.published_active_params, rel=0.02)
    # and the embedding really matters here: without subtracting it the figure would be off by > 2%
    assert model.active_params != pytest.approx(model.published_active_params, rel=0.02)


@pytest.mark.parametrize("model_id", ["gpt-oss-20b", "gpt-oss-120b", "deepseek-v3"])
def test_moe_models_are_moe(catalog, model_id):
    """gpt-oss and DeepSeek-V3 are mixture-of-experts models: fewer active than total parameters."""
    model = catalog.models[model_id]
    assert model.moe is not None
    assert model.active_params < model.params


@pytest.mark.parametrize("model_id", ["gemma-2-9b", "gemma-2-27b"])
def test_gemma2_has_sliding_window_layer_groups(catalog, model_id):
    """Gemma 2 alternates sliding-window (4096) and global layers: two groups of equal size."""
    groups = catalog.models[model_id].layer_groups
    windows = sorted((g.window_tokens or 0, g.count) for g in groups)
    assert len(windows) == 2
    assert windows[0][0] == 0 and windows[1][0] == 4096
    assert windows[0][1] == windows[1][1]


def test_llama3_8b_uses_gqa(catalog):
    """Llama 3 8B: 32 query heads sharing 8 KV heads."""
    attention = catalog.models["llama-3-8b"].attention
    assert (attention.num_heads, attention.num_kv_heads) == (32, 8)


# ---- user presets --------------------------------------------------------------------------
BROKEN_TOML = 'id = "broken"\nname = "Broken"\nsource = "x"\nthis line is not toml\n'


def _user_folder(tmp_path: Path) -> Path:
    """A user preset folder with one override, one broken TOML file and two files with a bad value."""
    user = tmp_path / "user"
    (user / "hardware").mkdir(parents=True)
    (user / "models").mkdir()
    h100 = (builtin_presets_dir() / "hardware" / "h100-sxm.toml").read_text(encoding="utf-8")
    assert 'name = "NVIDIA H100 SXM5 80GB"' in h100
    (user / "hardware" / "h100-sxm.toml").write_text(h100.replace('name = "NVIDIA H100 SXM5 80GB"',
                                                                  'name = "My H100"'), encoding="utf-8")
    negative_bw = h100.replace('id = "h100-sxm"', 'id = "slow-h100"').replace("mem_bw_gb_per_s = 3350",
                                                                             "mem_bw_gb_per_s = -5")
    (user / "hardware" / "slow-h100.toml").write_text(negative_bw, encoding="utf-8")
    (user / "models" / "broken.toml").write_text(BROKEN_TOML, encoding="utf-8")
    llama = (builtin_presets_dir() / "models" / "llama-3-8b.toml").read_text(encoding="utf-8")
    zero_heads = llama.replace('id = "llama-3-8b"', 'id = "zero-heads"').replace("num_attention_heads = 32",
                                                                                 "num_attention_heads = 0")
    (user / "models" / "zero-heads.toml").write_text(zero_heads, encoding="utf-8")
    return user


def _line_of(path: Path, needle: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if line.startswith(needle))


def test_user_preset_overrides_builtin_by_id(tmp_path):
    """A user hardware file with a built-in id replaces the built-in one."""
    user = _user_folder(tmp_path)
    catalog = load_catalog(user_dir=user)
    assert catalog.hardware["h100-sxm"].name == "My H100"
    assert catalog.origins["hardware/h100-sxm"] == user / "hardware" / "h100-sxm.toml"


def test_broken_user_files_are_reported_and_skipped(tmp_path):
    """Broken user files are listed in catalog.errors; every built-in still loads."""
    user = _user_folder(tmp_path)
    catalog = load_catalog(user_dir=user)
    assert sorted(Path(e.path).name for e in catalog.errors) == ["broken.toml", "slow-h100.toml", "zero-heads.toml"]
    assert "slow-h100" not in catalog.hardware
    assert not {"broken", "zero-heads"} & set(catalog.models)
    assert set(REQUIRED_HARDWARE) <= set(catalog.hardware)
    assert set(REQUIRED_MODELS) <= set(catalog.models)


def test_broken_toml_error_names_file_and_line(tmp_path):
    """A TOML syntax error is reported with its path and the line it is on."""
    user = _user_folder(tmp_path)
    errors = {Path(e.path).name: e for e in load_catalog(user_dir=user).errors}
    error = errors["broken.toml"]
    assert error.path == str(user / "models" / "broken.toml")
    assert error.line == 4


def test_bad_hardware_value_error_names_line_and_key(tmp_path):
    """mem_bw_gb_per_s = -5 is reported at that key's line, naming the key."""
    user = _user_folder(tmp_path)
    errors = {Path(e.path).name: e for e in load_catalog(user_dir=user).errors}
    error = errors["slow-h100.toml"]
    path = user / "hardware" / "slow-h100.toml"
    assert error.path == str(path)
    assert error.key == "mem_bw_gb_per_s"
    assert error.line == _line_of(path, "mem_bw_gb_per_s")
    assert "-5" in str(error)


def test_bad_model_config_value_error_names_line_and_key(tmp_path):
    """[config] num_attention_heads = 0 is reported at that line, naming config.num_attention_heads."""
    user = _user_folder(tmp_path)
    errors = {Path(e.path).name: e for e in load_catalog(user_dir=user).errors}
    error = errors["zero-heads.toml"]
    path = user / "models" / "zero-heads.toml"
    assert error.path == str(path)
    assert error.key == "config.num_attention_heads"
    assert error.line == _line_of(path, "num_attention_heads")


def test_env_var_sets_user_presets_dir(tmp_path, monkeypatch):
    """$ROOFLINE_PRESETS names the user preset folder, and load_catalog() uses it by default."""
    user = _user_folder(tmp_path)
    monkeypatch.setenv(ENV_PRESETS_DIR, str(user))
    assert ENV_PRESETS_DIR == "ROOFLINE_PRESETS"
    assert user_presets_dir() == user
    assert load_catalog().hardware["h100-sxm"].name == "My H100"


def test_without_env_var_user_dir_is_platform_config(monkeypatch):
    """Without $ROOFLINE_PRESETS the user folder is the platform config folder's presets/."""
    monkeypatch.delenv(ENV_PRESETS_DIR, raising=False)
    folder = user_presets_dir()
    assert folder.name == "presets"
    assert "roofline" in folder.parts


# ---- resolve_model with local config.json ----------------------------------------------------
LLAMA_CONFIG = {
    "model_type": "llama", "hidden_size": 512, "intermediate_size": 1024, "num_hidden_layers": 4,
    "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 1000, "tie_word_embeddings": False,
    "max_position_embeddings": 2048,
}


def _expected_params(c: dict) -> int:
    h, head = c["hidden_size"], c["hidden_size"] // c["num_attention_heads"]
    attn = h * head * (c["num_attention_heads"] * 2 + c["num_key_value_heads"] * 2)
    mlp = 3 * h * c["intermediate_size"]
    return c["num_hidden_layers"] * (attn + mlp + 2 * h) + 2 * c["vocab_size"] * h + h


def test_resolve_model_from_config_file(tmp_path):
    """A path to a config.json loads that architecture (parameters counted by hand)."""
    path = tmp_path / "tiny" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(LLAMA_CONFIG, indent=2), encoding="utf-8")
    model = resolve_model(str(path))
    assert model.params == _expected_params(LLAMA_CONFIG)
    assert (model.attention.num_heads, model.attention.num_kv_heads) == (8, 2)
    assert model.name == "tiny"


def test_resolve_model_from_folder(tmp_path):
    """A folder holding config.json loads the same as the file itself."""
    folder = tmp_path / "tiny-llama"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(LLAMA_CONFIG), encoding="utf-8")
    model = resolve_model(str(folder))
    assert model.params == _expected_params(LLAMA_CONFIG)
    assert model.num_layers == 4


def test_resolve_model_by_preset_id(tmp_path):
    """A plain id resolves to the preset of that id."""
    assert resolve_model("llama-3-8b", user_dir=tmp_path).id == "llama-3-8b"


def test_resolve_model_unknown_id(tmp_path):
    """An id that is neither a preset nor a path raises KeyError."""
    with pytest.raises(KeyError):
        resolve_model("no-such-model", user_dir=tmp_path)


def test_resolve_model_missing_path(tmp_path):
    """A path that does not exist raises PresetFileError naming it."""
    missing = tmp_path / "nowhere" / "config.json"
    with pytest.raises(PresetFileError) as info:
        resolve_model(str(missing))
    assert str(missing) in str(info.value)


def test_resolve_model_invalid_json_gives_line(tmp_path):
    """Invalid JSON raises PresetFileError carrying the line of the syntax error."""
    path = tmp_path / "config.json"
    path.write_text('{\n  "model_type": "llama",\n  "hidden_size": 512,,\n}\n', encoding="utf-8")
    with pytest.raises(PresetFileError) as info:
        resolve_model(str(path))
    assert info.value.error.line == 3
    assert info.value.error.path == str(path)


def test_resolve_model_unsupported_model_type(tmp_path):
    """An unsupported model_type is reported naming model_type and the bad value."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**LLAMA_CONFIG, "model_type": "bert"}, indent=2), encoding="utf-8")
    with pytest.raises(PresetFileError) as info:
        resolve_model(str(path))
    assert info.value.error.key == "model_type"
    assert "bert" in str(info.value)
    assert info.value.error.line == 2


@pytest.mark.parametrize(
    ("extra", "key"),
    [
        ({"model_type": "deepseek_v3", "first_k_dense_replace": "x"}, "first_k_dense_replace"),
        ({"tie_word_embeddings": "false"}, "tie_word_embeddings"),
        ({"max_position_embeddings": True}, "max_position_embeddings"),
        ({"attention_bias": 1}, "attention_bias"),
        ({"text_config": {"model_type": "llama"}}, "text_config"),
    ],
    ids=["first_k_dense_replace-string", "tie-string", "max-positions-bool", "bias-int", "multimodal"],
)
def test_resolve_model_ill_typed_keys_raise_preset_error(tmp_path, extra, key):
    """A config.json with a wrongly typed optional key is a PresetFileError naming the key, not a crash."""
    config = {**LLAMA_CONFIG, "moe_intermediate_size": 256, "n_routed_experts": 4, "num_experts_per_tok": 2,
              "qk_nope_head_dim": 32, "qk_rope_head_dim": 32, "v_head_dim": 64, "kv_lora_rank": 64, **extra}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    with pytest.raises(PresetFileError) as info:
        resolve_model(str(path))
    assert info.value.error.key == key


def test_resolve_model_accepts_null_optional_keys(tmp_path):
    """JSON null for an optional key (text_config, sliding_window) means absent, as in transformers."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**LLAMA_CONFIG, "text_config": None, "sliding_window": None}), encoding="utf-8")
    assert resolve_model(str(path)).num_layers == LLAMA_CONFIG["num_hidden_layers"]


def test_user_folder_may_lack_a_kind_subfolder(tmp_path):
    """A user folder with hardware/ but no models/ still loads (only the hardware file's error is reported)."""
    user = _user_folder(tmp_path)
    shutil.rmtree(user / "models")
    catalog = load_catalog(user_dir=user)
    assert [Path(e.path).name for e in catalog.errors] == ["slow-h100.toml"]
