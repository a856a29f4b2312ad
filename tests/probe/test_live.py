"""Live counters: dcgmi dmon parsing, a stand-in dcgmi, a fake pynvml, sample -> roofline point arithmetic.

Recorded ``dcgmi dmon`` streams live in tests/data/gpu/live/ (see the README there for how they were made).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from roofline.tui.probe import live
from roofline.tui.probe.live import (
    DCGM_FIELD_DRAM_ACTIVE,
    DCGM_FIELD_TENSOR_ACTIVE,
    NO_DETECT_REASON,
    NVML_NO_GPM_REASON,
    ActivitySample,
    DcgmiSource,
    DmonError,
    DmonRow,
    DmonStreamParser,
    NvmlGpmSource,
    RooflinePoint,
    Trail,
    Unavailable,
    dcgmi_command,
    explain_dcgmi_error,
    open_live_source,
    probing_disabled,
    sample_to_point,
)

RECORDINGS = Path(__file__).parents[1] / "data" / "gpu" / "live"
H100_SXM_BW_BYTES_PER_S = 3.35e12
H100_SXM_BF16_DENSE_FLOPS_PER_S = 989.4e12


@pytest.fixture(autouse=True)
def _probing_allowed(monkeypatch):
    monkeypatch.delenv(live.NO_DETECT_ENV, raising=False)


def parse_file(name: str) -> list[DmonRow | DmonError]:
    parser = DmonStreamParser()
    parsed = (parser.feed(line) for line in (RECORDINGS / name).read_text().splitlines())
    return [item for item in parsed if item is not None]


# --- parsing -------------------------------------------------------------------------------------------------------

def test_single_gpu_recording_parses_every_row_through_the_repeated_header():
    rows = parse_file("dmon_single_gpu.txt")
    assert len(rows) == 17
    assert all(isinstance(row, DmonRow) and (row.entity_kind, row.entity_id) == ("GPU", 0) for row in rows)
    assert rows[0].values == {DCGM_FIELD_DRAM_ACTIVE: None, DCGM_FIELD_TENSOR_ACTIVE: None}
    assert rows[2].value(DCGM_FIELD_DRAM_ACTIVE) == 0.612
    assert rows[2].value(DCGM_FIELD_TENSOR_ACTIVE) == 0.041
    assert rows[15].value(DCGM_FIELD_DRAM_ACTIVE) == 0.688  # first row after the reprinted header


def test_eight_gpu_recording_in_dcgm2_layout_keeps_each_gpu_apart():
    rows = parse_file("dmon_8_gpus.txt")
    assert len(rows) == 24
    gpu3 = [row for row in rows if row.entity_id == 3]
    assert [row.value(DCGM_FIELD_DRAM_ACTIVE) for row in gpu3] == [0.61, 0.62, 0.63]
    assert {row.value(DCGM_FIELD_TENSOR_ACTIVE) for row in gpu3} == {0.095}


def test_columns_follow_the_header_names_not_the_requested_order():
    parser = DmonStreamParser()
    assert parser.feed("#Entity   TENSO        DRAMA") is None
    row = parser.feed("GPU 0     0.250        0.600")
    assert row.value(DCGM_FIELD_TENSOR_ACTIVE) == 0.25 and row.value(DCGM_FIELD_DRAM_ACTIVE) == 0.6


def test_before_any_header_columns_follow_the_requested_field_order():
    row = DmonStreamParser().feed("GPU 0  0.700  0.050")
    assert row.value(DCGM_FIELD_DRAM_ACTIVE) == 0.7 and row.value(DCGM_FIELD_TENSOR_ACTIVE) == 0.05


@pytest.mark.parametrize("line", [
    "", "   ", "ID", "      Id", "GPU 0  0.5", "GPU 0  0.5  0.1  0.2", "GPU x  0.5  0.1", "GPU 0  abc  0.1",
    "GPU 0  -0.1  0.1", "GPU 0  nan  0.1", "dmon was stopped due to receiving a signal", "Segmentation fault",
    "0.5 0.1 GPU 0", "\x1b[2K",
])
def test_garbage_and_layout_lines_give_nothing(line):
    assert DmonStreamParser().feed(line) is None


def test_mig_rows_parse_with_their_own_entity_kind():
    row = DmonStreamParser().feed("GPU-I 1    0.300        0.020")
    assert (row.entity_kind, row.entity_id) == ("GPU-I", 1)


@pytest.mark.parametrize("name, expected", [
    ("dmon_host_engine_down.txt", "Error: Unable to connect to host engine."),
    ("dmon_profiling_unsupported.txt", "Error setting watches. Result: The third-party Profiling module"),
])
def test_error_lines_are_reported(name, expected):
    errors = [item for item in parse_file(name) if isinstance(item, DmonError)]
    assert any(error.message.startswith(expected) for error in errors)


@pytest.mark.parametrize("message, expected", [
    ("Error: Unable to connect to host engine. Host engine connection invalid/disconnected.", "DCGM host engine"),
    ("Error: unable to establish a connection to the specified host: localhost", "DCGM host engine"),
    ("Error setting watches. Result: The third-party Profiling module returned an unrecoverable error",
     "DCGM cannot watch the DRAM/tensor profiling fields"),
    ("Error setting watches. Result: -29: Unable to watch one or more of the requested fields because doing so "
     "requires the host engine to be running as root.", "DCGM profiling fields need nv-hostengine running as root"),
    ("Error: something new", "dcgmi dmon failed"),
])
def test_dcgmi_errors_are_explained_and_quoted(message, expected):
    reason = explain_dcgmi_error(message)
    assert reason.startswith(expected) and reason.endswith(message)


def test_the_dcgmi_command_line():
    assert dcgmi_command("dcgmi", 3, 1000) == ["dcgmi", "dmon", "-e", "1005,1004", "-d", "1000", "-i", "3"]


# --- sample -> roofline point ----------------------------------------------------------------------------------------

def test_sample_to_point_multiplies_activity_by_spec_ceilings():
    sample = ActivitySample(dram_active=0.6, tensor_active=0.25, timestamp_s=12.5, source="dcgm")
    point = sample_to_point(sample, spec_mem_bw_bytes_per_s=H100_SXM_BW_BYTES_PER_S,
                            spec_peak_flops_per_s=H100_SXM_BF16_DENSE_FLOPS_PER_S)
    assert point.achieved_bytes_per_s == pytest.approx(2.01e12)           # 3.35e12 x 0.6
    assert point.achieved_flops_per_s == pytest.approx(247.35e12)         # 989.4e12 x 0.25
    assert point.arithmetic_intensity_flop_per_byte == pytest.approx(123.06, abs=0.01)  # 247.35 / 2.01
    assert point.timestamp_s == 12.5


def test_idle_memory_gives_no_intensity():
    sample = ActivitySample(dram_active=0.0, tensor_active=0.1, timestamp_s=0.0, source="nvml")
    point = sample_to_point(sample, spec_mem_bw_bytes_per_s=4.8e12, spec_peak_flops_per_s=989.4e12)
    assert point.achieved_bytes_per_s == 0.0 and point.arithmetic_intensity_flop_per_byte is None


def test_trail_keeps_the_last_ten_points_oldest_first():
    trail = Trail()
    assert trail.max_points == 10 and trail.latest is None and len(trail) == 0
    for second in range(12):
        trail.add(RooflinePoint(1e12, 1e14, 100.0, float(second)))
    assert [point.timestamp_s for point in trail] == [float(s) for s in range(2, 12)]
    assert trail.latest.timestamp_s == 11.0
    trail.clear()
    assert trail.points == ()
    with pytest.raises(ValueError):
        Trail(0)


# --- a stand-in dcgmi on PATH ----------------------------------------------------------------------------------------

def install_fake_dcgmi(tmp_path: Path, monkeypatch, recording: str | None, *, hang: bool = False,
                       exit_code: int = 0, extra_lines: tuple[str, ...] = ()) -> SimpleNamespace:
    """Write an executable ``dcgmi`` that replays a recording (then exits or hangs) and put it first on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    args_file, pid_file = tmp_path / "dcgmi-args.txt", tmp_path / "dcgmi-pid.txt"
    lines = (RECORDINGS / recording).read_text().splitlines() if recording else []
    lines += list(extra_lines)
    script = "\n".join([
        f"#!{sys.executable}",
        "import os, sys, time",
        f"open({str(args_file)!r}, 'w').write(' '.join(sys.argv[1:]))",
        f"open({str(pid_file)!r}, 'w').write(str(os.getpid()))",
        f"for line in {lines!r}:",
        "    print(line, flush=True)",
        "    time.sleep(0.002)",
        "time.sleep(60)" if hang else "",
        f"sys.exit({exit_code})",
        "",
    ])
    executable = bin_dir / "dcgmi"
    executable.write_text(script)
    executable.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    return SimpleNamespace(args_file=args_file, pid_file=pid_file)


def read_all(source, *, limit: int = 100, timeout_s: float = 3.0) -> list[ActivitySample]:
    samples = []
    while len(samples) < limit:
        sample = source.read(timeout_s)
        if sample is None:
            break
        samples.append(sample)
    return samples


def test_dcgm_source_streams_samples_then_reports_the_exit(tmp_path, monkeypatch):
    fake = install_fake_dcgmi(tmp_path, monkeypatch, "dmon_single_gpu.txt")
    source = open_live_source(0, prefer=("dcgm",))
    assert isinstance(source, DcgmiSource)
    with source:
        samples = read_all(source)
        assert len(samples) == 16  # 17 rows, the first N/A
        assert (samples[1].dram_active, samples[1].tensor_active) == (0.612, 0.041)
        assert all(sample.source == "dcgm" and sample.gpu_index == 0 for sample in samples)
        assert [s.timestamp_s for s in samples] == sorted(s.timestamp_s for s in samples)
        assert source.failure == "dcgmi dmon exited (status 0)"
    assert fake.args_file.read_text() == "dmon -e 1005,1004 -d 1000 -i 0"


def test_dcgm_source_picks_its_gpu_out_of_eight(tmp_path, monkeypatch):
    install_fake_dcgmi(tmp_path, monkeypatch, "dmon_8_gpus.txt")
    source = DcgmiSource(5)
    source.start()
    with source:
        assert source.wait_ready(3.0) is None
        samples = read_all(source)
    assert [(s.dram_active, s.tensor_active) for s in samples] == [(0.65, 0.105), (0.66, 0.105), (0.67, 0.105)]


def test_host_engine_down_is_an_unavailable_reason(tmp_path, monkeypatch):
    install_fake_dcgmi(tmp_path, monkeypatch, "dmon_host_engine_down.txt", exit_code=255)
    opened = open_live_source(0, prefer=("dcgm",))
    assert isinstance(opened, Unavailable)
    assert "nv-hostengine" in opened.reason and "Unable to connect to host engine" in opened.reason
    assert opened.attempts[0][0] == "dcgm"


def test_profiling_unsupported_is_an_unavailable_reason(tmp_path, monkeypatch):
    install_fake_dcgmi(tmp_path, monkeypatch, "dmon_profiling_unsupported.txt", exit_code=1)
    opened = open_live_source(0, prefer=("dcgm",))
    assert isinstance(opened, Unavailable)
    assert "profiling fields" in opened.reason and "third-party Profiling module" in opened.reason


def test_persistent_na_fails_with_a_reason(tmp_path, monkeypatch):
    install_fake_dcgmi(tmp_path, monkeypatch, "dmon_na_fields.txt", hang=True)
    source = DcgmiSource(0, na_limit=3)
    source.start()
    with source:
        assert source.read(3.0) is None
        assert "N/A for DRAM/tensor activity on GPU 0 (3 samples in a row)" in source.failure
        source._reader.join(3.0)
        assert_reaped(source.pid)  # gave up, so it stopped dcgmi without waiting for close()


def test_early_exit_keeps_the_last_lines_as_context(tmp_path, monkeypatch):
    install_fake_dcgmi(tmp_path, monkeypatch, None, exit_code=3,
                       extra_lines=("#Entity    DRAMA        TENSO", "ID", "GPU 0      N/A          N/A",
                                    "terminate called after throwing an instance of 'std::bad_alloc'"))
    opened = open_live_source(0, prefer=("dcgm",))
    assert isinstance(opened, DcgmiSource)
    with opened:
        assert opened.read(3.0) is None
        assert opened.failure == "dcgmi dmon exited (status 3): terminate called after throwing an instance of " \
                                 "'std::bad_alloc'"


def test_silent_dcgmi_times_out_and_is_stopped(tmp_path, monkeypatch):
    fake = install_fake_dcgmi(tmp_path, monkeypatch, None, hang=True)
    opened = live._open_dcgm(0, 1.0, startup_timeout_s=0.5)
    assert opened == "dcgmi dmon printed no data for GPU 0 within 0.5 s"
    assert_reaped(int(fake.pid_file.read_text()))


def assert_reaped(pid: int) -> None:
    with pytest.raises(ProcessLookupError):  # neither running nor a zombie
        os.kill(pid, 0)


def test_close_kills_and_reaps_the_child(tmp_path, monkeypatch):
    install_fake_dcgmi(tmp_path, monkeypatch, "dmon_single_gpu.txt", hang=True)
    source = open_live_source(0, prefer=("dcgm",))
    assert isinstance(source, DcgmiSource)
    assert source.read(3.0) is not None
    pid = source.pid
    started_s = time.monotonic()
    source.close()
    assert time.monotonic() - started_s < 2.5
    assert source._process.returncode is not None
    assert_reaped(pid)
    source.close()  # twice is fine
    assert source.failure == "live source closed"
    read_all(source)  # drains what was queued, then stops
    assert source.read(0.1) is None


# --- a fake pynvml ---------------------------------------------------------------------------------------------------

class FakeNVMLError(Exception):
    def __init__(self, value: int) -> None:
        super().__init__(f"NVML error {value}")
        self.value = value


class FakeMetricsGet:
    def __init__(self) -> None:
        self.version = self.numMetrics = 0
        self.sample1 = self.sample2 = None
        self.metrics = [SimpleNamespace(metricId=0, nvmlReturn=0, value=0.0) for _ in range(4)]


class FakeNvml:
    """The slice of pynvml the GPM source uses; readings are (DRAM bw %, any-tensor %) per nvmlGpmMetricsGet."""

    NVMLError = FakeNVMLError
    NVML_SUCCESS = 0
    NVML_ERROR_NOT_SUPPORTED = 3
    NVML_ERROR_FUNCTION_NOT_FOUND = 13
    NVML_GPM_METRICS_GET_VERSION = 1
    NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5
    NVML_GPM_METRIC_DRAM_BW_UTIL = 10
    c_nvmlGpmMetricsGet_t = FakeMetricsGet

    def __init__(self, *, supported: bool = True, support_error: int | None = None,
                 readings=((60.0, 25.0), (70.0, 5.0)), metric_return: int = 0) -> None:
        self.supported, self.support_error = supported, support_error
        self.readings, self.metric_return = list(readings), metric_return
        self.initialised = self.shutdowns = self.freed = 0
        self.snapshots = 0

    def nvmlInit(self):  # noqa: N802
        self.initialised += 1

    def nvmlShutdown(self):  # noqa: N802
        self.shutdowns += 1

    def nvmlDeviceGetHandleByIndex(self, index):  # noqa: N802
        return f"gpu{index}"

    def nvmlGpmQueryDeviceSupport(self, handle):  # noqa: N802
        if self.support_error is not None:
            raise FakeNVMLError(self.support_error)
        return SimpleNamespace(version=1, isSupportedDevice=int(self.supported))

    def nvmlGpmSampleAlloc(self):  # noqa: N802
        return SimpleNamespace(snapshot=None)

    def nvmlGpmSampleFree(self, sample):  # noqa: N802
        self.freed += 1

    def nvmlGpmSampleGet(self, handle, sample):  # noqa: N802
        self.snapshots += 1
        sample.snapshot = self.snapshots

    def nvmlGpmMetricsGet(self, request):  # noqa: N802
        assert request.version == 1 and request.numMetrics == 2
        assert request.sample2.snapshot == request.sample1.snapshot + 1  # consecutive snapshots, older first
        dram_percent, tensor_percent = self.readings.pop(0)
        by_id = {self.NVML_GPM_METRIC_DRAM_BW_UTIL: dram_percent, self.NVML_GPM_METRIC_ANY_TENSOR_UTIL: tensor_percent}
        for metric in request.metrics[:2]:
            metric.value = by_id[metric.metricId]
            metric.nvmlReturn = self.metric_return
        return request


def test_nvml_gpm_source_reads_percentages_as_fractions(monkeypatch):
    fake = FakeNvml()
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    source = open_live_source(0, prefer=("nvml",), interval_s=0.01)
    assert isinstance(source, NvmlGpmSource)
    with source:
        first, second = source.read(1.0), source.read(1.0)
    assert (first.dram_active, first.tensor_active, first.source) == (0.6, 0.25, "nvml")
    assert (second.dram_active, second.tensor_active) == (0.7, 0.05)
    assert second.timestamp_s >= first.timestamp_s + 0.01
    assert (fake.freed, fake.shutdowns) == (2, 1)
    assert source.read(0.1) is None and source.failure == "live source closed"


def test_nvml_read_returns_none_before_the_interval_is_up():
    source = NvmlGpmSource(0, interval_s=5.0, nvml=FakeNvml())
    source.start()
    with source:
        assert source.read(0.05) is None
        assert source.failure is None


def test_close_from_another_thread_ends_a_waiting_read():
    source = NvmlGpmSource(0, interval_s=30.0, nvml=FakeNvml())
    source.start()
    results = []
    reader = threading.Thread(target=lambda: results.append(source.read(20.0)))
    reader.start()
    time.sleep(0.05)
    source.close()
    reader.join(2.0)
    assert not reader.is_alive() and results == [None]


@pytest.mark.parametrize("fake", [FakeNvml(supported=False), FakeNvml(support_error=3)])
def test_nvml_without_gpm_says_why_and_releases_nvml(monkeypatch, fake):
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    opened = open_live_source(0, prefer=("nvml",))
    assert opened == Unavailable(NVML_NO_GPM_REASON, (("nvml", NVML_NO_GPM_REASON),))
    assert fake.shutdowns == fake.initialised == 1


def test_nvml_metric_error_fails_the_source():
    source = NvmlGpmSource(0, interval_s=0.0, nvml=FakeNvml(metric_return=3))
    source.start()
    with source:
        assert source.read(1.0) is None
        assert source.failure == "NVML GPM has no DRAM bandwidth utilisation on GPU 0"


def test_real_pynvml_structs_carry_the_request(monkeypatch):
    """With nvidia-ml-py installed, the request is built on its real ctypes structures (no GPU needed)."""
    pynvml = pytest.importorskip("pynvml")
    seen = {}

    def metrics_get(request):
        seen["ids"] = (request.metrics[0].metricId, request.metrics[1].metricId)
        seen["version"], seen["count"] = request.version, request.numMetrics
        request.metrics[0].value, request.metrics[1].value = 42.0, 7.5
        request.metrics[0].nvmlReturn = request.metrics[1].nvmlReturn = pynvml.NVML_SUCCESS
        return request

    monkeypatch.setattr(pynvml, "nvmlGpmSampleGet", lambda handle, sample: sample)
    monkeypatch.setattr(pynvml, "nvmlGpmMetricsGet", metrics_get)
    source = NvmlGpmSource(0, interval_s=0.0, nvml=pynvml)
    source._handle, source._previous, source._current = object(), pynvml.c_nvmlGpmSample_t(), \
        pynvml.c_nvmlGpmSample_t()
    sample = source._measure()
    assert seen == {"ids": (pynvml.NVML_GPM_METRIC_DRAM_BW_UTIL, pynvml.NVML_GPM_METRIC_ANY_TENSOR_UTIL),
                    "version": pynvml.NVML_GPM_METRICS_GET_VERSION, "count": 2}
    assert (sample.dram_active, sample.tensor_active) == (0.42, 0.075)


# --- choosing a source -----------------------------------------------------------------------------------------------

def test_nothing_available_lists_every_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml raises ImportError
    opened = open_live_source(0)
    assert isinstance(opened, Unavailable)
    assert opened.reason == "dcgmi not on PATH; NVML (nvidia-ml-py) not installed"


def test_dcgm_failure_falls_back_to_nvml(tmp_path, monkeypatch):
    install_fake_dcgmi(tmp_path, monkeypatch, "dmon_host_engine_down.txt", exit_code=255)
    monkeypatch.setitem(sys.modules, "pynvml", FakeNvml())
    opened = open_live_source(0, interval_s=0.01)
    assert isinstance(opened, NvmlGpmSource)
    opened.close()


def test_preference_order_is_honoured(tmp_path, monkeypatch):
    install_fake_dcgmi(tmp_path, monkeypatch, "dmon_single_gpu.txt", hang=True)
    monkeypatch.setitem(sys.modules, "pynvml", FakeNvml())
    opened = open_live_source(0, prefer=("nvml", "dcgm"), interval_s=0.01)
    assert isinstance(opened, NvmlGpmSource)
    opened.close()


@pytest.mark.parametrize("value", ["1", "yes"])
def test_no_detect_env_disables_probing(tmp_path, monkeypatch, value):
    fake = install_fake_dcgmi(tmp_path, monkeypatch, "dmon_single_gpu.txt")
    monkeypatch.setenv(live.NO_DETECT_ENV, value)
    assert open_live_source(0) == Unavailable(NO_DETECT_REASON)
    assert not fake.args_file.exists()  # dcgmi never ran


def test_no_detect_env_off_values():
    assert not probing_disabled({})
    assert not probing_disabled({live.NO_DETECT_ENV: "0"})
    assert not probing_disabled({live.NO_DETECT_ENV: ""})


def test_unknown_source_name_is_a_programming_error():
    with pytest.raises(ValueError, match="unknown live source"):
        open_live_source(0, prefer=("rocm",))
