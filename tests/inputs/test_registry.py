"""The input registry is the only source of the scenario's inputs: the form, the model objects it fills, the panes
and the groups follow from its records."""

from __future__ import annotations

import inspect
from dataclasses import fields

import pytest

from roofline.models.scenario import Batching, Parallelism, Scenario, released_precisions
from roofline.models.serving import ServingMix, ServingOptions
from roofline.presets import load_hardware, resolve_model
from roofline.tui.inputs.form import ScenarioForm, model_kwargs, scenario_from
from roofline.tui.inputs.registry import (
    BY_NAME,
    FORM_FIELDS,
    GROUPS,
    INPUTS,
    PANES,
    SERVING_INPUTS,
    inputs_for_pane,
    inputs_in_group,
)

# every model_field target -> the names it takes
TARGETS = {
    "Batching": {f.name for f in fields(Batching)},
    "Parallelism": {f.name for f in fields(Parallelism)},
    "Scenario": {f.name for f in fields(Scenario)},
    "ServingMix": {f.name for f in fields(ServingMix)},
    "ServingOptions": {f.name for f in fields(ServingOptions)},
    "released_precisions": set(inspect.signature(released_precisions).parameters) - {"model"},
}


def test_the_form_has_one_field_per_input_with_its_default():
    assert tuple(f.name for f in fields(ScenarioForm)) == FORM_FIELDS
    form = ScenarioForm()
    for name in FORM_FIELDS:
        assert getattr(form, name) == BY_NAME[name].default, name
    assert "shown_context" not in FORM_FIELDS  # a view setting, kept beside the form


def test_the_form_is_a_frozen_keyword_only_value():
    form = ScenarioForm(batch=8)
    with pytest.raises(AttributeError):
        form.batch = 4
    with pytest.raises(TypeError):
        ScenarioForm("h100-sxm")
    assert form == ScenarioForm(batch=8) and hash(form) == hash(ScenarioForm(batch=8))
    assert not hasattr(form, "__dict__")  # slotted


def test_batch_and_prompt_stop_at_the_registry_limits():
    """batch 1..2^20 = 1,048,576 and prompt 1..10,000,000 (the registry's ranges, not a copy of them)."""
    form = ScenarioForm()
    assert form.with_batch(5_000_000).batch == 1_048_576 == BY_NAME["batch"].high
    assert form.with_batch(0).batch == 1
    assert form.with_prompt(20_000_000).prompt_tokens == 10_000_000 == BY_NAME["prompt_tokens"].high
    assert form.with_prompt(-3).prompt_tokens == 1
    assert ScenarioForm(batch=3).scaled("batch", 0.5).batch == 1  # int(1.5)
    assert ScenarioForm(batch=1 << 20).scaled("batch", 2).batch == 1 << 20


def test_serving_inputs_are_the_serving_group_in_the_batching_pane():
    assert tuple(i.name for i in inputs_in_group("serving")) == SERVING_INPUTS
    assert SERVING_INPUTS[0] == "serving"  # the switch first, then its fields
    assert {"concurrency", "rate_per_s", "itl_target_ms", "spec_tokens"} <= set(SERVING_INPUTS)
    assert all(BY_NAME[name].pane == "batching" for name in SERVING_INPUTS)


def test_every_record_names_a_known_pane_and_group():
    for spec in INPUTS:
        assert spec.pane in (*PANES, ""), spec.name
        assert spec.group in GROUPS, spec.name
    assert [i.name for i in inputs_for_pane("hardware")][:3] == ["hardware_id", "tp", "pp"]
    assert [i.name for i in inputs_for_pane("workload")] == ["model_ref", "weights", "activations", "kv"]
    assert sum(len(inputs_for_pane(p)) for p in PANES) == len([i for i in INPUTS if i.pane])
    with pytest.raises(KeyError):
        inputs_for_pane("nowhere")


def test_names_flags_and_file_keys_are_unique_and_ranges_hold_the_defaults():
    for attr in ("name", "flag", "file_key"):
        values = [getattr(i, attr) for i in INPUTS if getattr(i, attr)]
        assert len(values) == len(set(values)), attr
    for spec in INPUTS:
        if spec.kind in ("int", "float"):
            assert spec.low is not None and spec.high is not None and spec.low < spec.high, spec.name
            if spec.default is not None:
                assert spec.low <= spec.default <= spec.high, spec.name
        if spec.kind == "dtype":
            assert spec.choices and (spec.default is None or spec.default in spec.choices), spec.name
        if spec.kind == "id":
            assert spec.preset_kind in ("hardware", "models"), spec.name


def test_every_model_field_is_a_field_of_its_target():
    for spec in INPUTS:
        if spec.model_field:
            target, _, name = spec.model_field.partition(".")
            assert name in TARGETS[target], spec.model_field


def test_every_batching_and_parallelism_field_has_an_input():
    """Nothing a person can set in the static batch is left to a default the registry does not know."""
    for target in ("Batching", "Parallelism"):
        assert set(model_kwargs(ScenarioForm(), target)) == TARGETS[target]


def test_the_scenario_is_built_from_the_records():
    """A form with every scenario input away from its default reaches the model objects by model_field (the same
    scenario as spelled out field by field)."""
    form = ScenarioForm(hardware_id="h200", model_ref="llama-3.1-70b", tp=2, pp=2, batch=8, prompt_tokens=2048,
                        output_tokens=100, flash_attention=False, kv_compression_ratio=2.0, weights="fp8",
                        activations="fp8", kv="fp8", engine="vllm", topology="nvswitch")
    hardware, model = load_hardware("h200"), resolve_model("llama-3.1-70b")
    built = scenario_from(form, hardware, model)
    assert built.batching == Batching(batch_size=8, prompt_tokens=2048, output_tokens=100, flash_attention=False,
                                      kv_compression_ratio=2.0)
    assert built.parallelism == Parallelism(tp=2, pp=2)
    assert (built.engine, built.topology) == ("vllm", "nvswitch")
    assert built.precisions == released_precisions(model, weights="fp8", activations="fp8", kv="fp8")


def test_serving_model_fields_fill_the_mix_and_the_options():
    form = ScenarioForm(prefix_tokens=512, prefix_hit_rate=0.5, price_per_device_hour=2.5)
    assert model_kwargs(form, "ServingMix") == {"prefix_tokens": 512, "prefix_hit_rate": 0.5}
    options = model_kwargs(form, "ServingOptions")  # every ServingOptions.* input (a new one adds its key)
    assert options["price_usd_per_hour"] == 2.5 and options["arrivals"] == "closed"
    assert set(options) == {i.model_field.split(".")[1] for i in INPUTS if i.model_field.startswith("ServingOptions.")}
    ServingMix(prompt_tokens=1024, output_tokens=10, **model_kwargs(form, "ServingMix"))  # accepted as given


def test_an_input_with_a_serving_options_field_reaches_plan_and_the_explorer(capsys):
    """--arrivals is one registry record: plan's JSON and the explorer's serving settings both follow it."""
    import json

    from roofline.tui.views.serving_data import serving_settings
    from tests.conftest import run_cli

    code, out, err = run_cli(["plan", "--arrivals", "poisson", "--concurrency", "4", "--format", "json"], capsys)
    assert code == 0, err
    assert json.loads(out)["arrivals"]["frontier"] == "poisson"
    form = ScenarioForm(arrivals="poisson", serving=True)
    scenario = scenario_from(form, load_hardware("h100-sxm"), resolve_model("llama-3.1-8b"))
    assert serving_settings(form, scenario).options.arrivals == "poisson"
