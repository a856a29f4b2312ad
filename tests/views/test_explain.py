"""Every op the explorer lists can be explained (the ops view shows the formula of the row under the cursor), and a
collective's formula, evaluated with the dims it substitutes, gives the bytes the model charges for it."""

from __future__ import annotations

import math

import pytest

from roofline.models.estimate import ceilings
from roofline.presets import load_catalog
from roofline.tui.inputs.form import ScenarioForm, build_scenario
from roofline.tui.views.explain import explain_op
from roofline.tui.views.formatting import si
from roofline.tui.views.results import compute_results

CATALOG = load_catalog()
FORMS = {
    "one device": ScenarioForm(),
    "tp 4": ScenarioForm(model_ref="llama-3.1-70b", tp=4, batch=16),
    "tp 2, pp 2": ScenarioForm(model_ref="llama-3.1-70b", tp=2, pp=2, batch=8),
    "MoE, tp 2": ScenarioForm(model_ref="mixtral-8x7b", tp=2),
    "MLA + MoE, tp 8": ScenarioForm(model_ref="deepseek-v3", hardware_id="h200", tp=8, weights="fp8"),
}


def _sent_bytes(dims: dict[str, float]) -> float:
    """What a collective sends, from its dims, by the formula the explanation states."""
    if {"tp", "T", "H"} <= dims.keys():
        return 2 * (dims["tp"] - 1) / dims["tp"] * dims["T"] * dims["H"] * dims["b_a"]
    if {"tp", "B", "V"} <= dims.keys():
        return (dims["tp"] - 1) / dims["tp"] * dims["B"] * dims["V"] * dims["b_a"]
    return dims["T"] * dims["H"] * dims["b_a"]


def _evaluate(substituted: str) -> float:
    """'2 x 3/4 x 16 x 8,192 x 2 B' -> 2 * 3/4 * 16 * 8192 * 2 (digits, '.', ',', ' x ', '/' and '( + )' only)."""
    expression = substituted.removesuffix(" B").replace(",", "").replace(" x ", " * ")
    assert set(expression) <= set("0123456789. */()+"), substituted
    return float(eval(expression))  # noqa: S307 - checked above: numbers and arithmetic only


@pytest.mark.parametrize("name", FORMS)
def test_every_listed_op_is_explained_and_collectives_add_up(name):
    r = compute_results(build_scenario(FORMS[name], CATALOG))
    c = ceilings(r.scenario.hardware, r.scenario.precisions.compute_dtype, "bound")
    collectives = 0
    pp = r.scenario.parallelism.pp
    for op in (*r.prefill_ops, *r.decode_ops):
        text = explain_op(op, c, pp)
        stages = f" across {pp} pipeline stages" if pp > 1 else ""
        assert text.splitlines()[0] == f"{op.phase} / {op.name}  ({op.kind}, x{op.count} per pass{stages}; " \
            "figures per device)"
        assert "time = " in text
        if op.kind == "collective":
            collectives += 1
            dims = {k: float(v) for k, v in op.dims}
            assert math.isclose(_sent_bytes(dims), float(op.comm_bytes), rel_tol=1e-12), op.name
            sent = text.split("\n")[1]
            assert sent.startswith("sent = ") and sent.endswith(f"= {si(float(op.comm_bytes), 'B')}"), text
            # the numbers the line substitutes, multiplied out as it states them, are the bytes the model charges
            assert math.isclose(_evaluate(sent.split(" = ")[2]), float(op.comm_bytes), rel_tol=1e-3), sent
    tp = r.scenario.parallelism.tp
    assert (collectives > 0) == (tp > 1 or pp > 1)
    if pp > 1:
        assert any(op.name == "pipeline send" for op in r.decode_ops)
    if tp > 1:
        assert any(op.name == "all-gather (logits)" for op in r.decode_ops)
