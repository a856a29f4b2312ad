"""What the explorer computes per scenario: a batch change may keep the batch sweep, because it does not depend on
the batch size (checked here, not assumed), and nothing else is carried over."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline.models.estimate import scenario_ceilings
from roofline.presets import load_catalog
from roofline.tui.inputs.form import ScenarioForm, build_scenario
from roofline.tui.views.results import compute_results

CATALOG = load_catalog()
FORMS = [
    ScenarioForm(),  # Llama-3.1-8B on an H100, dense GQA
    ScenarioForm(model_ref="llama-3.1-70b", tp=4, prompt_tokens=4096, output_tokens=1024),
    ScenarioForm(model_ref="mixtral-8x7b", kv="fp8"),  # MoE: experts touched grow with the batch
    ScenarioForm(model_ref="deepseek-v3", hardware_id="h200", tp=8, weights="fp8"),  # MLA, MoE
]


def _results(form: ScenarioForm, batch: int):
    from dataclasses import replace

    return compute_results(build_scenario(replace(form, batch=batch), CATALOG))


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(FORMS), st.integers(1, 512), st.integers(1, 512), st.booleans())
def test_batch_sweep_and_crossover_do_not_depend_on_the_batch_size(form, batch_a, batch_b, achievable):
    a, b = _results(form, batch_a), _results(form, batch_b)
    assert a.compute_bound_batch(achievable) == b.compute_bound_batch(achievable)
    sweep_a, sweep_b = a.batch_sweep(achievable), b.batch_sweep(achievable)
    if np.array_equal(sweep_a.batches, sweep_b.batches):
        for field in ("step_time_s", "tokens_per_s_per_seq", "tokens_per_s"):
            assert np.array_equal(getattr(sweep_a, field), getattr(sweep_b, field)), field
        assert sweep_a.max_batch_that_fits == sweep_b.max_batch_that_fits


@pytest.mark.parametrize("form", FORMS[:2])
def test_carry_over_keeps_the_sweep_only_across_a_batch_change(form):
    from dataclasses import replace

    before = _results(form, 16)
    sweep = before.batch_sweep(False)
    after_batch = _results(form, 32)
    after_batch.carry_over(before)
    assert after_batch.batch_sweep(False) is sweep  # taken over, not swept again

    after_prompt = compute_results(build_scenario(replace(form, batch=16, prompt_tokens=form.prompt_tokens * 2),
                                                  CATALOG))
    after_prompt.carry_over(before)
    assert after_prompt.batch_sweep(False) is not sweep  # the prompt changes the sweep: swept again
    assert after_prompt.compute_bound_batch(False) == after_prompt.batch_sweep(False).compute_bound_batch


def test_carry_over_does_not_take_a_sweep_over_other_batch_sizes():
    form = FORMS[0]
    before = _results(form, 4)
    sweep = before.batch_sweep(False)
    beyond = _results(form, 1 << 14)  # past the largest batch that fits: the sweep spans further
    beyond.carry_over(before)
    assert not np.array_equal(beyond.batch_sweep(False).batches, sweep.batches)
    assert beyond.batch_sweep(False).batches[-1] >= 1 << 14


@pytest.mark.parametrize("form", FORMS)
def test_both_estimates_from_one_set_of_ops_equal_each_built_alone(form):
    """compute_results builds the generation's ops once for both estimates and shows its prefill ops as built."""
    from roofline.models.inference import estimate
    from roofline.models.ops import build_ops

    for batch in (1, 48):
        r = _results(form, batch)
        assert r.bound == estimate(r.scenario, "bound")
        assert r.expected == estimate(r.scenario, "expected")
        assert r.prefill_ops == build_ops(r.scenario, "prefill", batch=batch)


def test_ops_of_another_scenario_are_refused():
    from dataclasses import replace

    from roofline.models.inference import estimate, generation_ops

    one = build_scenario(FORMS[1], CATALOG)
    other = build_scenario(replace(FORMS[1], batch=64), CATALOG)
    with pytest.raises(ValueError, match="another scenario"):
        estimate(one, "bound", generation_ops(other))


@pytest.mark.parametrize("form", [*FORMS, ScenarioForm(model_ref="gemma-2-9b", prompt_tokens=6000)])  # + windows
@pytest.mark.parametrize("achievable", [False, True])
def test_the_shown_context_point_is_the_sweep_over_that_context_alone(form, achievable):
    """The point comes out of the sweep's own call (one more context); it equals a sweep over it alone, and the
    sweep's own contexts are untouched by it."""
    from roofline.models.sweeps import context_sweep

    r = _results(form, 8)
    name = "expected" if achievable else "bound"
    point, sweep = r.context_point(achievable), r.context_sweep(achievable)
    alone = context_sweep(r.scenario, np.array([r.shown_context]), name)
    for field in ("contexts", "step_time_s", "tokens_per_s_per_seq", "tokens_per_s", "kv_time_share"):
        np.testing.assert_array_equal(getattr(point, field), getattr(alone, field))
    separately = context_sweep(r.scenario, sweep.contexts, name)
    np.testing.assert_array_equal(sweep.tokens_per_s_per_seq, separately.tokens_per_s_per_seq)
    np.testing.assert_array_equal(sweep.kv_time_share, separately.kv_time_share)
    assert sweep.contexts[0] == 64 and sweep.contexts[-1] >= 131072  # the sweep's range, without the point


def test_a_stated_peak_replaces_the_fp16_accumulate_rate_too():
    """An RTX 4090 under llama.cpp runs its GEMMs at the FP16-accumulate 330.3 TFLOP/s x 0.588; with the peak field
    set to 200 TFLOP/s that stated peak is the one used (200e12 x 0.588), not the preset's faster mode."""
    catalog = load_catalog()
    base = ScenarioForm(hardware_id="rtx-4090", model_ref="llama-3-8b", engine="llamacpp")
    preset = scenario_ceilings(build_scenario(base, catalog), "expected")
    stated = scenario_ceilings(build_scenario(dataclasses.replace(base, peak_override_tflops=200.0), catalog),
                               "expected")
    assert preset.matmul_flops_per_s == pytest.approx(330.3e12 * 0.588)
    assert stated.matmul_flops_per_s == pytest.approx(200e12 * 0.588)
