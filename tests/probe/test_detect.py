"""`roofline detect`: sources (NVML, nvidia-smi, rocm-smi) against stand-ins and recorded outputs, the part->preset
table, the JSON and text output. No GPU needed: PATH holds only stand-in executables and NVML is a fake module."""

from __future__ import annotations

import argparse
import json
import time

import pytest

from roofline.presets.loader import preset_ids
from roofline.tui.cli.detect import add_detect_parser, run_detect
from roofline.tui.probe import detect
from roofline.tui.probe.detect import (
    DISABLED_REASON,
    DetectedDevice,
    detect_accelerators,
    parse_nvidia_smi_csv,
    parse_rocm_smi_json,
)
from roofline.tui.probe.match import GIB_BYTES, PART_RULES, match_part
from tests.gpu_fakes import (
    NVIDIA_SMI_QUERY_ARGS,
    ROCM_SMI_QUERY_ARGS,
    FakeGpuBox,
    FakeNvml,
    FakeNVMLError,
    recorded,
)

HARDWARE_IDS = frozenset(preset_ids("hardware"))
MIB = 1024**2


@pytest.fixture
def box(monkeypatch, tmp_path) -> FakeGpuBox:
    return FakeGpuBox(monkeypatch, tmp_path)


def nvidia_smi(box: FakeGpuBox, name: str, exit_code: int = 0) -> None:
    box.tool("nvidia-smi", recorded(name), exit_code=exit_code, expect_args=NVIDIA_SMI_QUERY_ARGS)


def rocm_smi(box: FakeGpuBox, name: str) -> None:
    box.tool("rocm-smi", recorded(name), expect_args=ROCM_SMI_QUERY_ARGS)


def detect_json(capsys) -> dict:
    assert run_detect(argparse.Namespace(format="json")) == 0
    return json.loads(capsys.readouterr().out)


def detect_text(capsys) -> str:
    assert run_detect(argparse.Namespace(format="text")) == 0
    return capsys.readouterr().out


# --- recorded boxes ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("recording", "preset", "count"), [
    ("nvidia-smi-h100-sxm-x8.csv", "h100-sxm", 8),
    ("nvidia-smi-h100-pcie.csv", "h100-pcie", 1),
    ("nvidia-smi-a100-sxm4-80gb-x4.csv", "a100-sxm4-80gb", 4),
    ("nvidia-smi-rtx-4090.csv", "rtx-4090", 1),
    ("nvidia-smi-h200-x8.csv", "h200", 8),
])
def test_recorded_nvidia_boxes_map_to_their_preset(box, recording, preset, count):
    nvidia_smi(box, recording)
    found = detect_accelerators()
    assert (found.source, found.preset_id, found.count) == ("nvidia-smi", preset, count)
    assert [device.index for device in found.devices] == list(range(count))
    assert found.problems == ()  # NVML missing is normal, not a problem, once nvidia-smi answered


def test_h100_sxm_box_text_names_the_preset_and_the_explorer_command(box, capsys):
    nvidia_smi(box, "nvidia-smi-h100-sxm-x8.csv")
    assert detect_text(capsys).splitlines() == [
        "8 x NVIDIA H100 80GB HBM3 (79.6 GiB) via nvidia-smi -> preset h100-sxm",
        "open it: roofline --hardware h100-sxm --tp 8",
    ]


def test_single_device_hint_has_no_tp(box, capsys):
    nvidia_smi(box, "nvidia-smi-rtx-4090.csv")
    assert detect_text(capsys).splitlines() == [
        "1 x NVIDIA GeForce RTX 4090 (24.0 GiB) via nvidia-smi -> preset rtx-4090",
        "open it: roofline --hardware rtx-4090",
    ]


def test_json_contract(box, capsys):
    nvidia_smi(box, "nvidia-smi-h200-x8.csv")
    out = detect_json(capsys)
    assert {"devices", "count", "preset", "preset_reason", "source", "problems"} <= set(out)
    assert out["count"] == 8 and out["preset"] == "h200" and out["source"] == "nvidia-smi"
    assert out["devices"][0] == {"index": 0, "name": "NVIDIA H200", "memory_bytes": 143771 * MIB}
    assert "H200" in out["preset_reason"] and out["problems"] == []
    assert out["types"] == [{"name": "NVIDIA H200", "memory_bytes": 143771 * MIB, "count": 8, "preset": "h200",
                             "preset_reason": out["preset_reason"]}]


def test_mixed_box_takes_the_most_common_type_and_says_so(box, capsys):
    nvidia_smi(box, "nvidia-smi-mixed-4090-3090.csv")
    found = detect_accelerators()
    assert found.count == 3 and found.preset_id == "rtx-4090" and found.preset_count == 2
    assert found.preset_reason.startswith("mixed box: 2 x NVIDIA GeForce RTX 4090 (24.0 GiB), "
                                          "1 x NVIDIA GeForce RTX 3090 (24.0 GiB); using the most common type")
    assert [(g.name, g.count, g.preset_id) for g in found.groups] == [
        ("NVIDIA GeForce RTX 4090", 2, "rtx-4090"), ("NVIDIA GeForce RTX 3090", 1, "rtx-3090")]
    text = detect_text(capsys).splitlines()
    assert text[:2] == ["2 x NVIDIA GeForce RTX 4090 (24.0 GiB) via nvidia-smi -> preset rtx-4090",
                        "1 x NVIDIA GeForce RTX 3090 (24.0 GiB) via nvidia-smi -> preset rtx-3090"]
    assert text[2].startswith("mixed box:") and text[3] == "open it: roofline --hardware rtx-4090 --tp 2"


def test_mixed_box_with_a_tie_uses_device_0(box):
    box.tool("nvidia-smi", "0, NVIDIA L4, 23034\n1, NVIDIA A10G, 23028\n")
    found = detect_accelerators()
    assert found.preset_id == "l4" and "device 0's type" in found.preset_reason


def test_rocm_smi_mi300x_box(box, capsys):
    rocm_smi(box, "rocm-smi-mi300x-x8.json")
    out = detect_json(capsys)
    assert (out["source"], out["preset"], out["count"]) == ("rocm-smi", "mi300x", 8)
    assert out["devices"][7] == {"index": 7, "name": "AMD Instinct MI300X OAM", "memory_bytes": 205822885888}
    # nvidia-smi was tried first and is simply absent: not a problem once rocm-smi answered
    assert out["problems"] == []


def test_rocm5_key_spelling_warning_line_and_pci_id_model(box):
    rocm_smi(box, "rocm-smi-mi250x-rocm5.json")
    found = detect_accelerators()
    assert found.source == "rocm-smi" and found.preset_id == "mi250x" and found.count == 2
    assert found.devices[0].name == "AMD INSTINCT MI200 (MCM) OAM LC MBA HPE C2 [Instinct MI250X]"


# --- no GPU, broken drivers, hangs, garbage ---------------------------------------------------------------------

def test_nothing_installed_is_a_clear_message_and_exit_0(box, capsys):
    assert detect_text(capsys).strip() == (
        "no accelerators found: NVML (nvidia-ml-py) not installed; nvidia-smi not on PATH; amd-smi not on PATH; "
        "rocm-smi not on PATH")
    out = detect_json(capsys)
    assert out["devices"] == [] and out["count"] == 0 and out["preset"] is None and out["source"] is None
    assert out["problems"] == ["NVML (nvidia-ml-py) not installed", "nvidia-smi not on PATH", "amd-smi not on PATH",
                               "rocm-smi not on PATH"]


def test_no_devices_found_exit_6(box):
    nvidia_smi(box, "nvidia-smi-no-devices.txt", exit_code=6)
    found = detect_accelerators()
    assert found.count == 0 and found.preset_id is None
    assert "nvidia-smi failed (exit 6): No devices were found" in found.problems


def test_driver_error_exit_9_falls_through_to_rocm_smi(box):
    nvidia_smi(box, "nvidia-smi-driver-error.txt", exit_code=9)
    rocm_smi(box, "rocm-smi-mi300x-x8.json")
    found = detect_accelerators()
    assert found.source == "rocm-smi" and found.preset_id == "mi300x"
    # a failure (not an absence) stays visible even though another source answered
    assert len(found.problems) == 1
    assert found.problems[0].startswith("nvidia-smi failed (exit 9): NVIDIA-SMI has failed because it couldn't "
                                        "communicate with the NVIDIA driver")


def test_driver_error_text_output(box, capsys):
    nvidia_smi(box, "nvidia-smi-driver-error.txt", exit_code=9)
    text = detect_text(capsys)
    assert text.startswith("no accelerators found: NVML (nvidia-ml-py) not installed; nvidia-smi failed (exit 9): "
                           "NVIDIA-SMI has failed")
    assert text.rstrip().endswith("rocm-smi not on PATH")


def test_a_hanging_tool_is_bounded_by_the_timeout(box):
    box.tool("nvidia-smi", recorded("nvidia-smi-h100-sxm-x8.csv"), sleep_s=30)
    started = time.monotonic()
    found = detect_accelerators(timeout_s=0.3)
    assert time.monotonic() - started < 5  # the stand-in's shell and its sleep were both killed
    assert found.count == 0
    assert "nvidia-smi did not answer within 0.3 s" in found.problems


@pytest.mark.parametrize("garbage", ["<html>proxy error</html>\n", "0, NVIDIA H100 80GB HBM3, lots\n", "\x00\xff"])
def test_garbage_nvidia_smi_output_is_a_reason(box, garbage):
    box.tool("nvidia-smi", garbage)
    found = detect_accelerators()
    assert found.count == 0
    assert any(problem.startswith("nvidia-smi output not understood") for problem in found.problems)


@pytest.mark.parametrize("garbage", ["", "ERROR: GPU[0] : Unable to get product name\n", '{"card0": ', "[1, 2]"])
def test_garbage_rocm_smi_output_is_a_reason(box, garbage):
    box.tool("rocm-smi", garbage)  # rocm-smi often exits 0 even when it failed
    found = detect_accelerators()
    assert found.count == 0
    assert any(problem.startswith("rocm-smi ") for problem in found.problems)


def test_stand_in_rejects_the_wrong_query(box):
    box.tool("nvidia-smi", recorded("nvidia-smi-h100-pcie.csv"), expect_args=("--query-gpu=uuid",))
    found = detect_accelerators()
    assert found.count == 0 and "nvidia-smi failed (exit 97)" in found.problems[1]


def test_tool_fallback_folder_is_searched(box, monkeypatch, tmp_path):
    rocm_bin = tmp_path / "opt-rocm-bin"
    rocm_bin.mkdir()
    rocm_smi(box, "rocm-smi-mi300x-x8.json")
    (box.bin_dir / "rocm-smi").rename(rocm_bin / "rocm-smi")
    monkeypatch.setattr(detect, "TOOL_FALLBACK_DIRS", {"rocm-smi": (str(rocm_bin),)})
    assert detect_accelerators().preset_id == "mi300x"


def test_no_detect_variable_turns_detection_off(box, monkeypatch, capsys):
    nvidia_smi(box, "nvidia-smi-h100-sxm-x8.csv")
    monkeypatch.setenv("ROOFLINE_NO_DETECT", "1")
    found = detect_accelerators()
    assert found.count == 0 and found.source is None and found.preset_reason == DISABLED_REASON
    assert detect_text(capsys).strip() == "no accelerators found: detection disabled (ROOFLINE_NO_DETECT)"
    monkeypatch.setenv("ROOFLINE_NO_DETECT", "0")
    assert detect_accelerators().preset_id == "h100-sxm"


# --- NVML ---------------------------------------------------------------------------------------------------------

def test_nvml_comes_first_and_shuts_down(box):
    nvidia_smi(box, "nvidia-smi-rtx-4090.csv")  # would say rtx-4090: NVML must win
    nvml = box.use_nvml(FakeNvml(devices=[("NVIDIA H100 80GB HBM3", 81559 * MIB)] * 4))
    found = detect_accelerators()
    assert (found.source, found.preset_id, found.count) == ("nvml", "h100-sxm", 4)
    assert nvml.calls == ["init", "shutdown"]


def test_nvml_names_as_bytes_from_old_bindings(box):
    box.use_nvml(FakeNvml(devices=[("NVIDIA A100-SXM4-40GB", 40960 * MIB)], names_as_bytes=True))
    found = detect_accelerators()
    assert found.devices == (DetectedDevice(0, "NVIDIA A100-SXM4-40GB", 40960 * MIB),)
    assert found.preset_id == "a100-sxm4-40gb"


def test_nvml_init_failure_falls_back_to_nvidia_smi(box):
    nvidia_smi(box, "nvidia-smi-h100-pcie.csv")
    box.use_nvml(FakeNvml(init_error=FakeNVMLError("Driver Not Loaded")))
    found = detect_accelerators()
    assert found.source == "nvidia-smi" and found.preset_id == "h100-pcie"
    assert found.problems == ("NVML could not start: Driver Not Loaded",)


def test_use_nvml_false_skips_it(box):
    nvidia_smi(box, "nvidia-smi-h100-pcie.csv")
    nvml = box.use_nvml(FakeNvml(devices=[("NVIDIA H200", 143771 * MIB)]))
    assert detect_accelerators(use_nvml=False).source == "nvidia-smi" and nvml.calls == []


def test_a_hanging_nvml_is_bounded(box):
    class HangingNvml(FakeNvml):
        def nvmlInit(self):
            time.sleep(5)

    box.use_nvml(HangingNvml())
    started = time.monotonic()
    found = detect_accelerators(timeout_s=0.2)
    assert time.monotonic() - started < 3
    assert "NVML did not answer within 0.2 s" in found.problems


# --- parsers ------------------------------------------------------------------------------------------------------

def test_nvidia_smi_csv_parser_handles_na_memory_and_blank_lines():
    devices = parse_nvidia_smi_csv("\n0, NVIDIA GB10, [N/A]\n\n")
    assert devices == (DetectedDevice(0, "NVIDIA GB10", None),)
    with pytest.raises(ValueError, match="unexpected line"):
        parse_nvidia_smi_csv("No devices were found")


def test_rocm_json_parser_reads_rocm6_and_rocm5_spellings():
    rocm6 = parse_rocm_smi_json(recorded("rocm-smi-mi300x-x8.json").read_text())
    assert len(rocm6) == 8 and rocm6[0].memory_bytes == 205822885888
    rocm5 = parse_rocm_smi_json(recorded("rocm-smi-mi250x-rocm5.json").read_text())
    assert [device.index for device in rocm5] == [0, 1]  # the "system" entry is not a card
    bare_id = parse_rocm_smi_json('{"card0": {"Card series": "0x738c", "VRAM Total Memory (B)": "34342961152"}}')
    assert bare_id[0].name == "Instinct MI100"


# --- the matching table ---------------------------------------------------------------------------------------------

def test_every_rule_names_existing_presets():
    for rule in PART_RULES:
        assert rule.preset_id is None or rule.preset_id in HARDWARE_IDS, rule
        assert rule.preset_id is not None or rule.nearest_id in HARDWARE_IDS, rule


@pytest.mark.parametrize(("name", "memory_mib", "preset"), [
    ("NVIDIA H100 80GB HBM3", 81559, "h100-sxm"),
    ("NVIDIA H100 PCIe", 81559, "h100-pcie"),
    ("NVIDIA H100 NVL", 95830, "h100-nvl"),
    ("NVIDIA H200", 143771, "h200"),
    ("NVIDIA GH200 480GB", 97871, "gh200"),
    ("NVIDIA B200", 183359, "b200"),
    ("NVIDIA A100-SXM4-80GB", 81920, "a100-sxm4-80gb"),
    ("NVIDIA A100-SXM4-40GB", 40960, "a100-sxm4-40gb"),
    ("NVIDIA A100 80GB PCIe", 81920, "a100-pcie-80gb"),
    ("NVIDIA GeForce RTX 4090", 24564, "rtx-4090"),
    ("NVIDIA GeForce RTX 3090", 24576, "rtx-3090"),
    ("NVIDIA GeForce RTX 3090 Ti", 24564, "rtx-3090-ti"),
    ("NVIDIA GeForce RTX 5090", 32607, "rtx-5090"),
    ("NVIDIA RTX 6000 Ada Generation", 49140, "rtx-6000-ada"),
    ("NVIDIA L4", 23034, "l4"),
    ("NVIDIA L40S", 46068, "l40s"),
    ("Tesla T4", 15360, "t4"),
    ("Tesla V100-SXM2-32GB", 32768, "v100-sxm2"),
    ("NVIDIA A10", 23028, "a10"),
    ("NVIDIA A10G", 23028, "a10g"),
    ("Tesla K80", 11441, "k80"),
    ("AMD Instinct MI300X OAM", 205822885888 // MIB, "mi300x"),
    ("AMD Instinct MI300X VF", 196288, "mi300x"),
    ("AMD Instinct MI250X", 65520, "mi250x"),
    ("AMD Instinct MI325X", 262128, "mi325x"),
])
def test_known_parts(name, memory_mib, preset):
    match = match_part(name, memory_mib * MIB, HARDWARE_IDS)
    assert match.preset_id == preset, match.reason


@pytest.mark.parametrize(("name", "memory_mib", "nearest"), [
    ("NVIDIA A100-PCIE-40GB", 40960, "a100-sxm4-40gb"),
    ("NVIDIA H200 NVL", 143771, "h200"),
    ("Tesla V100-SXM2-16GB", 16160, "v100-sxm2"),
    ("NVIDIA GH200 144G HBM3e", 146831, "gh200"),
    ("NVIDIA L40", 46068, "l40s"),
    ("NVIDIA H100", 81559, "h100-sxm"),
])
def test_parts_without_a_preset_name_the_nearest(name, memory_mib, nearest):
    match = match_part(name, memory_mib * MIB, HARDWARE_IDS)
    assert match.preset_id is None
    assert f"nearest is {nearest}" in match.reason and f"--hardware {nearest}" in match.reason


def test_memory_disambiguates_and_sanity_checks():
    assert match_part("NVIDIA A100-SXM4-80GB", 40960 * MIB, HARDWARE_IDS).preset_id == "a100-sxm4-40gb"
    wrong = match_part("NVIDIA H100 80GB HBM3", 64 * GIB_BYTES, HARDWARE_IDS)
    assert wrong.preset_id is None and "reports 64.0 GiB" in wrong.reason and "H100 SXM5 80GB (80 GiB)" in wrong.reason
    laptop = match_part("NVIDIA GeForce RTX 4090 Laptop GPU", 16376 * MIB, HARDWARE_IDS)
    assert laptop.preset_id is None


def test_unknown_part():
    match = match_part("NVIDIA GeForce GTX 1080 Ti", 11264 * MIB, HARDWARE_IDS)
    assert match.preset_id is None
    assert match.reason == ("unknown part 'NVIDIA GeForce GTX 1080 Ti' (11.0 GiB): pick one with --hardware; "
                            "see roofline presets hardware")


def test_missing_preset_is_none_not_a_bad_id():
    match = match_part("NVIDIA H100 80GB HBM3", 81559 * MIB, HARDWARE_IDS - {"h100-sxm"})
    assert match.preset_id is None and "h100-sxm is missing" in match.reason


def test_memory_unknown_matches_by_name_only_when_unambiguous():
    assert match_part("NVIDIA H200", None, HARDWARE_IDS).preset_id == "h200"
    assert match_part("NVIDIA A100-SXM4", None, HARDWARE_IDS).preset_id is None


def test_unknown_part_in_a_box_gives_no_hint(box, capsys):
    box.tool("nvidia-smi", "0, NVIDIA GeForce GTX 1080 Ti, 11264\n")
    assert detect_text(capsys).strip() == (
        "1 x NVIDIA GeForce GTX 1080 Ti (11.0 GiB) via nvidia-smi -> no preset: unknown part 'NVIDIA GeForce GTX "
        "1080 Ti' (11.0 GiB): pick one with --hardware; see roofline presets hardware")


# --- the subcommand's parser ----------------------------------------------------------------------------------------

def test_add_detect_parser():
    parser = argparse.ArgumentParser()
    add_detect_parser(parser.add_subparsers(dest="command"))
    assert parser.parse_args(["detect"]).format == "text"
    args = parser.parse_args(["detect", "--format", "json", "--timeout", "2"])
    assert (args.format, args.timeout_s) == ("json", 2.0)
    with pytest.raises(SystemExit):
        parser.parse_args(["detect", "--format", "yaml"])


@pytest.mark.parametrize(("value", "message"), [("0", "'0' must be more than 0 and at most 600 seconds"),
                                                 ("601", "'601' must be more than 0 and at most 600 seconds"),
                                                 ("soon", "'soon' is not a number")])
def test_a_bad_timeout_says_what_is_allowed(value, message, capsys):
    parser = argparse.ArgumentParser(prog="roofline")
    add_detect_parser(parser.add_subparsers(dest="command"))
    with pytest.raises(SystemExit):
        parser.parse_args(["detect", "--timeout", value])
    assert message in capsys.readouterr().err
