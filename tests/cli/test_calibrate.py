"""`roofline calibrate`: back-solve the efficiency that reproduces a measurement, and save it."""

from __future__ import annotations

import pytest

from roofline.models.calibration import calibrate
from roofline.models.inference import estimate
from roofline.presets import load_hardware
from roofline.tui.cli.main import main
from tests.conftest import scenario


def test_solved_fraction_reproduces_the_measurement():
    """gpt-fast's 104.9 tok/s on A100 (Llama-2-7B, batch 1) is a 9.533 ms step; the fraction found must make
    `expected` give exactly that step, and lie between 0 and 1."""
    s = scenario("a100-sxm4-80gb", "llama-2-7b", prompt=5, output=200)
    result = calibrate(s, 1 / 104.9)
    assert result.parameter == "mem_bw_fraction" and 0 < result.value < 1
    from dataclasses import replace

    tuned = replace(s, hardware=replace(s.hardware, achievable_mem_bw_fraction=result.value))
    assert estimate(tuned, "expected").decode.step_time_s == pytest.approx(1 / 104.9, rel=1e-6)


def test_impossible_measurements_say_why():
    s = scenario("a100-sxm4-80gb", "llama-2-7b", prompt=5, output=200)
    too_fast = calibrate(s, 1 / 1000)
    assert too_fast.value is None and "bound" in too_fast.reason
    too_slow = calibrate(s, 10.0)
    assert too_slow.value is None and "slower" in too_slow.reason


def test_calibrate_save_writes_a_user_preset_and_refuses_to_overwrite(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path))
    argv = ["calibrate", "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--prompt", "128", "--output", "128",
            "--measured-itl-ms", "8.0", "--save"]
    assert main(argv) == 0
    saved = tmp_path / "hardware" / "h100-sxm.toml"
    assert saved.is_file()
    hw = load_hardware("h100-sxm")
    assert hw.achievable_mem_bw_fraction is not None and hw.achievable_mem_bw_fraction < 0.887
    assert "calibrated on" in hw.sources["achievable.mem_bw"]
    capsys.readouterr()
    assert main(argv) == 2
    assert "exists" in capsys.readouterr().err
    assert main([*argv, "--force"]) == 0


@pytest.mark.parametrize("value", ["0", "-5", "nan", "abc"])
def test_bad_measurement_is_one_line(value, capsys):
    with pytest.raises(SystemExit) as info:
        main(["calibrate", "--measured-itl-ms", value])
    assert info.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_compute_bound_decode_under_an_engine_with_its_own_gemm_share_says_so():
    """Llama-2-7B at batch 1024 on an RTX 4090 decodes compute-bound; llama.cpp's profile fixes the GEMM share
    (0.588 of the peak), so a device matmul fraction cannot reproduce a measurement: the result says why and names
    the way out, instead of bisecting a parameter that changes nothing."""
    from dataclasses import replace

    s = replace(scenario("rtx-4090", "llama-2-7b", batch=1024, prompt=16, output=16), engine="llamacpp")
    assert estimate(s, "expected").decode.phase.limited_by == "compute"
    result = calibrate(s, estimate(s, "expected").decode.step_time_s * 1.3)
    assert result.parameter == "matmul_fraction" and result.value is None
    assert "llamacpp sets its own GEMM share" in result.reason and "--engine generic" in result.reason
    assert calibrate(replace(s, engine="generic"), estimate(s, "expected").decode.step_time_s * 1.3).value
