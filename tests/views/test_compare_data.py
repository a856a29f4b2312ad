"""The Compare table as data (tui/views/compare_data.py): TP used, smallest TP that fits, no numbers where the
workload does not fit, each device's own price and figures, and sorting on numbers."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from roofline.models.memory import memory_footprint
from roofline.presets.loader import load_catalog
from roofline.tui.inputs.form import ScenarioForm, build_scenario
from roofline.tui.views.chart_data import compare_lines
from roofline.tui.views.compare_data import (
    COLUMNS,
    MAX_TP_SEARCH,
    CompareRow,
    compare_rows,
    number_in,
    smallest_fitting_tp,
    sort_rows,
    sorted_by,
)
from roofline.tui.views.results import compute_results

CATALOG = load_catalog()


def _results(**form):
    return compute_results(build_scenario(ScenarioForm(**form), CATALOG))


def _rows(ids, achievable=False, price=None, **form):
    return compare_rows(_results(**form), CATALOG.hardware, ids, achievable=achievable, price_usd_per_hour=price)


def test_a_70b_model_in_bf16_fits_an_80_gib_device_at_tp_2_and_a_48_gib_one_at_tp_4():
    # Llama 3.1 70B: 70.6e9 params x 2 bytes = 141 GB = 131.5 GiB of weights: not in 80 GiB (H100) at TP 1;
    # TP 2: 65.7 GiB + 1 GiB reserve + a little KV and workspace < 80 GiB -> fits at TP 2.
    # L40S, 48 GiB: TP 2 needs 65.7 GiB > 48; TP 4: 32.9 GiB + 1 + ... < 48 -> fits at TP 4.
    rows = {row.hardware_id: row for row in _rows(["h200", "l40s"], model_ref="llama-3.1-70b")}
    h100, h200, l40s = rows["h100-sxm"], rows["h200"], rows["l40s"]
    assert h100.current and not h100.fits and h100.fits_at_tp == 2 and h100.tp == 1
    assert l40s.fits_at_tp == 4
    assert h200.fits and h200.fits_at_tp is None  # 131.5 + 1 + ... < 141 GiB
    # no throughput, TTFT, idle or price for a device the workload does not fit on; the fix is offered instead
    for row in (h100, l40s):
        assert (row.tokens_per_s, row.tokens_per_s_per_seq, row.ttft_s, row.idle_core_pct, row.usd_per_mtok) == (
            None,) * 5
    cells = dict(zip((c.key for c in COLUMNS), h100.cells(), strict=True))
    assert cells["fits"] == "NO: TP 2 fits" and cells["tokens_per_s"] == "-" and cells["usd_per_mtok"] == "-"
    assert cells["tp"] == "1" and cells["device"].startswith("> NVIDIA H100")


def test_smallest_fitting_tp_is_a_divisor_of_the_heads_that_fits_and_no_smaller_one_does():
    for model, hw in (("llama-3.1-70b", "l40s"), ("llama-3.1-405b", "h200"), ("mixtral-8x22b", "a100-sxm4-40gb"),
                      ("qwen2.5-72b", "rtx-4090")):
        s = build_scenario(ScenarioForm(model_ref=model, hardware_id=hw), CATALOG)
        tp = smallest_fitting_tp(s)
        heads = s.model.attention.num_heads
        if tp is not None:
            assert heads % tp == 0 and tp <= MAX_TP_SEARCH
            assert memory_footprint(replace(s, parallelism=replace(s.parallelism, tp=tp))).fits
        for smaller in range(1, tp or MAX_TP_SEARCH + 1):
            if heads % smaller == 0 and smaller != tp:
                trial = replace(s, parallelism=replace(s.parallelism, tp=smaller))
                assert not memory_footprint(trial).fits, (model, hw, smaller)


def test_a_device_without_an_interconnect_offers_no_tp():
    # M1 Max: 64 GiB, no device interconnect; 131.5 GiB of weights cannot fit on one, and TP needs a link
    s = build_scenario(ScenarioForm(model_ref="llama-3.1-70b", hardware_id="m1-max"), CATALOG)
    assert smallest_fitting_tp(s) is None
    row = _rows([], model_ref="llama-3.1-70b", hardware_id="m1-max")[0]
    assert row.cells()[6] == f"NO: not at TP {MAX_TP_SEARCH}"


def test_price_per_million_tokens_counts_every_device_and_each_device_keeps_its_own_price():
    rows = {row.hardware_id: row for row in _rows(["h200", "mi300x"], price=10.0, tp=2, model_ref="llama-3.1-8b")}
    for hw_id, price in (("h100-sxm", 10.0), ("h200", CATALOG.hardware["h200"].price_usd_per_hour),
                         ("mi300x", CATALOG.hardware["mi300x"].price_usd_per_hour)):
        row = rows[hw_id]
        s = row.scenario
        e = compute_results(s).bound
        # $/Mtok x output tokens per hour / 1e6 = the price of all TP x PP devices for that hour
        tokens_per_hour = e.output_tokens_per_s * 3600
        assert row.usd_per_mtok * tokens_per_hour / 1e6 == pytest.approx(price * 2)
    assert rows["h200"].usd_per_mtok != rows["mi300x"].usd_per_mtok


def test_the_current_devices_overrides_stay_on_it():
    rows = _rows(["h200"], mem_bw_override_gb_per_s=1000.0, capacity_override_gib=40.0)
    current, h200 = rows
    assert current.mem_bw_bytes_per_s == pytest.approx(1000e9) and current.capacity_bytes == 40 * 1024**3
    assert h200.mem_bw_bytes_per_s == CATALOG.hardware["h200"].mem_bw_bytes_per_s
    assert h200.capacity_bytes == CATALOG.hardware["h200"].memory_capacity_bytes


def test_ridge_and_bandwidth_follow_the_ceilings_in_use():
    spec, achievable = _rows(["h200"])[1], _rows(["h200"], achievable=True)[1]
    h200 = CATALOG.hardware["h200"]
    # spec: 989 TFLOP/s bf16 / 4.8 TB/s = 206 FLOP/B; achievable bandwidth is a measured fraction below spec
    assert spec.ridge_flops_per_byte == pytest.approx(h200.ridge_flops_per_byte("bf16"))
    assert achievable.mem_bw_bytes_per_s < spec.mem_bw_bytes_per_s


def test_sorting_puts_rows_without_a_number_last_in_either_direction():
    rows = _rows(["h200", "b200", "l40s", "mi300x"], model_ref="llama-3.1-70b")
    fast_first = sort_rows(rows, "tokens_per_s_per_seq")
    values = [row.tokens_per_s_per_seq for row in fast_first]
    present = [v for v in values if v is not None]
    assert present == sorted(present, reverse=True) and values[len(present):] == [None] * (len(values) - len(present))
    slow_first = sort_rows(rows, "tokens_per_s_per_seq", descending=False)
    assert [r.tokens_per_s_per_seq for r in slow_first][: len(present)] == sorted(present)
    assert sort_rows(rows, "ttft_s")[0].ttft_s == min(present_ttft := [r.ttft_s for r in rows if r.ttft_s])
    assert len(present_ttft) == len(present)
    # fits: fitting devices first, then the smaller TP that would fit
    by_fit = [r.fits_text() for r in sort_rows(rows, "fits", descending=False)]
    assert by_fit[:3] == ["yes"] * 3 and by_fit[3:] == ["NO: TP 2 fits", "NO: TP 4 fits"]
    assert sort_rows(rows, None) == rows


@given(st.lists(st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False)), max_size=12), st.booleans())
def test_sorted_by_is_a_permutation_ordered_with_nones_last(values, descending):
    out = sorted_by(list(enumerate(values)), "x", lambda item: item[1], descending=descending)
    assert sorted(out) == sorted(enumerate(values))
    numbers = [v for _, v in out if v is not None]
    assert numbers == sorted(numbers, reverse=descending)
    assert all(v is None for _, v in out[len(numbers):])


def test_number_in_reads_cells():
    assert number_in("$1,234.5") == 1234.5
    assert number_in("12 (3xTP2)") == 12.0
    assert number_in("-") is None and number_in("none") is None


def test_an_unknown_device_is_a_row_that_says_so():
    row = _rows(["no-such-gpu"])[1]
    assert row == CompareRow(hardware_id="no-such-gpu", name="no-such-gpu", current=False, problem="unknown hardware")
    assert row.cells()[6] == "n/a: unknown hardware" and row.sort_value("fits") is None


def test_slides_compare_lines_come_from_the_same_rows():
    lines = compare_lines(CATALOG, _results(model_ref="llama-3.1-70b"), ["h200", "l40s"])
    assert lines[1].startswith("> NVIDIA H100") and lines[1].endswith("NO: TP 2 fits")
    assert " - " in lines[1]  # no throughput where it does not fit
    assert lines[3].endswith("NO: TP 4 fits") and lines[2].endswith("yes")
