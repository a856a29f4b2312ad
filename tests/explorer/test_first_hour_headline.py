"""Issue 30 items 5, 6 and 9: the headline says which number is the ceiling and which the expectation, both in big
digits; over capacity TTFT reads as unbounded, not 0; in serving mode idle cores and MBU sit beside ITL."""

from __future__ import annotations

from roofline.presets import load_catalog
from roofline.tui.app import RooflineApp
from roofline.tui.explorer.headline import Headline, _short
from roofline.tui.inputs.form import ScenarioForm

CATALOG = load_catalog()


def _readings(app: RooflineApp) -> dict:
    return app.query_one(Headline).readings


def _screen_text(app: RooflineApp) -> str:
    headline = app.query_one(Headline)
    return "\n".join(headline.render_line(y).text for y in range(headline.size.height))


async def test_expected_is_as_big_as_bound_and_each_is_named():
    """DeepSeek-V3 fp8 on 8 x H200 (the issue's case: bound 853, expected 134.3 tok/s/seq): both per-sequence
    speeds are in large digits, in columns whose labels say 'ceiling' (bound) and 'expected'."""
    app = RooflineApp(ScenarioForm(model_ref="deepseek-v3", hardware_id="h200", tp=8, weights="fp8"), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        r = app.explorer.results
        bound, expected = r.bound.decode.tokens_per_s_per_seq, r.expected.decode.tokens_per_s_per_seq
        assert bound > 2 * expected  # the case the issue saw
        by_label = {reading.label: reading for reading in _readings(app).values()}
        named_bound = [x for label, x in by_label.items() if "ceiling" in label and "tok/s/seq" in label]
        named_expected = [x for label, x in by_label.items() if "expected" in label and "tok/s/seq" in label]
        assert [x.digits for x in named_bound] == [_short(bound)]
        assert [x.digits for x in named_expected] == [_short(expected)]
        await pilot.press("a")  # the achievable ceilings: the columns swap which comes first, both still shown
        await pilot.pause()
        labels = [reading.label for reading in _readings(app).values()]
        assert labels[0].startswith("expected") and any(label.startswith("ceiling") for label in labels)


async def test_over_capacity_ttft_reads_unbounded_not_zero():
    """20 requests/s of Llama 3.1 70B (2k prompt, 300 output) on one TP4 H100 replica, Poisson arrivals, is past
    what the replica carries: TTFT is infinite, and the headline says the queue grows without bound."""
    form = ScenarioForm(model_ref="llama-3.1-70b", hardware_id="h100-sxm", tp=4, prompt_tokens=2048,
                        output_tokens=300, serving=True, rate_per_s=20.0, arrivals="poisson")
    app = RooflineApp(form, catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        await pilot.pause()
        point = app.explorer.serving.point
        assert point.ttft_s == float("inf")
        ttft = _readings(app)["m-ttft"]
        assert ttft.digits != "0" and "unbounded" in ttft.text and "queue grows" in ttft.text
        assert "unbounded" in _screen_text(app)
        app.explorer.query_one("#headline").compact = True
        await pilot.pause()
        assert "unbounded" in _screen_text(app)


async def test_serving_mode_shows_idle_cores_and_mbu_beside_itl():
    """The operating point's mean mixed step: idle cores % in digits, MBU in its label, the column after ITL."""
    app = RooflineApp(ScenarioForm(serving=True), catalog=CATALOG)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        await pilot.pause()
        p = app.explorer.serving.point
        readings = _readings(app)
        keys = list(readings)
        assert keys[keys.index("m-idle") + 1] == "m-util"
        util = readings["m-util"]
        assert util.digits == _short(p.idle_core_pct)
        assert "idle" in util.label and f"MBU {p.mbu_pct:.0f}%" in util.label
        assert util.text == f"{p.idle_core_pct:.1f} MBU {p.mbu_pct:.0f}%"
