"""``roofline present [DECK] [--export markdown]``: the talk, live, or a handout of it."""

from __future__ import annotations

from argparse import Namespace
from pathlib import Path

from roofline.presets import load_catalog
from roofline.presets.deck_file import Deck, builtin_deck_path, read_deck
from roofline.presets.loader import PresetFileError
from roofline.tui.talk.deck import BuiltSlide, DeckError, check_deck, slide_view_text
from roofline.tui.views.slide_numbers import slide_number

HANDOUT_CHART_SIZE = (100, 24)


def load_deck(path_text: str | None) -> Deck:
    path = Path(path_text).expanduser() if path_text else builtin_deck_path()
    try:
        return read_deck(path)
    except PresetFileError as err:
        raise ValueError(str(err)) from None


def chart_text(built: BuiltSlide, catalog) -> str:
    """The slide's chart as plain text (plotext, no colour), or '' for views without a chart."""
    from roofline.tui.explorer.charts import (
        BatchSweepChart,
        ContextSweepChart,
        HistoryGrowthChart,
        MemoryChart,
        RooflineChart,
    )
    from roofline.tui.views.chart_data import CHART_VIEWS, chart_args, history_for

    view = built.slide.view
    types = {"roofline": RooflineChart, "batch": BatchSweepChart, "context": ContextSweepChart,
             "memory": MemoryChart, "history": HistoryGrowthChart}
    if view not in types:
        return ""
    chart = types[view]()
    if view in CHART_VIEWS:
        args = chart_args(view, built.results)
    else:
        data = history_for(catalog, built.results)
        if data is None:
            return ""
        args = (data,)
    chart.plt.clear_figure()
    chart.draw(*args)
    chart.plt.plotsize(*HANDOUT_CHART_SIZE)
    chart.plt.theme("clear")
    return chart.plt.uncolorize(chart.plt.build())


def handout_markdown(deck: Deck, slides: list[BuiltSlide], catalog) -> str:
    out = [f"# {deck.title}", "", "Every number below was computed by roofline explorer's model for the slide's "
           "scenario (bound estimate: spec-sheet ceilings).", ""]
    for built in slides:
        slide = built.slide
        s = built.results.scenario
        out += [f"## {slide.index}. {slide.title}", ""]
        out += [line for line in slide.lines] + [""]
        out.append(f"Scenario: {s.model.name} on {s.parallelism.devices} x {s.hardware.name}, weights "
                   f"{s.precisions.weights}, KV {s.precisions.kv}, batch {s.batching.batch_size}, prompt "
                   f"{s.batching.prompt_tokens}, output {s.batching.output_tokens}.")
        out.append("")
        for name in slide.numbers:
            label, value = slide_number(name, built.results, catalog)
            out.append(f"- **{label}**: {value}")
        text = chart_text(built, catalog)
        extra = slide_view_text(built, catalog)
        if text or extra:
            out += ["", "```", *(text.rstrip("\n").splitlines() if text else []), *extra, "```"]
        if slide.notes:
            out += ["", f"> Notes: {slide.notes}"]
        out.append("")
    return "\n".join(out)


def run_present(args: Namespace) -> int:
    deck = load_deck(args.deck)
    catalog = load_catalog()
    try:
        slides = check_deck(deck, catalog)
    except DeckError as err:
        raise ValueError(f"{deck.path}: {err}") from None
    if args.export == "markdown":
        print(handout_markdown(deck, slides, catalog))
        return 0
    from roofline.tui.app import RooflineApp

    RooflineApp(slides[0].form, catalog=catalog, deck=deck).run()
    return 0
