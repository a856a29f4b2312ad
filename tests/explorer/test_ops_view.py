"""The Ops view: time and share stay in sight at 160x50 (they come right after the op's name), figures per op are
labelled so, and a caption says which decode step is shown (the TUI's mean context; `roofline report`'s first)."""

from __future__ import annotations

import pytest

from roofline.models.estimate import time_op
from roofline.presets import load_catalog
from roofline.tui.app import RooflineApp
from roofline.tui.explorer.ops_table import OPS_HEADER, OpsTable, ops_caption, ops_rows
from roofline.tui.inputs.form import ScenarioForm, build_scenario
from roofline.tui.views.results import compute_results

CATALOG = load_catalog(user_dir=None)
DEEPSEEK = dict(model_ref="deepseek-v3", hardware_id="h200", tp=8, weights="fp8")  # the longest op names


def _app(**form) -> RooflineApp:
    return RooflineApp(ScenarioForm(**form), catalog=CATALOG)


def test_time_is_the_total_over_n_and_shares_add_up_per_phase():
    r = compute_results(build_scenario(ScenarioForm(**DEEPSEEK), CATALOG))
    rows, keys, ops = ops_rows(r, r.spec)
    col = {name: i for i, name in enumerate(OPS_HEADER)}
    assert OPS_HEADER[:4] == ("phase", "op", "time x n", "share")
    assert len(rows) == len(keys) == len(ops) == len(r.prefill_ops) + len(r.decode_ops)
    for phase in ("prefill", "decode"):
        shares = [float(row[col["share"]].rstrip("%")) for row in rows if row[0] == phase]
        assert sum(shares) == pytest.approx(100, abs=0.05 * len(shares))  # each rounded to 0.1 %
    qkv = next(i for i, op in enumerate(ops) if op.phase == "decode" and op.count > 1)
    op = ops[qkv]
    # one occurrence's time x the op's count (per pass) is what the time column shows
    from roofline.tui.views.formatting import duration

    assert rows[qkv][col["time x n"]] == duration(op.count * float(time_op(op, r.spec).time_s))
    assert rows[qkv][col["n"]] == str(op.count)


def test_caption_names_the_decode_context_and_reports_first_step():
    # Llama 3.1 8B, 1024 in / 256 out: decode steps at contexts 1,025 .. 1,279, mean 1024 + 256/2 = 1,152
    r = compute_results(build_scenario(ScenarioForm(), CATALOG))
    caption = ops_caption(r)
    assert "decode ops at context 1,152 (the mean;" in caption and "first step, 1,025" in caption
    shown = compute_results(build_scenario(ScenarioForm(), CATALOG), shown_context=4096)
    assert "context 4,096 (as set;" in ops_caption(shown)


async def test_time_and_share_are_in_sight_at_160x50():
    app = _app(**DEEPSEEK)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("5")
        await pilot.pause()
        table = app.query_one("#ops-table", OpsTable)
        header = "".join(seg.text for seg in table.render_line(0))
        assert "time x n" in header and "share" in header
        share_end = table._lines[0].index("share") + len("share")
        assert share_end <= table.scrollable_content_region.width
        caption = str(app.query_one("#ops-caption").render())
        assert "decode ops at context" in caption and "roofline report" in caption


def test_ops_view_snapshot_deepseek_160x50(snap_compare):
    assert snap_compare(_app(**DEEPSEEK), terminal_size=(160, 50), press=["5"])
