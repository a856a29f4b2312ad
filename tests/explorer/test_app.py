"""Pilot tests: drive the explorer's panes and views and check the model state and the widgets."""

from __future__ import annotations

import pytest
from textual.widgets import Checkbox, DataTable, Input, Select, Static

from roofline.presets import load_catalog
from roofline.tui.app import RooflineApp
from roofline.tui.explorer.charts import BatchSweepChart, RooflineChart
from roofline.tui.explorer.headline import Headline
from roofline.tui.explorer.ops_table import OpsTable
from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.perf import switch

CATALOG = load_catalog()


def _app(**form) -> RooflineApp:
    return RooflineApp(ScenarioForm(**form), catalog=CATALOG)


def _digits(app: RooflineApp, metric_id: str) -> str:
    return app.query_one(Headline).readings[metric_id].digits


async def test_opens_on_the_default_story():
    """H100 SXM + Llama-3.1-8B bf16, batch 1, 1024 in / 256 out: memory-bound, ~99.7 % idle."""
    app = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        r = app.explorer.results
        assert r is not None and r.scenario.hardware.id == "h100-sxm" and r.scenario.model.id == "llama-3.1-8b"
        assert _digits(app, "m-idle") == "99.7"
        assert _digits(app, "m-per-seq") == f"{r.bound.decode.tokens_per_s_per_seq:.0f}"
        verdict = str(app.query_one("#verdict").render())
        assert "memory-bound" in verdict and "ridge 295" in verdict


async def test_plus_and_minus_double_and_halve_the_batch():
    app = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("plus", "plus", "plus")
        assert app.explorer.form.batch == 8
        assert app.query_one("#batch", Input).value == "8"
        assert app.explorer.results.scenario.batching.batch_size == 8
        await pilot.press("minus")
        assert app.explorer.form.batch == 4
        await pilot.press("right_square_bracket")
        assert app.explorer.form.prompt_tokens == 2048


async def test_typing_a_batch_recomputes_and_bad_input_keeps_the_last_good_scenario():
    app = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        batch = app.query_one("#batch", Input)
        batch.focus()
        batch.value = ""
        await pilot.press("6", "4")
        await pilot.pause()
        assert app.explorer.results.scenario.batching.batch_size == 64
        per_seq_64 = app.explorer.results.bound.decode.tokens_per_s_per_seq
        batch.value = "0"
        await pilot.pause()
        assert batch.has_class("-invalid")
        assert "batch" in str(app.query_one("#status", Static).render())
        assert app.explorer.results.scenario.batching.batch_size == 64  # the last good scenario stays
        assert app.explorer.results.bound.decode.tokens_per_s_per_seq == per_seq_64


async def test_tp_that_does_not_divide_heads_is_marked_invalid():
    app = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        tp = app.query_one("#tp", Input)
        tp.value = "3"
        await pilot.pause()
        assert tp.has_class("-invalid")
        assert "does not divide" in str(app.query_one("#status", Static).render())
        assert app.explorer.results.scenario.parallelism.tp == 1


async def test_hardware_select_and_palette_pick_presets():
    app = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        app.query_one("#hardware_id", Select).value = "h200"
        await pilot.pause()
        assert app.explorer.results.scenario.hardware.id == "h200"
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"model: mixtral 8x7b")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert app.explorer.results.scenario.model.id == "mixtral-8x7b"
        assert app.query_one("#model_ref", Select).value == "mixtral-8x7b"
        assert "8 experts" in str(app.query_one("#model-summary", Static).render())


async def test_precision_and_flash_attention_controls():
    app = _app(prompt_tokens=4096)
    async with app.run_test(size=(120, 40)) as pilot:
        app.query_one("#weights", Select).value = "int4"
        await pilot.pause()
        assert app.explorer.results.scenario.precisions.weights == "int4"
        assert app.explorer.results.scenario.precisions.compute_dtype == "bf16"
        ttft_fused = app.explorer.results.bound.ttft_s
        app.query_one("#flash_attention", Checkbox).value = False
        await pilot.pause()
        assert not app.explorer.results.scenario.batching.flash_attention
        assert app.explorer.results.bound.ttft_s > ttft_fused


async def test_a_short_ops_table_keeps_the_cursor_row_in_view_when_the_formula_grows():
    """At 80x24 the formula below the table takes more rows for some ops: the table shrinks and must scroll."""
    app = _app(model_ref="deepseek-v3", hardware_id="h200", tp=8, weights="fp8")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("5")
        await pilot.pause()
        table = app.query_one("#ops-table", OpsTable)
        table.focus()
        for _ in range(table.row_count):
            await pilot.press("down")
            await pilot.pause()
            top = int(table.scroll_y)
            assert top <= table.cursor_row < top + table.size.height - 1, (table.cursor_row, top, table.size)
            formula = str(app.query_one("#op-formula").render())
            assert formula.startswith(table.keys[table.cursor_row].replace("/", " / "))


async def test_views_switch_by_number_and_draw():
    app = _app(batch=16)
    async with app.run_test(size=(120, 40)) as pilot:
        for key, view in zip("123456", ("roofline", "batch", "context", "memory", "ops", "compare"), strict=True):
            await pilot.press(key)
            await pilot.pause()
            assert app.query_one("#views").active == view
        ops = app.query_one("#ops-table", OpsTable)
        await pilot.press("5")
        await pilot.pause()
        assert ops.row_count == len(app.explorer.results.prefill_ops) + len(app.explorer.results.decode_ops)
        compare = app.query_one("#compare-table", DataTable)
        assert compare.row_count >= 6
        assert str(compare.get_row_at(0)[0]).startswith("> NVIDIA H100")


async def test_selecting_an_op_shows_its_formula():
    app = _app(batch=8)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("5")
        await pilot.pause()
        table = app.query_one("#ops-table", OpsTable)
        assert str(app.query_one("#op-formula").render()).startswith("prefill / embedding")  # the cursor's
        table.focus()
        names = [op.name for op in app.explorer.results.prefill_ops]
        table.move_cursor(row=names.index("qkv_proj"))
        await pilot.pause()
        text = str(app.query_one("#op-formula").render())
        assert "FLOPs = 2 x T x K x N = 2 x 8,192 x 4,096 x 6,144" in text
        # a batch change keeps the cursor on the op and the formula's numbers follow
        await pilot.press("plus")
        await pilot.pause()
        assert table.keys[table.cursor_row] == "prefill/qkv_proj"
        text = str(app.query_one("#op-formula").render())
        assert "FLOPs = 2 x T x K x N = 2 x 16,384 x 4,096 x 6,144" in text
        # keys move the cursor, and every row of the model is listed once
        await pilot.press("down")
        assert table.cursor_row == names.index("qkv_proj") + 1
        await pilot.press("end")
        assert table.cursor_row == table.row_count - 1 == len(set(table.keys)) - 1
        await pilot.press("home")
        assert table.cursor_row == 0


async def test_batch_sweep_and_roofline_charts_have_plots():
    app = _app(batch=4)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        roofline = app.query_one(RooflineChart)
        assert "ridge 295 FLOP/B" in roofline.plt.build()
        await pilot.press("2")
        await pilot.pause()
        assert "memory limit" in app.query_one(BatchSweepChart).plt.build()


async def test_pin_baseline_shows_the_change():
    app = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("p")
        await pilot.press("plus", "plus", "plus", "plus", "plus", "plus")
        await pilot.pause()
        delta = app.query_one(Headline).readings["m-aggregate"].delta
        assert delta.startswith("x") and delta.endswith(" vs base")  # batch 64 vs 1: a ratio, not +6000%
        assert app.explorer.baseline is not None and app.explorer.baseline.scenario.batching.batch_size == 1


async def test_achievable_toggle_switches_estimate():
    app = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        spec = _digits(app, "m-per-seq")
        await pilot.press("a")
        await pilot.pause()
        assert app.explorer.achievable
        assert _digits(app, "m-per-seq") != spec
        assert "achievable" in str(app.query_one("#verdict").render())


async def test_save_and_load_a_scenario(tmp_path, monkeypatch):
    """Saving writes TOML, never overwrites without asking; loading restores the form."""
    monkeypatch.chdir(tmp_path)
    app = _app(batch=32, hardware_id="mi300x")
    async with app.run_test(size=(120, 40)) as pilot:
        app.explorer.action_save_scenario()
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        saved = tmp_path / "scenario.toml"
        assert saved.exists() and 'hardware = "mi300x"' in saved.read_text()
        saved.write_text(saved.read_text().replace("batch = 32", "batch = 2"))
        app.explorer.action_save_scenario()
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("n")  # refuse to overwrite
        await pilot.pause()
        assert "batch = 2" in saved.read_text()
        assert app.explorer.load_scenario_file(saved)
        await pilot.pause()
        assert app.explorer.form.batch == 2 and app.explorer.results.scenario.batching.batch_size == 2
        assert app.query_one("#batch", Input).value == "2"


async def test_a_broken_scenario_file_is_reported_not_raised(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[scenario]\nbatch = -4\n")
    app = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        assert not app.explorer.load_scenario_file(bad)
        await pilot.pause()
        assert app.explorer.form.batch == 1


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_small_and_large_terminals(size):
    app = _app()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        assert app.screen.has_class("-narrow") == (size[0] < 100)
        await pilot.press("plus")
        assert app.explorer.results.scenario.batching.batch_size == 2


async def test_help_screen_opens_and_closes():
    app = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert type(app.screen).__name__ == "HelpScreen"
        await pilot.press("escape")
        await pilot.pause()
        assert type(app.screen).__name__ != "HelpScreen"


async def test_compare_add_and_remove():
    app = _app(hardware_id="gh200")
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("6")
        await pilot.pause()
        table = app.query_one("#compare-table", DataTable)
        before = table.row_count
        app.explorer.action_compare_add()
        await pilot.pause()
        assert "gh200" in app.explorer.compare_ids
        table.focus()
        table.move_cursor(row=1)
        removed = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        await pilot.press("x")
        await pilot.pause()
        assert removed not in app.explorer.compare_ids
        assert table.row_count == before - 1


async def test_broken_user_presets_are_listed_in_a_notification(tmp_path):
    """A broken user file is skipped; the explorer starts and says which file and why."""
    (tmp_path / "hardware").mkdir()
    (tmp_path / "hardware" / "bad.toml").write_text('name = "x"\nyear = "soon"\n')
    catalog = load_catalog(user_dir=tmp_path)
    app = RooflineApp(ScenarioForm(), catalog=catalog)
    seen: list[str] = []
    app.notify = lambda message, **kwargs: seen.append(str(message))  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.explorer.results is not None
    assert any("bad.toml" in m and "skipped 1 preset" in m for m in seen)


async def test_ops_table_scrolls_sideways_and_keeps_its_header():
    app = _app(batch=8)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("5")
        await pilot.pause()
        table = app.query_one("#ops-table", OpsTable)
        table.focus()
        assert table.virtual_size.width > table.size.width  # the share column is off screen at 100 columns
        await pilot.press("right", "right")
        await pilot.pause()
        assert table.scroll_x == 16
        header = "".join(seg.text for seg in table.render_line(0))
        assert header.startswith(table._lines[0][16:26])
        await pilot.press("pagedown", "pagedown", "pagedown")
        await pilot.pause()
        assert table.cursor_row >= table.size.height  # the cursor left the first screen, the rows followed it
        assert table.scroll_y > 0 and "".join(s.text for s in table.render_line(0)).strip()  # header stays


@pytest.mark.skipif(not switch.textual_speedups() or not switch.plotext_speedups(),
                    reason="tests a speed-up path (tui/perf/); ROOFLINE_SPEEDUPS=0 runs the public one")
async def test_opening_and_closing_dialogs_does_not_pile_up_footer_keys():
    """Textual 8's Footer kept every rebuilt key alive through its watcher list (LeanFooter prunes it)."""
    from roofline.tui.perf.footer import LeanFooter

    app = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        footer = app.query_one(LeanFooter)
        for _ in range(6):
            await pilot.press("g")
            await pilot.pause()
            await pilot.press("escape")
            await pilot.pause()
        await pilot.pause(0.1)
        watchers = getattr(footer, "__watchers", {}).get("compact", [])
        keys = list(footer.query("FooterKey"))
        assert len(watchers) <= len(keys) + 1, f"{len(watchers)} watchers for {len(keys)} keys"


async def test_the_headline_takes_the_new_theme_colours():
    """The headline keeps its styles between paints; a theme change must still reach them."""
    app = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        headline = app.query_one(Headline)
        before = headline.render_line(0)
        app.theme = "textual-light"
        await pilot.pause()
        after = headline.render_line(0)
        assert before.text == after.text
        assert [seg.style for seg in before] != [seg.style for seg in after]
        label = headline.get_component_rich_style("headline--label")
        assert any(seg.style == label for seg in after)


async def test_the_memory_bar_turns_to_the_error_colour_when_it_stops_fitting():
    app = _app(model_ref="llama-3.1-70b", tp=2, batch=1)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        bar = app.query_one("#memory-bar")
        assert app.explorer.results.memory.fits and "fits" in str(bar.render())
        fitting = bar.render_line(0)
        app.explorer.set_field("batch", 1 << 14)
        await pilot.pause()
        assert not app.explorer.results.memory.fits and "DOES NOT FIT" in str(bar.render())
        overflowing = bar.render_line(0)
        assert bar.has_class("-overflow")
        assert {seg.style.color for seg in overflowing if seg.text.strip()} != \
            {seg.style.color for seg in fitting if seg.text.strip()}


async def test_verdict_and_memory_bar_grow_and_shrink_with_their_wrapped_lines():
    """At 184 columns the spec verdict fits one line and the achievable one takes two: only the verdict's own
    layout request can make room for the second line (nothing else changes size)."""
    app = _app()
    async with app.run_test(size=(184, 40)) as pilot:
        await pilot.pause()
        heights = []
        for keys in ("a", "a", "plus plus plus plus plus plus plus plus plus", "p", "minus"):
            await pilot.press(*keys.split())
            await pilot.pause()
            for selector in ("#verdict", "#memory-bar"):
                widget = app.query_one(selector)
                wrapped = widget._wrap(widget.content_size.width)  # kept from the change, not wrapped again
                fresh = widget._text.wrap(app.console, widget.content_size.width)
                assert [line.plain for line in wrapped] == [line.plain for line in fresh], (keys, selector)
                assert widget.size.height == len(wrapped), (keys, selector)
                assert [line.plain.rstrip() for line in wrapped] == \
                    [widget.render_line(y).text.rstrip() for y in range(widget.size.height)]
            heights.append(app.query_one("#verdict").size.height)
        assert heights[:2] == [2, 1]


async def test_headline_and_verdict_follow_an_ancestors_new_background():
    """An ancestor's style change reaches these widgets as a repaint only; their cached lines must follow it."""
    app = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        headline, verdict = app.query_one(Headline), app.query_one("#verdict")
        before = (headline.render_line(0), verdict.render_line(0))
        app.query_one("#results").styles.background = "darkred"
        await pilot.pause()
        after = (headline.render_line(0), verdict.render_line(0))
        for old, new in zip(before, after, strict=True):
            assert old.text == new.text
            assert {seg.style.bgcolor for seg in old} != {seg.style.bgcolor for seg in new}


def test_intensities_read_at_any_size():
    from roofline.tui.views.formatting import flop_per_byte

    assert [flop_per_byte(v) for v in (295.2, 1979.3, 29.53, 1.02, 0.8956, 0.04561)] == \
        ["295", "1,979", "29.5", "1.02", "0.896", "0.0456"]


async def test_a_tiny_peak_shows_its_ridge_not_zero():
    """3 TFLOP/s against 3.35 TB/s: the ridge is 0.896 FLOP/B, and decode at 1 FLOP/B is compute-bound."""
    app = _app(peak_override_tflops=3.0)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        verdict = app.query_one("#verdict").render().plain
        assert "vs ridge 0.896)" in verdict and "compute-bound" in verdict
        assert "ridge 0.896 FLOP/B" in str(app.query_one("#hardware-figures", Static).render())
        assert "ridge 0.896 FLOP/B" in app.query_one(RooflineChart).render().plain


async def test_the_headline_refreshes_once_for_all_four_numbers(monkeypatch):
    app = _app(batch=4)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        headline = app.query_one(Headline)
        calls = []
        original = headline.refresh
        monkeypatch.setattr(headline, "refresh", lambda *a, **k: (calls.append(k), original(*a, **k))[1])
        await pilot.press("plus")
        await pilot.pause()
        assert len(calls) == 1 and _digits(app, "m-aggregate") != "-"
        assert headline.readings["m-per-seq"].text == f"{app.explorer.results.bound.decode.tokens_per_s_per_seq:,.1f}"


def test_relative_change_reads_as_a_percentage_then_as_a_ratio():
    from roofline.tui.views.formatting import relative_change

    assert relative_change(150.0, 100.0) == "+50%"
    assert relative_change(50.0, 100.0) == "-50%"
    assert relative_change(299.0, 100.0) == "+199%"
    assert relative_change(300.0, 100.0) == "x3.0"  # past +200 %: x3, not +200%
    assert relative_change(7081.0, 100.0) == "x71"  # not +6981%
    assert relative_change(1.0, None) == "" and relative_change(1.0, 0.0) == ""


async def test_p_on_the_pinned_scenario_unpins_it():
    app = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("p")
        await pilot.pause()
        assert app.explorer.baseline is not None
        await pilot.press("p")
        await pilot.pause()
        assert app.explorer.baseline is None
