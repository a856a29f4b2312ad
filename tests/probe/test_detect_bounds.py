"""`roofline detect` on hostile or odd tool output (issue 22 section 8): capped output, bounded parsing, absurd
figures refused with a reason naming the tool, one time budget for all sources, amd-smi, names made printable.

No test measures time: work is counted (parser and matcher calls, the budget each source is given)."""

from __future__ import annotations

import argparse
import json
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline.tui.cli.detect import detection_text, run_detect
from roofline.tui.probe import detect
from roofline.tui.probe.detect import (
    MAX_DEVICES,
    MAX_TOOL_OUTPUT_BYTES,
    SourceResult,
    detect_accelerators,
    parse_amd_smi_json,
    parse_nvidia_smi_csv,
    parse_rocm_smi_json,
)
from tests.gpu_fakes import FakeGpuBox, FakeNvml, recorded

MIB = 1024**2
AMD_SMI_ARGS = ("static", "--asic", "--vram", "--json")


@pytest.fixture
def box(monkeypatch, tmp_path) -> FakeGpuBox:
    return FakeGpuBox(monkeypatch, tmp_path)


def problems_of(found) -> str:
    return " | ".join(found.problems)


def no_control_characters(text: str) -> bool:
    return not any(unicodedata.category(char) in ("Cc", "Cf") for char in text if char != "\n")


# --- absurd figures -------------------------------------------------------------------------------------------------

def test_memory_with_hundreds_of_digits_is_a_reason_naming_nvidia_smi(box):
    box.tool("nvidia-smi", "0, NVIDIA H100 80GB HBM3, " + "9" * 400 + "\n")  # float() of it is inf
    found = detect_accelerators(use_nvml=False)
    assert found.count == 0
    (reason,) = [p for p in found.problems if p.startswith("nvidia-smi")]
    assert "memory.total" in reason and "\n" not in reason and len(reason) < 300


def test_rocm_smi_memory_with_hundreds_of_digits_is_refused(box):
    box.tool("rocm-smi", json.dumps({"card0": {"Card Series": "AMD Instinct MI300X OAM",
                                               "VRAM Total Memory (B)": "7" * 400}}))
    found = detect_accelerators(use_nvml=False)
    assert found.count == 0
    assert any(p.startswith("rocm-smi output not understood") and "VRAM" in p for p in found.problems)


def test_nvml_memory_beyond_any_device_is_refused(box):
    box.use_nvml(FakeNvml(devices=[("NVIDIA H100 80GB HBM3", 10**400)]))
    found = detect_accelerators()
    assert found.count == 0 and any(p.startswith("NVML") for p in found.problems)


@pytest.mark.parametrize("memory_mib, plausible", [("81559", True), ("0", True), ("16777216", True),
                                                   ("16777217", False), ("1e5", False), ("٣٤", False)])
def test_memory_bounds(memory_mib, plausible):
    """16 TiB = 16,777,216 MiB is the largest memory one device may report; Arabic-Indic digits are not ASCII."""
    text = f"0, NVIDIA H100 80GB HBM3, {memory_mib}\n"
    if plausible:
        (device,) = parse_nvidia_smi_csv(text)
        assert device.memory_bytes == (int(memory_mib) * MIB or None)  # 0 MiB: unknown, not a size
    else:
        with pytest.raises(ValueError, match="memory.total"):
            parse_nvidia_smi_csv(text)


def test_index_with_hundreds_of_digits_is_refused():
    with pytest.raises(ValueError):
        parse_nvidia_smi_csv("9" * 400 + ", NVIDIA H100 80GB HBM3, 81559\n")


# --- nesting --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    '{"card0": ' + "[" * 100_000,  # the C scanner recurses on each bracket
    '{"card0": {"Card Series": ' + "[" * 900 + "]" * 900 + ', "VRAM Total Memory (B)": "1"}}',  # str() recurses
])
def test_deeply_nested_rocm_smi_json_is_a_reason(box, text):
    box.tool("rocm-smi", text)
    found = detect_accelerators(use_nvml=False)
    assert found.count == 0 and any(p.startswith("rocm-smi") for p in found.problems)


def test_deeply_nested_amd_smi_json_is_a_reason():
    with pytest.raises(ValueError):
        parse_amd_smi_json("[" * 100_000)


# --- output size and the time budget ----------------------------------------------------------------------------------

def test_a_listing_over_the_cap_is_cut_and_never_parsed(box, monkeypatch, tmp_path):
    listing = tmp_path / "ten-mb.csv"
    row = "0, NVIDIA H100 80GB HBM3, 81559\n"
    listing.write_text(row * (10 * MIB // len(row)))
    box.tool("nvidia-smi", listing)
    parsed: list[int] = []
    monkeypatch.setattr(detect, "parse_nvidia_smi_csv", lambda text: parsed.append(len(text)) or ())
    found = detect_accelerators(use_nvml=False)
    assert parsed == []  # stopped reading at the cap: nothing to parse
    assert any(p.startswith("nvidia-smi printed more than 1 MiB") for p in found.problems)


def test_output_just_under_the_cap_is_read_whole():
    text = "0, NVIDIA H100 80GB HBM3, 81559\n"
    assert MAX_TOOL_OUTPUT_BYTES == 1024 * 1024  # the help states 1 MiB
    assert len(parse_nvidia_smi_csv(text)) == 1


def test_thousands_of_devices_are_refused_before_matching(box, monkeypatch):
    rows = "".join(f"{i}, NVIDIA Fantasy {i}, 81559\n" for i in range(5000))  # 5,000 names: 5,000 matches before
    box.tool("nvidia-smi", rows)
    matched: list[str] = []
    real_match = detect.match_part
    monkeypatch.setattr(detect, "match_part", lambda name, *rest: matched.append(name) or real_match(name, *rest))
    found = detect_accelerators(use_nvml=False)
    assert found.count == 0 and matched == []
    assert any(f"more than {MAX_DEVICES} devices" in p for p in found.problems)


def test_the_timeout_is_one_budget_for_every_source(monkeypatch):
    """Each source gets what the ones before it left; one that used it all leaves the rest a reason, not time."""
    now = [100.0]
    given_s: list[tuple[str, float]] = []

    def source(name: str, spends_s: float):
        def read(timeout_s: float) -> SourceResult:
            given_s.append((name, timeout_s))
            now[0] += min(spends_s, timeout_s)
            return SourceResult(problem=f"{name} did not answer within {timeout_s:g} s")
        return read

    monkeypatch.setattr(detect, "_now", lambda: now[0])
    monkeypatch.setattr(detect, "SOURCES", (("nvml", source("nvml", 0.5)), ("nvidia-smi", source("nvidia-smi", 30)),
                                            ("amd-smi", source("amd-smi", 30)), ("rocm-smi", source("rocm-smi", 30))))
    monkeypatch.delenv("ROOFLINE_NO_DETECT", raising=False)
    found = detect_accelerators(timeout_s=2.0)
    assert given_s == [("nvml", 2.0), ("nvidia-smi", 1.5)]  # 2 s in all: nvml took 0.5, nvidia-smi the rest
    assert now[0] - 100.0 == pytest.approx(2.0)
    assert [p for p in found.problems if "skipped" in p] == [
        "amd-smi skipped: the 2 s detection budget was spent", "rocm-smi skipped: the 2 s detection budget was spent"]


# --- amd-smi --------------------------------------------------------------------------------------------------------

def test_amd_smi_rocm7_layout(box, capsys):
    box.tool("amd-smi", recorded("amd-smi-static-mi300x-x8-rocm7.json"), expect_args=AMD_SMI_ARGS)
    found = detect_accelerators(use_nvml=False)
    assert (found.source, found.preset_id, found.count) == ("amd-smi", "mi300x", 8)
    assert found.devices[7].name == "AMD Instinct MI300X"
    assert found.devices[7].memory_bytes == 196592 * MIB  # amd-smi's "MB" is MiB (total / (1024 * 1024))
    assert found.problems == ()  # rocm-smi was never needed


def test_amd_smi_rocm6_layout_with_a_warning_line(box):
    text = "WARNING: AMD SMI is in beta\n" + recorded("amd-smi-static-mi250x-x2-rocm6.json").read_text()
    box.tool("amd-smi", text, expect_args=AMD_SMI_ARGS)
    found = detect_accelerators(use_nvml=False)
    assert (found.source, found.preset_id, found.count) == ("amd-smi", "mi250x", 2)
    assert found.devices[0].memory_bytes == 68_702_699_520  # the same GCD as rocm-smi's recording reports


def test_amd_smi_comes_before_rocm_smi_and_rocm_smi_is_the_fallback(box):
    box.tool("rocm-smi", recorded("rocm-smi-mi250x-rocm5.json"))
    box.tool("amd-smi", recorded("amd-smi-static-mi300x-x8-rocm7.json"))
    assert detect_accelerators(use_nvml=False).source == "amd-smi"
    box.tool("amd-smi", "ERROR: amdgpu driver not loaded\n", exit_code=0)
    found = detect_accelerators(use_nvml=False)
    assert found.source == "rocm-smi" and any(p.startswith("amd-smi output not understood") for p in found.problems)


@pytest.mark.parametrize("size, memory_bytes", [
    ({"value": 196592, "unit": "MB"}, 196592 * MIB), ("196592 MB", 196592 * MIB), (196592, 196592 * MIB),
    ({"value": 192, "unit": "GB"}, 192 * 1024**3), ({"value": "N/A", "unit": "MB"}, None), ("N/A", None)])
def test_amd_smi_vram_size_spellings(size, memory_bytes):
    (device,) = parse_amd_smi_json(json.dumps([{"gpu": 0, "asic": {"market_name": "AMD Instinct MI300X"},
                                                "vram": {"size": size}}]))
    assert device.memory_bytes == memory_bytes


@pytest.mark.parametrize("size", [{"value": 10**400, "unit": "MB"}, {"value": 1, "unit": "PB"}, "9" * 5000 + " MB",
                                  {"value": -1, "unit": "MB"}, {"value": 1e300, "unit": "MB"}])
def test_amd_smi_absurd_sizes_are_refused(size):
    with pytest.raises(ValueError, match="vram"):
        parse_amd_smi_json(json.dumps([{"gpu": 0, "asic": {"market_name": "AMD Instinct MI300X"},
                                        "vram": {"size": size}}]))


# --- names ----------------------------------------------------------------------------------------------------------

def test_control_characters_never_reach_the_terminal(box, capsys):
    box.tool("nvidia-smi", "0, NVIDIA \x1b[31mH100\x07 80GB\u202e HBM3\x9b, 81559\n")
    found = detect_accelerators(use_nvml=False)
    assert found.devices[0].name == "NVIDIA H100 80GB HBM3"  # the escape sequence goes whole, not only its ESC
    assert found.preset_id == "h100-sxm"
    assert run_detect(argparse.Namespace(format="text")) == 0
    assert no_control_characters(capsys.readouterr().out)


def test_control_characters_in_a_failing_tool_s_message_are_stripped(box):
    box.tool("nvidia-smi", "\x1b]0;owned\x07NVIDIA-SMI has failed\x1b[2J\n", exit_code=9)
    found = detect_accelerators(use_nvml=False)
    assert all(no_control_characters(problem) for problem in found.problems)
    assert "nvidia-smi failed (exit 9): NVIDIA-SMI has failed" in found.problems


def test_nvml_names_are_cleaned_too(box):
    box.use_nvml(FakeNvml(devices=[("NVIDIA H200\x1b[5m", 143771 * MIB)]))
    found = detect_accelerators()
    assert found.devices[0].name == "NVIDIA H200" and no_control_characters(detection_text(found))


def test_a_very_long_name_is_cut():
    (device,) = parse_nvidia_smi_csv("0, NVIDIA " + "X" * 100_000 + ", 81559\n")
    assert len(device.name) <= 200


# --- any text: a reason or devices, never another exception ------------------------------------------------------

@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from('0123456789,[]{}":. \n\x1bNVIDIAcard'), max_size=300))
def test_parsers_raise_only_value_error(text):
    for parse in (parse_nvidia_smi_csv, parse_rocm_smi_json, parse_amd_smi_json):
        try:
            devices = parse(text)
        except ValueError:
            continue
        assert len(devices) <= MAX_DEVICES
        for device in devices:
            assert no_control_characters(device.name)
            assert device.memory_bytes is None or 0 < device.memory_bytes <= detect.MAX_DEVICE_MEMORY_BYTES


# --- a user presets folder the OS refuses -----------------------------------------------------------------------------

@pytest.mark.parametrize("folder", ["~nouser-roofline/presets", "/tmp/" + "p" * 300])
def test_a_refused_presets_folder_does_not_stop_detection(box, monkeypatch, capsys, folder):
    box.tool("nvidia-smi", recorded("nvidia-smi-h100-sxm-x8.csv"))
    monkeypatch.setenv("ROOFLINE_PRESETS", folder)
    assert detect_accelerators(use_nvml=False).preset_id == "h100-sxm"
    assert run_detect(argparse.Namespace(format="json")) == 0
    assert json.loads(capsys.readouterr().out)["preset"] == "h100-sxm"


def test_preset_ids_that_cannot_be_listed_fall_back_to_the_built_in_ones(box, monkeypatch):
    from roofline.presets.errors import PresetError
    from roofline.presets.safe_files import FileRefusedError

    def refuse():
        raise FileRefusedError(PresetError("/x", None, None, "cannot read folder: Permission denied"))

    box.tool("nvidia-smi", recorded("nvidia-smi-h200-x8.csv"))
    monkeypatch.setattr(detect, "_default_preset_ids", refuse)
    assert detect_accelerators(use_nvml=False).preset_id == "h200"
