"""``roofline measure``: host figures, the GPU timing arithmetic (fake backend), errors and ``--save``."""

from __future__ import annotations

import argparse
import json
import sys
from types import SimpleNamespace

import pytest

from roofline.presets import load_hardware
from roofline.presets.loader import load_preset_file
from roofline.presets.user_presets import MeasuredCeilings, save_measured_hardware
from roofline.tui.cli import measure as measure_cli
from roofline.tui.cli.measure import add_measure_parser, run_measure
from roofline.tui.probe import measure as m

GIB = 1024**3


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="roofline")
    add_measure_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["measure", *argv])


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = run_measure(parse(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def user_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path))
    return tmp_path


class FakeGpu:
    """Deterministic timings: each op returns its tag, and ``seconds`` pops that tag's next time."""

    def __init__(self, times: dict[str, list[float]], unsupported: dict[str, str] | None = None,
                 free_bytes: int = 60 * GIB) -> None:
        self.info = m.DeviceInfo(name="NVIDIA H100 80GB HBM3", kind="cuda", vendor="NVIDIA", memory_bytes=80 * GIB,
                                 library="fake 1.0")
        self.default_dtypes = ("fp32", "bf16", "fp16", "fp8")
        self.times = {tag: list(values) for tag, values in times.items()}
        self.unsupported = unsupported or {}
        self.free_bytes = free_bytes
        self.sizes: list[tuple[str, int]] = []
        self.closed = False

    def free_memory_bytes(self) -> int:
        return self.free_bytes

    def copy_op(self, size_bytes: int):
        self.sizes.append(("copy", size_bytes))
        return lambda: "copy"

    def matmul_op(self, dtype: str, n: int):
        if dtype in self.unsupported:
            raise m.UnsupportedDtype(self.unsupported[dtype])
        self.sizes.append((dtype, n))
        return lambda: f"{dtype}:{n}"

    def seconds(self, op) -> float:
        return self.times[op()].pop(0)

    def release(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


SETTINGS = m.MeasureSettings(copy_bytes=GIB, copy_warmup=2, copy_repeats=3, matmul_n=8192, matmul_warmup=1,
                             matmul_repeats=3)
# warm-up calls are the fastest here, so counting them would show
H100_TIMES = {
    "copy": [1e-6, 1e-6, 0.8e-3, 0.7e-3, 0.75e-3],
    "fp32:8192": [1e-9, 0.03, 0.025, 0.028],
    "bf16:8192": [1e-9, 1.6e-3, 1.4e-3, 1.5e-3],
    "fp16:8192": [1e-9, 1.5e-3, 1.45e-3, 1.42e-3],
}


def h100_fake() -> FakeGpu:
    return FakeGpu(H100_TIMES, unsupported={"fp8": "fp8 matmul needs compute capability >= 8.9 (this GPU is 8.0)"})


# ---- host ----------------------------------------------------------------------------------------------------------
def test_cpu_quick_gives_sane_figures_and_json_contract(capsys):
    code, out, err = run(["--device", "cpu", "--quick", "--format", "json"], capsys)
    assert code == 0, err
    data = json.loads(out)  # stdout is only the JSON; progress went to stderr
    assert "measuring copy bandwidth" in err
    assert data["kind"] == "cpu"
    assert isinstance(data["device"], str) and data["device"]
    assert isinstance(data["host"], str) and data["host"]
    assert len(data["date"]) == 10
    assert 1e8 < data["mem_bw_bytes_per_s"] < 1e13
    assert set(data["flops_per_s_by_dtype"]) == {"fp32", "fp64"}
    for flops in data["flops_per_s_by_dtype"].values():
        assert 1e8 < flops < 1e15
    assert data["peak_flops_per_s"] == max(data["flops_per_s_by_dtype"].values())
    assert data["memory_bytes"] > 0
    assert data["method"]["copy"]["repeats"] >= 1 and data["method"]["matmul"]["n_by_dtype"]["fp32"] >= 16
    assert data["skipped"] == {}


def test_cpu_text_table(capsys):
    code, out, _ = run(["--device", "cpu", "--quick", "--dtypes", "fp32,fp16"], capsys)
    assert code == 0
    assert "copy bandwidth" in out and "matmul fp32" in out
    assert "matmul fp16" in out and "skipped" in out  # numpy has no fp16 GEMM


# ---- GPU arithmetic with a fake backend ----------------------------------------------------------------------------
def test_gpu_arithmetic_best_of_repeats_after_warmup():
    backend = h100_fake()
    result = m.measure(backend, SETTINGS, host="box", date="2025-01-02")
    assert result.mem_bw_bytes_per_s == pytest.approx(2 * GIB / 0.7e-3)
    assert result.flops_per_s_by_dtype["fp32"] == pytest.approx(2 * 8192**3 / 0.025)
    assert result.flops_per_s_by_dtype["bf16"] == pytest.approx(2 * 8192**3 / 1.4e-3)
    assert result.flops_per_s_by_dtype["fp16"] == pytest.approx(2 * 8192**3 / 1.42e-3)
    assert "fp8" not in result.flops_per_s_by_dtype
    assert "8.9" in result.skipped["fp8"]
    assert result.peak_dtype == "bf16" and result.peak_flops_per_s == result.flops_per_s_by_dtype["bf16"]
    assert result.memory_bytes == 80 * GIB and result.kind == "cuda"
    assert all(not values for values in backend.times.values())  # every scripted call was made


def test_sizes_shrink_to_fit_free_memory():
    assert m.fit_copy_bytes(GIB, free_bytes=GIB) == 256 * 1024**2
    assert m.fit_matmul_n(8192, "fp32", free_bytes=GIB) == 4096  # 3 x 4096^2 x 4 B = 192 MiB <= 512 MiB
    with pytest.raises(m.MeasureError):
        m.fit_copy_bytes(GIB, free_bytes=1024**2)


def test_matmul_grows_until_a_call_is_long_enough():
    backend = FakeGpu({"copy": [1.0], "fp32:1024": [0.01], "fp32:2048": [0.2, 0.1, 0.09]})
    settings = m.MeasureSettings(copy_bytes=GIB, copy_warmup=0, copy_repeats=1, matmul_n=1024, matmul_warmup=1,
                                 matmul_repeats=2, matmul_max_n=4096, matmul_min_call_s=0.05, dtypes=("fp32",))
    result = m.measure(backend, settings)
    assert result.method["matmul"]["n_by_dtype"] == {"fp32": 2048}  # the probe call counted as the warm-up
    assert result.flops_per_s_by_dtype["fp32"] == pytest.approx(2 * 2048**3 / 0.09)


def test_a_failing_dtype_is_skipped_with_its_reason():
    class Broken(FakeGpu):
        def matmul_op(self, dtype, n):
            if dtype == "bf16":
                raise RuntimeError("CUBLAS_STATUS_NOT_SUPPORTED\nmore detail")
            return super().matmul_op(dtype, n)

    backend = Broken(H100_TIMES, unsupported={"fp8": "no"})
    result = m.measure(backend, SETTINGS)
    assert result.skipped["bf16"] == "failed: RuntimeError: CUBLAS_STATUS_NOT_SUPPORTED"
    assert "fp16" in result.flops_per_s_by_dtype


def fake_torch(major: int, minor: int, *, hip: str | None = None, cuda: str | None = "12.4", available=True):
    props = SimpleNamespace(major=major, minor=minor, total_memory=80 * GIB, gcnArchName="gfx90a" if hip else "")
    return SimpleNamespace(
        __version__="2.5.0", version=SimpleNamespace(cuda=cuda, hip=hip),
        device=lambda kind, index: (kind, index),
        backends=SimpleNamespace(cuda=SimpleNamespace(matmul=SimpleNamespace(allow_tf32=False))),
        cuda=SimpleNamespace(is_available=lambda: available, device_count=lambda: 1, set_device=lambda d: None,
                             get_device_properties=lambda i: props, get_device_name=lambda i: "Fake GPU",
                             is_bf16_supported=lambda: True),
        _scaled_mm=object(), float8_e4m3fn=object(),
    )


def test_torch_backend_says_why_a_dtype_is_unsupported():
    ampere = m._TorchBackend(fake_torch(8, 0), 0)
    with pytest.raises(m.UnsupportedDtype, match=r"compute capability >= 8\.9 \(this GPU is 8\.0\)"):
        ampere.matmul_op("fp8", 16)
    volta = m._TorchBackend(fake_torch(7, 0), 0)
    with pytest.raises(m.UnsupportedDtype, match=r">= 8\.0"):
        volta.matmul_op("bf16", 16)
    mi250 = m._TorchBackend(fake_torch(9, 0, hip="6.2", cuda=None), 0)
    assert mi250.info.kind == "rocm" and mi250.info.vendor == "AMD"
    with pytest.raises(m.UnsupportedDtype, match="MI300"):
        mi250.matmul_op("fp8", 16)


# ---- errors --------------------------------------------------------------------------------------------------------
def test_cuda_without_torch_or_cupy_is_one_line_error(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "cupy", None)
    code, out, err = run(["--device", "cuda"], capsys)
    assert code == 2 and out == ""
    assert err == "roofline measure: error: --device cuda needs PyTorch or CuPy (neither is importable)\n"


def test_torch_without_gpu_is_a_clear_error(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", fake_torch(9, 0, available=False))
    monkeypatch.setitem(sys.modules, "cupy", None)
    code, _, err = run(["--device", "cuda"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert "torch.cuda.is_available() is False" in err
    monkeypatch.setitem(sys.modules, "torch", fake_torch(9, 0, cuda=None))
    code, _, err = run(["--device", "cuda"], capsys)
    assert code == 2 and "CPU-only build" in err


def test_auto_device_falls_back_to_the_cpu(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "cupy", None)
    code, out, err = run(["--quick", "--format", "json", "--dtypes", "fp32"], capsys)
    assert code == 0 and json.loads(out)["kind"] == "cpu"
    assert "measuring the CPU" in err


def test_ctrl_c_exits_130_without_traceback(monkeypatch, capsys):
    class Interrupted(FakeGpu):
        def seconds(self, op):
            raise KeyboardInterrupt

    monkeypatch.setattr(measure_cli, "_open_backend", lambda args: Interrupted({}))
    code, _, err = run(["--device", "cuda"], capsys)
    assert code == 130 and "Traceback" not in err and err.endswith("interrupted\n")


def test_usage_errors(capsys):
    with pytest.raises(SystemExit) as exit_:
        parse(["--device", "tpu"])
    assert exit_.value.code == 2
    with pytest.raises(SystemExit):
        parse(["--dtypes", "fp7"])
    code, _, err = run(["--device", "cpu", "--id", "mine"], capsys)
    assert code == 2 and "--save" in err


# ---- --save --------------------------------------------------------------------------------------------------------
def test_save_cpu_preset_loads_and_is_not_overwritten_without_force(user_dir, capsys):
    code, out, err = run(["--device", "cpu", "--quick", "--format", "json", "--save"], capsys)
    assert code == 0, err
    data = json.loads(out)
    saved = [line for line in err.splitlines() if line.startswith("saved: ")]
    assert len(saved) == 1 and "use it: roofline --hardware" in saved[0]
    assert measure_cli.QUICK_SAVE_WARNING in err  # --quick figures run low; the user is told
    path = next((user_dir / "hardware").glob("*.toml"))
    assert path.stem.endswith("-cpu-measured")
    hw = load_preset_file(path, "hardware")
    assert hw.id == path.stem and hw.category == "cpu"
    assert data["host"] in hw.name
    assert hw.mem_bw_bytes_per_s == pytest.approx(data["mem_bw_bytes_per_s"], rel=1e-3)
    assert hw.dense_peak_flops_per_s["fp32"] == pytest.approx(data["flops_per_s_by_dtype"]["fp32"], rel=1e-3)
    assert hw.memory_capacity_bytes == pytest.approx(data["memory_bytes"], rel=1e-3)
    assert hw.achievable_mem_bw_fraction == 1.0
    # expected runs at the measured rates (no generic 0.775 on top of a measurement)
    from roofline.models.estimate import ceilings

    expected = ceilings(hw, "fp32", "expected")
    assert expected.matmul_flops_per_s == pytest.approx(data["flops_per_s_by_dtype"]["fp32"], rel=1e-3)
    assert expected.mem_bw_bytes_per_s == pytest.approx(data["mem_bw_bytes_per_s"], rel=1e-3)
    first = path.read_text()

    code, out, err = run(["--device", "cpu", "--quick", "--save"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert str(path) in err and "--force" in err
    assert path.read_text() == first

    path.write_text(first + "# marker\n")
    code, _, err = run(["--device", "cpu", "--quick", "--save", "--force", "--dtypes", "fp32"], capsys)
    assert code == 0, err
    assert "marker" not in path.read_text()
    assert load_preset_file(path, "hardware").id == path.stem


def test_save_matched_gpu_keeps_spec_and_sets_fractions(user_dir, monkeypatch, capsys):
    monkeypatch.setattr(measure_cli, "_open_backend", lambda args: h100_fake())
    monkeypatch.setattr(m, "default_settings", lambda kind, quick=False, dtypes=None: SETTINGS)
    monkeypatch.setattr(m, "host_name", lambda: "GPU-Box_01")
    code, out, err = run(["--device", "cuda", "--save"], capsys)
    assert code == 0, err
    assert "saved: " in out and "roofline --hardware h100-sxm-measured-gpu-box-01" in out
    assert "matched NVIDIA H100 80GB HBM3 to preset h100-sxm" in err
    path = user_dir / "hardware" / "h100-sxm-measured-gpu-box-01.toml"
    hw = load_preset_file(path, "hardware")
    spec = load_hardware("h100-sxm", user_dir)
    assert hw.dense_peak_flops_per_s == spec.dense_peak_flops_per_s
    assert hw.mem_bw_bytes_per_s == spec.mem_bw_bytes_per_s
    assert hw.achievable_mem_bw_fraction == pytest.approx(2 * GIB / 0.7e-3 / 3.35e12, rel=1e-3)
    assert hw.achievable_matmul_fraction["bf16"] == pytest.approx(2 * 8192**3 / 1.4e-3 / 989.4e12, rel=1e-3)
    assert hw.achievable_matmul_fraction["fp8"] == spec.achievable_matmul_fraction["fp8"]  # not measured: kept
    assert "measured by roofline measure on GPU-Box" in hw.sources["achievable.mem_bw"]
    assert "TB/s copy" in hw.sources["achievable.mem_bw"]
    assert hw.name == f"{spec.name} (measured on GPU-Box_01)"
    assert "%" in out  # measured / spec column
    assert measure_cli.QUICK_SAVE_WARNING not in err  # a full run saves without the note


def test_save_function_caps_fractions_above_spec(user_dir):
    ceilings = MeasuredCeilings(device_name="NVIDIA H100 80GB HBM3", vendor="NVIDIA", kind="cuda", host="h",
                                date="2025-03-04", mem_bw_bytes_per_s=4e12,
                                flops_per_s_by_dtype={"bf16": 700e12, "fp8": 1300e12}, memory_bytes=80 * GIB)
    path = save_measured_hardware(ceilings, base_id="h100-sxm")
    hw = load_preset_file(path, "hardware")
    assert hw.achievable_mem_bw_fraction == 1.0 and "capped" in hw.sources["achievable.mem_bw"]
    assert hw.achievable_matmul_fraction["fp8"] == pytest.approx(1300 / 1978.9, rel=1e-3)
    with pytest.raises(FileExistsError):
        save_measured_hardware(ceilings, base_id="h100-sxm")
    unmatched = save_measured_hardware(ceilings, preset_id="my-gpu")
    new = load_preset_file(unmatched, "hardware")
    assert new.dense_peak_flops_per_s == {"bf16": 700e12, "fp8": 1300e12}
    assert new.achievable_matmul_fraction == {"bf16": 1.0, "fp16": 1.0, "fp8": 1.0}


def test_save_unmatched_gpu_makes_a_preset_of_the_measured_figures(user_dir, monkeypatch, capsys):
    def weird_gpu(args):
        backend = h100_fake()
        backend.info = m.DeviceInfo(name="Weird GPU 9000", kind="rocm", vendor="AMD", memory_bytes=48 * GIB,
                                    library="fake 1.0")
        return backend

    monkeypatch.setattr(measure_cli, "_open_backend", weird_gpu)
    monkeypatch.setattr(m, "default_settings", lambda kind, quick=False, dtypes=None: SETTINGS)
    monkeypatch.setattr(m, "host_name", lambda: "node7")
    code, out, err = run(["--device", "cuda", "--save", "--format", "json"], capsys)
    assert code == 0, err
    assert json.loads(out)["preset"] is None and "no preset match" in err
    hw = load_preset_file(user_dir / "hardware" / "weird-gpu-9000-measured-node7.toml", "hardware")
    assert hw.category == "gpu" and hw.vendor == "AMD" and hw.memory_capacity_bytes == 48 * GIB
    assert hw.mem_bw_bytes_per_s == pytest.approx(2 * GIB / 0.7e-3, rel=1e-3)
    assert hw.dense_peak_flops_per_s["bf16"] == pytest.approx(2 * 8192**3 / 1.4e-3, rel=1e-3)
    assert set(hw.dense_peak_flops_per_s) == {"fp32", "bf16", "fp16"}
