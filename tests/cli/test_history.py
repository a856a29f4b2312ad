"""The memory-wall history: growth factors, trend fits, the CLI and the History view."""

from __future__ import annotations

import json
import math

import pytest

from roofline.models.hardware import Hardware
from roofline.models.history import closest_pairs_to_claim, growth, metric_value, ridge_flops_per_byte, trend
from roofline.presets import load_catalog
from roofline.tui.app import RooflineApp
from roofline.tui.cli.main import main
from roofline.tui.inputs.form import ScenarioForm

CATALOG = load_catalog(user_dir=None)
HW = CATALOG.hardware


@pytest.mark.parametrize(
    ("metric", "compute_x"),
    [("fp64", 34 / 1.31), ("fp64-matrix", 67 / 1.31), ("fp32", 67 / 3.95), ("bf16", 989.4 / 3.95)],
)
def test_k20x_to_h100_growth(metric, compute_x):
    """K20X (2012: 1.31 TF FP64, 3.95 TF FP32, 250 GB/s) -> H100 SXM (34 / 67 TF FP64, 67 TF FP32,
    989.4 TF dense bf16, 3,350 GB/s): FP64 26x, FP64 matrix 51x, 16-bit (FP32 on K20X) 250x; bandwidth
    3350 / 250 = 13.4x (memory-wall-claims.md, section 2)."""
    g = growth(HW["k20x"], HW["h100-sxm"], metric)
    assert g.compute_x == pytest.approx(compute_x, rel=1e-9)
    assert g.bandwidth_x == pytest.approx(13.4, rel=1e-9)


def test_pairs_that_come_close_to_the_claim():
    """K20 -> MI250X: 95.7 / 1.17 = 81.8x FP64 matrix, 3276.8 / 208 = 15.75x bandwidth: the closest pair."""
    best = closest_pairs_to_claim(HW.values(), "fp64-matrix")[0]
    assert (best.from_id, best.to_id) == ("k20", "mi250x")
    assert best.compute_x == pytest.approx(95.7 / 1.17)
    assert best.bandwidth_x == pytest.approx(3276.8 / 208)


def _device(hw_id: str, year: int, bf16_tflops: float, bw_gb_s: float) -> Hardware:
    return Hardware(id=hw_id, name=hw_id, vendor="Test", year=year, memory_capacity_bytes=1e9,
                    mem_bw_bytes_per_s=bw_gb_s * 1e9, dense_peak_flops_per_s={"bf16": bf16_tflops * 1e12})


def test_trend_recovers_exact_rates():
    """Compute x3 every 2 years and bandwidth x1.5 every 2 years over 2012..2020: the fit returns 3.0 and 1.5."""
    devices = [_device(f"d{y}", y, 10 * 3 ** ((y - 2012) / 2), 100 * 1.5 ** ((y - 2012) / 2))
               for y in range(2012, 2021, 2)]
    t = trend(devices, "bf16")
    assert t.compute_per_2y == pytest.approx(3.0)
    assert t.bandwidth_per_2y == pytest.approx(1.5)
    assert (t.first_year, t.last_year, t.devices) == (2012, 2020, 5)
    assert t.compute_doubling_years == pytest.approx(2 * math.log(2) / math.log(3))


def test_trend_needs_two_years():
    assert trend([_device("a", 2020, 1, 1), _device("b", 2020, 2, 2)], "bf16") is None


def test_every_history_device_has_a_source_and_a_year():
    for hw in HW.values():
        assert hw.source.strip(), hw.id
        assert 2010 <= hw.year <= 2026


def test_ridge_points():
    """H100 SXM 989.4 / 3.35 = 295.3; K20X (FP32) 3950 / 250 = 15.8 FLOP/B."""
    assert ridge_flops_per_byte(HW["h100-sxm"]) == pytest.approx(295.3, abs=0.05)
    assert ridge_flops_per_byte(HW["k20x"]) == pytest.approx(15.8)
    assert metric_value(HW["k20x"], "fp8") is None


def test_history_json_contract(capsys):
    assert main(["history", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["growth"] == {"from": "k20x", "to": "h100-sxm", "compute_metric": "bf16",
                             "compute_x": pytest.approx(250.48, rel=1e-3), "bandwidth_x": pytest.approx(13.4)}
    assert out["trend"]["compute_per_2y"] > out["trend"]["bandwidth_per_2y"] > 1
    ids = {d["id"] for d in out["devices"]}
    assert {"k20x", "h100-sxm", "mi300x", "tpu-v5p"} <= ids
    assert all(d["source"] and d["mem_bw_bytes_per_s"] > 0 for d in out["devices"])


def test_history_text_and_filters(capsys):
    assert main(["history", "--metric", "fp64", "--vendor", "NVIDIA", "--width", "80", "--height", "16"]) == 0
    out = capsys.readouterr().out
    assert "k20x -> h100-sxm: compute x26.0 (fp64), bandwidth x13.4" in out
    assert "\x1b[" not in out  # plain text when not a terminal


@pytest.mark.parametrize("argv", [["history", "--from", "nope"], ["history", "--vendor", "Nvidiax"],
                                  ["history", "--metric", "fp8", "--from", "k20x"],
                                  ["history", "--width", "5"]])
def test_history_errors_are_one_line(argv, capsys):
    with pytest.raises(SystemExit) if argv[1] == "--width" else _no_raise():
        code = main(argv)
        assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "error" in err[0]


class _no_raise:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


async def test_history_view_highlights_the_selected_hardware():
    app = RooflineApp(ScenarioForm(hardware_id="h200"), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("7")
        await pilot.pause()
        from roofline.tui.explorer.charts import HistoryGrowthChart

        chart = app.query_one(HistoryGrowthChart)
        assert "selected: h200" in chart.render().plain
        app.query_one("#history-metric").value = "fp64"
        await pilot.pause()
        assert "x26.0 (fp64)" in str(app.query_one("#history-callout").render())


@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])
def test_history_snapshot(snap_compare, size):
    assert snap_compare(RooflineApp(ScenarioForm(), catalog=CATALOG), terminal_size=size, press=["7"])
