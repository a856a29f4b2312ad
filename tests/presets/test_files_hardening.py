"""Files are never trusted (issue 22, classes 3 to 6 on the presets side).

Special files (FIFO, ``/dev/zero``, a folder) are refused promptly with one line naming the file; paths the OS
refuses are one-line errors; saves go through an unpredictable temporary file created exclusively, so a link
planted at any temporary name is never written through and a user's own ``x.toml.tmp`` survives; ids are ids.
A read that would hang runs in a thread with a generous watchdog, so a regression fails instead of blocking.
"""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from roofline.presets import load_catalog, load_hardware, resolve_model, toml_io
from roofline.presets import safe_files as safe_files_module
from roofline.presets.deck_file import builtin_deck_path, read_deck
from roofline.presets.loader import MAX_KEY_WARNINGS, PresetFileError, builtin_presets_dir, load_preset_file
from roofline.presets.measurements import read_measurements
from roofline.presets.safe_files import (
    MAX_FILE_BYTES,
    FileRefusedError,
    SaveError,
    atomic_write_text,
    clip,
    read_text_capped,
    user_path,
)
from roofline.presets.scenario_file import read_scenario, write_scenario
from roofline.presets.user_presets import MeasuredCeilings, save_calibrated_hardware, save_measured_hardware
from roofline.tui.inputs.registry import FILE_KEY_TYPES
from tests.conftest import run_cli

WATCHDOG_S = 30.0  # generous: a refusal takes microseconds; only a hang gets near this
posix_only = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


def _finishes(call):
    """Run ``call`` in a thread; fail (never block) if it has not returned within the watchdog."""
    outcome: dict = {}

    def target():
        try:
            outcome["value"] = call()
        except BaseException as err:  # noqa: BLE001 - handed back to the test
            outcome["error"] = err

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(WATCHDOG_S)
    assert not thread.is_alive(), f"still running after {WATCHDOG_S} s: it blocked"
    return outcome


def _one_line_refusal(outcome, path: Path, *fragments: str) -> PresetFileError:
    error = outcome.get("error")
    assert isinstance(error, PresetFileError), outcome
    text = str(error)
    assert "\n" not in text and path.name in text, text
    for fragment in fragments:
        assert fragment in text, text
    return error


# ---- special files ----------------------------------------------------------------------------------------------
@posix_only
@pytest.mark.parametrize("reader", [
    pytest.param(lambda p: read_text_capped(p, what="file"), id="read_text_capped"),
    pytest.param(lambda p: load_preset_file(p, "hardware"), id="hardware-preset"),
    pytest.param(lambda p: load_preset_file(p, "models"), id="model-preset"),
    pytest.param(read_scenario, id="scenario"),
    pytest.param(read_deck, id="deck"),
    pytest.param(lambda p: resolve_model(str(p)), id="config.json"),
    pytest.param(read_measurements, id="measurements-csv"),
])
def test_a_fifo_is_refused_promptly_by_every_reader(tmp_path, reader):
    fifo = tmp_path / "x.json"
    os.mkfifo(fifo)
    _one_line_refusal(_finishes(lambda: reader(fifo)), fifo, "not a regular file (a FIFO (named pipe))")


@posix_only
def test_a_fifo_in_a_config_folder_is_refused(tmp_path):
    os.mkfifo(tmp_path / "config.json")
    _one_line_refusal(_finishes(lambda: resolve_model(str(tmp_path))), tmp_path / "config.json", "FIFO")


@posix_only
@pytest.mark.parametrize("kind", ["hardware", "models"])
def test_special_files_in_the_user_folder_are_skipped_with_a_message(tmp_path, kind):
    """A FIFO, a link to /dev/zero and a folder, each named like a preset: three skipped files, built-ins load."""
    folder = tmp_path / kind
    folder.mkdir()
    os.mkfifo(folder / "fifo.toml")
    (folder / "zero.toml").symlink_to("/dev/zero")
    (folder / "dir.toml").mkdir()
    outcome = _finishes(lambda: load_catalog(user_dir=tmp_path, kinds=(kind,)))
    catalog = outcome["value"]
    reasons = {Path(e.path).name: e.message for e in catalog.errors}
    assert reasons == {
        "dir.toml": "cannot read preset: not a regular file (a folder)",
        "fifo.toml": "cannot read preset: not a regular file (a FIFO (named pipe))",
        "zero.toml": "cannot read preset: not a regular file (a character device)",
    }
    assert len(catalog.hardware if kind == "hardware" else catalog.models) > 5


@posix_only
def test_a_fifo_named_like_a_preset_id_is_reported_not_blocking(tmp_path):
    (tmp_path / "hardware").mkdir()
    os.mkfifo(tmp_path / "hardware" / "h100-sxm.toml")
    _one_line_refusal(_finishes(lambda: load_hardware("h100-sxm", tmp_path)), Path("h100-sxm.toml"), "FIFO")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_dev_zero_through_a_link_is_refused_without_reading(tmp_path):
    link = tmp_path / "scenario.toml"
    link.symlink_to("/dev/zero")
    _one_line_refusal(_finishes(lambda: read_scenario(link)), link, "character device")


def test_an_oversized_file_is_refused_before_it_is_read(tmp_path):
    big = tmp_path / "big.toml"
    with big.open("wb") as handle:  # sparse: costs no disk
        handle.truncate(MAX_FILE_BYTES + 1)
    error = _one_line_refusal(_finishes(lambda: read_scenario(big)), big, "too large")
    assert f"{MAX_FILE_BYTES + 1:,} bytes" in str(error)


def test_a_file_at_the_cap_is_read(tmp_path):
    path = tmp_path / "cap.txt"
    path.write_bytes(b"a" * 1000)
    assert read_text_capped(path, max_bytes=1000) == "a" * 1000
    with pytest.raises(FileRefusedError, match="too large"):
        read_text_capped(path, max_bytes=999)


def test_bad_utf8_names_the_file_line_and_byte_offset(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_bytes(b"[scenario]\nbatch = 1\nhardware = \"\xff\"\n")
    # offset: "[scenario]\n" 11 bytes + "batch = 1\n" 10 + 'hardware = "' 12 = 33; third line
    with pytest.raises(FileRefusedError) as info:
        read_scenario(path)
    assert info.value.error.line == 3
    assert "not UTF-8 text (byte 0xff at offset 33)" in str(info.value)


# ---- paths the OS refuses ---------------------------------------------------------------------------------------
def test_an_overlong_name_is_one_line(tmp_path):
    path = tmp_path / ("a" * 300 + ".toml")
    with pytest.raises(FileRefusedError, match="name too long") as info:
        read_scenario(path)
    assert "\n" not in str(info.value) and len(str(info.value)) < 500


def test_tilde_of_an_unknown_user_is_one_line():
    with pytest.raises(FileRefusedError, match="cannot expand ~"):
        user_path("~no-such-user-roofline-22/x.toml")
    with pytest.raises(FileRefusedError, match="cannot expand ~"):
        resolve_model("~no-such-user-roofline-22/config.json")


def test_a_nul_in_a_path_is_one_line():
    with pytest.raises(FileRefusedError, match="NUL"):
        user_path("a\0b")
    with pytest.raises(FileRefusedError, match="NUL"):
        read_text_capped(Path("a\0b"))


def test_permission_denied_is_one_line(tmp_path, monkeypatch):
    """Simulated (the tests may run as root, which no permission stops): the OS says EACCES on open."""
    path = tmp_path / "s.toml"
    path.write_text("[scenario]\nbatch = 1\n")

    def denied(*_args, **_kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(safe_files_module.os, "open", denied)
    with pytest.raises(FileRefusedError, match="cannot read scenario file: Permission denied"):
        read_scenario(path)


def test_a_bad_presets_folder_variable_skips_the_user_folder_in_the_catalog(monkeypatch):
    monkeypatch.setenv("ROOFLINE_PRESETS", "~no-such-user-roofline-22/presets")
    catalog = load_catalog()
    assert [e.message for e in catalog.errors] == ["cannot read $ROOFLINE_PRESETS folder: cannot expand ~ "
                                                   "(Could not determine home directory.)"] * 2
    assert "h100-sxm" in catalog.hardware
    with pytest.raises(FileRefusedError):  # a single lookup says so rather than silently using built-ins
        load_hardware("h100-sxm")


# ---- ids are ids --------------------------------------------------------------------------------------------------
def test_a_hardware_id_that_is_a_path_is_refused(tmp_path):
    """``../../x/evil`` would load any .toml on disk if ids were joined to folders as given."""
    evil = tmp_path / "x" / "evil.toml"
    evil.parent.mkdir()
    shutil.copyfile(builtin_presets_dir() / "hardware" / "h100-sxm.toml", evil)
    user = tmp_path / "user"
    (user / "hardware").mkdir(parents=True)
    relative = os.path.relpath(evil.with_suffix(""), user / "hardware")
    assert (user / "hardware" / f"{relative}.toml").resolve() == evil.resolve()
    with pytest.raises(PresetFileError, match="not a preset id"):
        load_hardware(relative, user)
    with pytest.raises(PresetFileError, match="not a preset id"):
        load_hardware("..", user)


def test_cli_hardware_path_is_one_line_exit_2(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path))
    code, out, err = run_cli(["report", "--hardware", "../../tmp/x/evil", "--no-ops"], capsys)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and "not a preset id" in err


def test_ids_are_looked_up_case_insensitively(tmp_path):
    assert load_hardware("H100-SXM", tmp_path).id == "h100-sxm"


# ---- parser robustness --------------------------------------------------------------------------------------------
def _hardware_text(**changes: str) -> str:
    text = (builtin_presets_dir() / "hardware" / "h100-sxm.toml").read_text()
    for key, value in changes.items():
        lines = text.splitlines()
        index = next(i for i, line in enumerate(lines) if line.startswith(f"{key} ="))
        lines[index] = f"{key} = {value}"
        text = "\n".join(lines) + "\n"
    return text


def test_a_user_file_with_a_subnormal_bandwidth_is_skipped(tmp_path):
    (tmp_path / "hardware").mkdir()
    (tmp_path / "hardware" / "h100-sxm.toml").write_text(_hardware_text(mem_bw_gb_per_s="5e-324"))
    catalog = load_catalog(user_dir=tmp_path, kinds=("hardware",))
    assert [(e.key, e.message) for e in catalog.errors] == [
        ("mem_bw_gb_per_s", "5e-324 is not plausible (less than 0.01)")]
    assert catalog.hardware["h100-sxm"].mem_bw_bytes_per_s == pytest.approx(3.35e12)  # the built-in stays


@pytest.mark.parametrize(("text", "fragment"), [
    pytest.param("[scenario]\nbatch = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply", id="arrays"),
    pytest.param("[scenario]\nbatch = " + "9" * 5000 + "\n", "a number too long to read", id="5000-digits"),
    pytest.param("[scenario]\nbatch = " + "{a=" * 3000 + "1" + "}" * 3000 + "\n", "nested too deeply",
                 id="inline-tables"),
])
def test_parser_failures_are_one_line_with_the_line(tmp_path, text, fragment):
    path = tmp_path / "s.toml"
    path.write_text(text)
    with pytest.raises(PresetFileError) as info:
        read_scenario(path)
    assert fragment in str(info.value) and info.value.error.line == 2


@pytest.mark.parametrize(("text", "fragment", "line"), [
    pytest.param('{"a":\n' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply", 2, id="arrays"),
    pytest.param('{\n"hidden_size": ' + "9" * 5000 + "}", "a number too long to read", 2, id="5000-digits"),
])
def test_config_json_parser_failures_are_one_line(tmp_path, text, fragment, line):
    path = tmp_path / "config.json"
    path.write_text(text)
    with pytest.raises(PresetFileError) as info:
        resolve_model(str(path))
    assert fragment in str(info.value) and info.value.error.line == line


def test_six_thousand_unknown_keys_give_a_bounded_number_of_warnings_in_one_pass(tmp_path, monkeypatch):
    """6,000 unknown keys: MAX_KEY_WARNINGS named ones plus one count, and the text indexed once per file (the
    old code searched the whole file once per key: quadratic)."""
    built = []
    original = toml_io.KeyLines.__init__

    def counting(self, text):
        built.append(len(text))
        original(self, text)

    monkeypatch.setattr(toml_io.KeyLines, "__init__", counting)
    extra = "".join(f"unknown_{i} = {i}\n" for i in range(6000))
    (tmp_path / "hardware").mkdir()
    text = "".join(line for line in _hardware_text().splitlines(keepends=True) if not line.startswith("id ="))
    head, _, tail = text.partition("[dense_peak_tflops]")
    (tmp_path / "hardware" / "many.toml").write_text(head + extra + "[dense_peak_tflops]" + tail)
    catalog = load_catalog(user_dir=tmp_path, kinds=("hardware",))
    assert catalog.errors == [] and "many" in catalog.hardware
    assert len(catalog.warnings) == MAX_KEY_WARNINGS + 1
    assert [w.key for w in catalog.warnings[:2]] == ["unknown_0", "unknown_1"]
    assert catalog.warnings[0].line == head.count("\n") + 1
    assert catalog.warnings[-1].message.startswith(f"{6000 - MAX_KEY_WARNINGS:,} more unknown keys ignored")
    assert len(built) == 1
    scenario = tmp_path / "s.toml"
    scenario.write_text("[scenario]\nbatch = 2\n" + extra)
    warnings: list = []
    built.clear()
    assert read_scenario(scenario, warnings, keys=FILE_KEY_TYPES) == {"batch": 2}
    assert len(warnings) == MAX_KEY_WARNINGS + 1 and len(built) == 1


def test_a_long_value_is_quoted_cut():
    assert clip("x" * 100_000) == "x" * 79 + "…"
    assert clip("a\nb") == "a\\nb"


# ---- saves --------------------------------------------------------------------------------------------------------
class _Tokens:
    """``secrets`` stand-in: the temporary names drawn, in order (the first one is where a link is planted)."""

    def __init__(self, *tokens: str) -> None:
        self.tokens = list(tokens)

    def token_hex(self, _nbytes: int) -> str:
        return self.tokens.pop(0)


def _plant(folder: Path, victim: Path, *names: str) -> None:
    for name in names:
        (folder / name).symlink_to(victim)


def _savers(tmp_path):
    """Each writer of the presets layer, saving to a file named x.toml (or x-measured.toml) in ``tmp_path``."""
    ceilings = MeasuredCeilings(device_name="Fake GPU", vendor="NVIDIA", kind="cuda", host="box", date="2025-01-01",
                                mem_bw_bytes_per_s=3e12, flops_per_s_by_dtype={"bf16": 7e14})
    return {
        "scenario": (tmp_path / "x.toml",
                     lambda: write_scenario(tmp_path / "x.toml", {"batch": 4}, overwrite=True)),
        "calibrated": (tmp_path / "hardware" / "h100-sxm.toml",
                       lambda: save_calibrated_hardware("h100-sxm", {"matmul_fraction": 0.7}, "note",
                                                        user_dir=tmp_path, force=True)),
        "measured": (tmp_path / "hardware" / "x-measured.toml",
                     lambda: save_measured_hardware(ceilings, base_id="h100-sxm", preset_id="x-measured",
                                                    user_dir=tmp_path, force=True)),
    }


@pytest.mark.parametrize("saver", ["scenario", "calibrated", "measured"])
def test_a_link_planted_at_any_temporary_name_is_never_written_through(tmp_path, monkeypatch, saver):
    target, save = _savers(tmp_path)[saver]
    target.parent.mkdir(exist_ok=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    # the fixed names the old writers used, and the next unpredictable name the new one will draw
    _plant(target.parent, victim, f"{target.name}.tmp", f".{target.name}.tmp", f".{target.name}.planted.tmp")
    monkeypatch.setattr(safe_files_module, "secrets", _Tokens("planted", "fresh"))
    save()
    assert victim.read_text() == "precious"
    assert target.is_file() and not target.is_symlink() and "precious" not in target.read_text()
    for name in (f"{target.name}.tmp", f".{target.name}.tmp", f".{target.name}.planted.tmp"):
        assert (target.parent / name).is_symlink()
    assert not (target.parent / f".{target.name}.fresh.tmp").exists()  # renamed onto the target


@pytest.mark.parametrize("saver", ["scenario", "calibrated", "measured"])
def test_a_users_own_tmp_file_survives_a_save(tmp_path, saver):
    target, save = _savers(tmp_path)[saver]
    target.parent.mkdir(exist_ok=True)
    mine = [target.parent / f"{target.name}.tmp", target.parent / f".{target.name}.tmp"]
    for path in mine:
        path.write_text("my notes")
    before = set(os.listdir(target.parent))
    save()
    assert [path.read_text() for path in mine] == ["my notes", "my notes"]
    assert set(os.listdir(target.parent)) == before | {target.name}


@pytest.mark.parametrize("name", ["/", ".", "sub", "a\0b", "sub/"])
def test_saving_to_a_folder_or_a_bad_name_is_one_line_and_leaves_nothing(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    with pytest.raises(SaveError) as info:
        write_scenario(Path(name) if "\0" not in name else name, {"batch": 1}, overwrite=True)  # type: ignore[arg-type]
    assert isinstance(info.value, OSError) and "\n" not in str(info.value) and "cannot save" in str(info.value)
    assert sorted(os.listdir(tmp_path)) == ["sub"] and os.listdir(tmp_path / "sub") == []


def test_a_failed_replace_removes_the_temporary_file(tmp_path, monkeypatch):
    def broken(_src, _dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(safe_files_module.os, "replace", broken)
    with pytest.raises(SaveError, match="No space left on device"):
        atomic_write_text(tmp_path / "x.toml", "a = 1\n")
    assert os.listdir(tmp_path) == []


def test_saving_into_a_missing_folder_is_one_line(tmp_path):
    with pytest.raises(SaveError, match="cannot save"):
        atomic_write_text(tmp_path / "no-such" / "x.toml", "a = 1\n")


def test_a_target_that_is_a_link_is_replaced_and_its_target_kept(tmp_path):
    """The documented choice: the link itself is replaced by the new file; the file it pointed to is untouched."""
    elsewhere = tmp_path / "elsewhere.toml"
    elsewhere.write_text("kept")
    link = tmp_path / "x.toml"
    link.symlink_to(elsewhere)
    atomic_write_text(link, "new = 1\n")
    assert elsewhere.read_text() == "kept"
    assert not link.is_symlink() and link.read_text() == "new = 1\n"


def test_a_replaced_file_keeps_its_mode_and_a_new_one_gets_the_umask(tmp_path):
    existing = tmp_path / "x.toml"
    existing.write_text("old")
    existing.chmod(0o640)
    atomic_write_text(existing, "new")
    assert existing.stat().st_mode & 0o777 == 0o640
    old_umask = os.umask(0o027)
    try:
        atomic_write_text(tmp_path / "y.toml", "new")
    finally:
        os.umask(old_umask)
    assert (tmp_path / "y.toml").stat().st_mode & 0o777 == 0o640  # 0o666 & ~0o027


def test_write_scenario_round_trips_and_refuses_to_overwrite(tmp_path):
    path = tmp_path / "s.toml"
    write_scenario(path, {"batch": 8, "hardware": "h100-sxm"})
    assert read_scenario(path) == {"batch": 8, "hardware": "h100-sxm"}
    with pytest.raises(FileExistsError):
        write_scenario(path, {"batch": 1})


def test_the_builtin_deck_still_reads():
    assert read_deck(builtin_deck_path()).slides


# ---- measurements CSV -----------------------------------------------------------------------------------------------
_HEADER = "id,hardware,tp,pp,model,weights,kv,batch,prompt,output,metric,value,source\n"


def _csv(tmp_path, *rows: str) -> Path:
    path = tmp_path / "m.csv"
    path.write_text(_HEADER + "".join(row + "\n" for row in rows))
    return path


def test_measurement_rows_short_infinite_or_out_of_range_are_skipped(tmp_path):
    def check(field, value):  # the flags' limits, as the CLI passes them (tui/inputs/limits.check_number)
        from roofline.tui.inputs.limits import check_number

        return check_number(field, value)

    path = _csv(tmp_path,
                "a-1,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,1,128,128,decode_tokens_per_s_per_seq,100,x",
                "b-1,h100-sxm,1",
                "c-1,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,1,128,128,decode_tokens_per_s_per_seq,inf,x",
                "d-1,h100-sxm,1,1,llama-3.1-8b,bf16,bf16,1,128,100000000000,decode_tokens_per_s_per_seq,100,x",
                "e-1,../../etc/evil,1,1,llama-3.1-8b,bf16,bf16,1,128,128,decode_tokens_per_s_per_seq,100,x")
    rows, skipped = read_measurements(path, check)
    assert [r.id for r in rows] == ["a-1"]
    reasons = {s.id: s.reason for s in skipped}
    assert set(reasons) == {"b-1", "c-1", "d-1", "e-1"}
    assert "value must be finite and > 0" in reasons["c-1"]
    assert reasons["d-1"].startswith("output: must be between 1 and 1,000,000")
    assert "not a preset id" in reasons["e-1"]


def test_a_huge_csv_field_is_one_line_naming_the_file(tmp_path):
    path = _csv(tmp_path, "a-1," + "x" * 200_000)
    with pytest.raises(ValueError, match=r"m\.csv:\d+: not a valid CSV") as info:
        read_measurements(path)
    assert "\n" not in str(info.value) and len(str(info.value)) < 400


def test_a_non_utf8_csv_names_the_file(tmp_path):
    path = tmp_path / "m.csv"
    path.write_bytes(_HEADER.encode() + b"a-1,\xff\n")
    with pytest.raises(FileRefusedError, match=r"m\.csv:2: cannot read measurements CSV: not UTF-8"):
        read_measurements(path)
