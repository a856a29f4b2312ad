"""``expected``'s band along the Batch and Context sweeps (issue 18; ExplorerResults.batch_band / context_band): it
brackets the plotted ``expected`` curve at every point, equals models/band.py's figures where the sweep and the
estimate meet, is computed only when a chart under the achievable ceilings asks, and spec mode has none."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from roofline.models.band import band_engines, band_scenarios, expected_band
from roofline.models.inference import estimate
from roofline.presets import load_catalog
from roofline.tui.inputs.form import ScenarioForm, build_scenario
from roofline.tui.views.chart_data import batch_args, context_args
from roofline.tui.views.results import compute_results

CATALOG = load_catalog(user_dir=None)
FORMS = [
    ScenarioForm(batch=16),  # Llama-3.1-8B on an H100 (measured fractions): NVIDIA's current engines
    ScenarioForm(model_ref="llama-3.1-70b", tp=4, batch=8, prompt_tokens=4096, output_tokens=1024),  # TP ring
    ScenarioForm(model_ref="mixtral-8x7b", kv="fp8", batch=4),  # MoE: experts touched grow with the batch
    ScenarioForm(hardware_id="mi300x", batch=32),  # AMD: the ROCm engines
]
REL = 1e-12  # the same floating-point operations in another order at most


def _results(form: ScenarioForm):
    return compute_results(build_scenario(form, CATALOG))


@pytest.mark.parametrize("form", FORMS)
def test_the_batch_band_brackets_the_expected_curve_at_every_batch(form):
    """expected runs the scenario's own engine at the preset's fractions, both among the band's candidates, so at
    each batch low <= expected <= high, for both plotted rates; the band spans the sweep's own batches."""
    r = _results(form)
    sweep, band = r.batch_sweep(True), r.batch_band()
    assert np.array_equal(band.x, sweep.batches)
    for name in ("tokens_per_s", "tokens_per_s_per_seq"):
        curve, low, high = getattr(sweep, name), getattr(band, f"{name}_low"), getattr(band, f"{name}_high")
        assert np.all(low <= curve * (1 + REL)) and np.all(curve <= high * (1 + REL)), name
        assert np.all(low < high), name  # corners at 0.774 and 0.904 of spec bandwidth: never one value
    # aggregate = batch x per sequence, at both ends
    assert np.allclose(band.tokens_per_s_low, band.x * band.tokens_per_s_per_seq_low, rtol=REL)
    assert np.allclose(band.tokens_per_s_high, band.x * band.tokens_per_s_per_seq_high, rtol=REL)


@pytest.mark.parametrize("form", FORMS)
def test_the_context_band_brackets_the_expected_curve_at_every_context(form):
    r = _results(form)
    sweep, band = r.context_sweep(True), r.context_band()
    assert np.array_equal(band.x, sweep.contexts)
    curve = sweep.tokens_per_s_per_seq
    assert np.all(band.tokens_per_s_per_seq_low <= curve * (1 + REL))
    assert np.all(curve <= band.tokens_per_s_per_seq_high * (1 + REL))
    # tokens/s = batch / step at each end: the slow step gives the low rate
    b = r.scenario.batching.batch_size
    assert np.allclose(band.tokens_per_s_low, b / band.step_time_s_high, rtol=REL)


def test_the_batch_band_at_the_scenario_batch_is_band_py_figure():
    """At B=16 (a power of two, so a point of the sweep) the sweep's mean decode step is the estimate's, so the band
    there is expected_band's decode tokens/s, low and high; and, recomputed here from band.py's scenarios, the
    smallest and largest of the estimates (each current NVIDIA engine at 2 corners)."""
    r = _results(FORMS[0])
    band = r.batch_band()
    i = int(np.flatnonzero(band.x == 16)[0])
    figures = expected_band(r.scenario)
    assert band.tokens_per_s_low[i] == pytest.approx(figures.low["decode"]["tokens_per_s"], rel=1e-9)
    assert band.tokens_per_s_high[i] == pytest.approx(figures.high["decode"]["tokens_per_s"], rel=1e-9)
    assert band.tokens_per_s_per_seq_low[i] == pytest.approx(figures.low["decode"]["tokens_per_s_per_seq"], rel=1e-9)
    rates = [estimate(s, "expected").decode.tokens_per_s for s in band_scenarios(r.scenario)]
    assert len(rates) == 2 * len(band_engines(r.scenario)) > 2
    assert (band.tokens_per_s_low[i], band.tokens_per_s_high[i]) == pytest.approx((min(rates), max(rates)), rel=1e-9)
    # the band is not degenerate here: H100's measured bandwidth 0.887 sits inside 0.774..0.904
    assert band.tokens_per_s_low[i] < r.expected.decode.tokens_per_s < band.tokens_per_s_high[i]


def test_the_context_band_at_one_context_is_band_py_figure():
    """With 2 output tokens the generation decodes one step, at context P + 1; choose P so that P + 1 is a point
    of the sweep (whose contexts do not depend on P while 2 (P + 2) <= 128k). There the band of tokens/s per
    sequence is expected_band's."""
    first = _results(replace(FORMS[0], output_tokens=2))
    context = float(first.context_sweep(True).contexts[50])
    r = _results(replace(FORMS[0], prompt_tokens=int(context) - 1, output_tokens=2))
    band = r.context_band()
    i = int(np.flatnonzero(band.x == context)[0])
    figures = expected_band(r.scenario)
    assert band.tokens_per_s_per_seq_low[i] == pytest.approx(figures.low["decode"]["tokens_per_s_per_seq"],
                                                             rel=1e-9)
    assert band.tokens_per_s_per_seq_high[i] == pytest.approx(figures.high["decode"]["tokens_per_s_per_seq"],
                                                              rel=1e-9)


def test_the_band_is_computed_only_when_an_achievable_chart_asks_and_spec_mode_has_none():
    r = _results(FORMS[0])
    assert not any("band" in key[0] for key in r._sweeps)  # not at start-up
    spec_batch, spec_context = batch_args(r, False), context_args(r, False)
    assert len(spec_batch) == 4 and len(spec_context) == 5  # bound: no band argument
    assert not any("band" in key[0] for key in r._sweeps)
    assert batch_args(r, True)[-1] is r.batch_band()  # computed once, then cached
    assert ("context band",) not in r._sweeps  # each view's band on its own
    assert context_args(r, True)[-1] is r.context_band()


def test_a_batch_change_keeps_the_batch_band_and_a_prompt_change_does_not():
    """The band, like the sweep, spans batch sizes: it does not depend on the scenario's own batch."""
    before = _results(FORMS[0])
    band = before.batch_band()
    after = _results(replace(FORMS[0], batch=32))
    after.carry_over(before)
    assert after.batch_band() is band
    other = _results(replace(FORMS[0], prompt_tokens=FORMS[0].prompt_tokens * 4))
    other.carry_over(before)
    assert other.batch_band() is not band
    assert not np.array_equal(other.batch_band().tokens_per_s_low, band.tokens_per_s_low)
