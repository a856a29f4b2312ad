"""The Memory view: memory per device against batch (weights flat, the total growing with the KV cache, the
capacity, the largest batch that fits, the scenario's own batch), not five bars."""

from __future__ import annotations

from dataclasses import replace

import pytest

from roofline.models.memory import memory_footprint
from roofline.presets import load_catalog
from roofline.tui.app import RooflineApp
from roofline.tui.explorer.charts import MemoryChart
from roofline.tui.inputs.form import ScenarioForm, build_scenario
from roofline.tui.views.chart_data import GIB, memory_by_batch
from roofline.tui.views.results import compute_results

CATALOG = load_catalog(user_dir=None)


def _app(**form) -> RooflineApp:
    return RooflineApp(ScenarioForm(**form), catalog=CATALOG)


@pytest.mark.parametrize("form", [dict(), dict(batch=64, prompt_tokens=8192), dict(model_ref="llama-3.1-70b"),
                                  dict(model_ref="mixtral-8x7b", hardware_id="h200", tp=2)])
def test_the_curve_crosses_the_capacity_at_the_largest_batch_that_fits(form):
    r = compute_results(build_scenario(ScenarioForm(**form), CATALOG))
    data = memory_by_batch(r)
    # every batch on the curve fits exactly when it is at most the bisected largest batch (memory grows with B)
    for batch, total in zip(data.batches, data.total_gib, strict=True):
        assert (total <= data.capacity_gib) == (batch <= r.memory.max_batch), (batch, total)
    assert data.batches[-1] >= 2 * max(r.memory.max_batch, 1)  # the curve runs past the limit
    # the scenario's own batch: the parts add up to the footprint the headline shows
    assert sum(data.parts_gib.values()) == pytest.approx(r.memory.per_device_bytes / GIB)
    # weights (and reserve) do not depend on the batch; the KV cache is B x the per-sequence cache
    at = {int(b): t for b, t in zip(data.batches, data.total_gib, strict=True)}
    scenario = r.scenario
    for batch in (1, 2, 32):
        one = memory_footprint(replace(scenario, batching=replace(scenario.batching, batch_size=batch)))
        assert at[batch] == pytest.approx(one.per_device_bytes / GIB)
        assert data.weights_gib == pytest.approx(one.per_device_weights_bytes / GIB)
    assert (data.fits_at_tp is None) == r.memory.fits


def test_a_model_that_does_not_fit_offers_the_tp_that_does():
    # Llama 3.1 70B bf16: 131.4 GiB of weights on an 80 GiB H100 -> two devices (65.7 GiB each) fit
    data = memory_by_batch(compute_results(build_scenario(ScenarioForm(model_ref="llama-3.1-70b"), CATALOG)))
    assert data.max_batch == 0 and data.fits_at_tp == 2


async def test_memory_view_shows_the_curve_the_capacity_and_the_max_batch():
    app = _app(batch=16)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("4")
        await pilot.pause()
        text = app.query_one(MemoryChart).render().plain
        m = app.explorer.results.memory
        assert f"max batch {m.max_batch:,}" in text and f"capacity {m.capacity_bytes / GIB:,.1f} GiB" in text
        assert "@ B=16:" in text and ", fits" in text and "GiB: = weights, * total" in text
        rows_with_total = [line for line in text.splitlines() if "*" in line]
        assert len(rows_with_total) >= 10  # a curve through the chart, not a bar per row
        assert "=" * 10 in text  # the weights, flat


async def test_memory_view_says_when_it_does_not_fit_and_at_which_tp_it_would():
    app = _app(model_ref="llama-3.1-70b")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("4")
        await pilot.pause()
        text = app.query_one(MemoryChart).render().plain
        assert "DOES NOT FIT" in text and "capacity 80.0 GiB" in text


def test_memory_view_snapshot(snap_compare):
    assert snap_compare(_app(batch=64, prompt_tokens=4096), terminal_size=(160, 50), press=["4"])
