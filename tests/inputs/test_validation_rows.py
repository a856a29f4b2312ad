"""The validation CSV's scenarios are built through the input registry (``roofline validate``), and the presets
layer's own builder (used where tui/ is not imported) gives the same scenario for every bundled row."""

from __future__ import annotations

from pathlib import Path

import pytest

from roofline.presets import load_hardware, resolve_model
from roofline.presets.measurements import read_measurements
from roofline.tui.inputs.file_values import scenario_from_values
from roofline.tui.inputs.form import FormError
from roofline.tui.inputs.limits import check_number

DATA = Path(__file__).resolve().parents[1] / "data"
CSVS = ("measured-dev-validation.csv", "measured-heldout.csv", "measured-serving.csv")


@pytest.mark.parametrize("name", CSVS)
def test_the_registry_builds_every_row_as_the_presets_builder_does(name):
    plain, plain_skipped = read_measurements(DATA / name, check=check_number)
    through_registry, skipped = read_measurements(DATA / name, check=check_number, build=scenario_from_values)
    assert len(through_registry) == len(plain) > 0
    assert [r.scenario for r in through_registry] == [r.scenario for r in plain]
    assert skipped == plain_skipped


def test_a_row_value_the_model_refuses_names_the_input():
    """tp 3 does not divide Llama 3.1 8B's 32 heads: the registry's builder says which input, as the CLI does."""
    with pytest.raises(FormError) as err:
        scenario_from_values({"tp": 3}, load_hardware("h100-sxm"), resolve_model("llama-3.1-8b"))
    assert err.value.field == "tp"


def test_a_value_that_is_no_input_is_refused():
    with pytest.raises(FormError, match="not a scenario input"):
        scenario_from_values({"batch_size": 4}, load_hardware("h100-sxm"), resolve_model("llama-3.1-8b"))


def test_a_validate_row_skips_with_the_models_reason(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("id,hardware,tp,pp,model,weights,kv,batch,prompt,output,metric,value\n"
                    "x-1,h100-sxm,3,1,llama-3.1-8b,bf16,bf16,1,128,128,decode_tokens_per_s_per_seq,100\n",
                    encoding="utf-8")
    rows, skipped = read_measurements(path, check=check_number, build=scenario_from_values)
    assert rows == [] and len(skipped) == 1 and skipped[0].reason.startswith("tp: ")
