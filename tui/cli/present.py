"""``roofline present [DECK] [--presenter] [--export markdown | svg DIR | html FILE]``: the talk, live, the
presenter's screen for a second terminal, or the talk exported (a handout, SVGs, one HTML page)."""

from __future__ import annotations

import re
import sys
from argparse import Namespace
from pathlib import Path

from roofline.presets import load_catalog
from roofline.presets.deck_file import Deck, builtin_deck_path, read_deck
from roofline.presets.loader import PresetFileError
from roofline.presets.safe_files import user_path
from roofline.tui.cli.terminal_text import has_terminal, without_controls
from roofline.tui.inputs.registry import FILE_KEY_TYPES
from roofline.tui.talk.deck import BuiltSlide, DeckError, check_deck, slide_numbers, slide_state, slide_view_text
from roofline.tui.views.plot_layout import HANDOUT_CHART_SIZE

_SIZE = re.compile(r"^(\d{2,3})x(\d{2,3})$")


def load_deck(path_text: str | None) -> Deck:
    try:
        path = user_path(path_text, what="deck") if path_text else builtin_deck_path()
        return read_deck(path, keys=FILE_KEY_TYPES)
    except PresetFileError as err:
        raise ValueError(str(err)) from None


def deck_identity(deck: Deck) -> str:
    """How the two screens tell that they show the same deck: its resolved path."""
    return str(Path(deck.path).resolve())


def chart_text(built: BuiltSlide, catalog) -> str:
    """The slide's chart as plain text (plotext, no colour), or '' for views without a chart (the view registry
    says which views the handout draws)."""
    from roofline.tui.views.registry import BY_ID

    view = BY_ID.get(built.slide.view)
    if view is None or view.plot is None or not view.in_handout:
        return ""
    args = view.data(slide_state(built, catalog))
    if args is None:
        return ""
    import plotext  # a one-off page: plotext's own figure, cleared first

    plotext.clear_figure()
    view.plot(plotext, HANDOUT_CHART_SIZE, *args)
    plotext.plotsize(*HANDOUT_CHART_SIZE)
    plotext.theme("clear")
    return plotext.uncolorize(plotext.build())


def handout_markdown(deck: Deck, slides: list[BuiltSlide], catalog) -> str:
    out = [f"# {deck.title}", "", "Every number below was computed by roofline explorer's model for the slide's "
           "scenario (bound estimate: spec-sheet ceilings, unless a label says expected).", ""]
    for built in slides:
        slide = built.slide
        s = built.results.scenario
        out += [f"## {slide.index}. {slide.title}", ""]
        out += [line for line in slide.lines] + [""]
        out.append(f"Scenario: {s.model.name} on {s.parallelism.devices} x {s.hardware.name}, weights "
                   f"{s.precisions.weights}, KV {s.precisions.kv}, batch {s.batching.batch_size}, prompt "
                   f"{s.batching.prompt_tokens}, output {s.batching.output_tokens}.")
        out.append("")
        for label, value in slide_numbers(built, catalog):
            out.append(f"- **{label}**: {value}")
        text = chart_text(built, catalog)
        extra = slide_view_text(built, catalog)
        if text or extra:
            out += ["", "```", *(text.rstrip("\n").splitlines() if text else []), *extra, "```"]
        if slide.notes:
            out += ["", f"> Notes: {slide.notes}"]
        out.append("")
    return "\n".join(out)


def parse_size(text: str) -> tuple[int, int]:
    match = _SIZE.match(text.strip())
    if not match or int(match.group(1)) < 80 or int(match.group(2)) < 24:
        raise ValueError(f"--size: expected COLSxROWS, at least 80x24 (e.g. 120x36), got {text!r}")
    return int(match.group(1)), int(match.group(2))


def _export(args: Namespace, deck: Deck, slides: list[BuiltSlide], catalog) -> int:
    fmt, *rest = args.export
    if fmt == "markdown" and not rest:
        print(without_controls(handout_markdown(deck, slides, catalog)))  # deck text is the user's
        return 0
    if fmt not in ("svg", "html") or len(rest) != 1:
        raise ValueError("--export: expected 'markdown', 'svg DIR' or 'html FILE'")
    from roofline.presets.safe_files import check_save_target, prepare_folder
    from roofline.tui.talk.export import export_html, export_svgs

    size = parse_size(args.size)
    target = Path(rest[0]).expanduser()
    # the target is checked before any slide is drawn: a file in the way, /proc, a 300-character name, /dev/full
    # are one line at once, and nothing is written
    if fmt == "svg":
        prepare_folder(target)
    else:
        check_save_target(target)
    if fmt == "svg":
        paths = export_svgs(deck, catalog, target, size)
        print(f"{len(paths)} SVG files ({size[0]}x{size[1]} cells) in {target}")
    else:
        export_html(deck, slides, catalog, target, size)
        print(f"{target}: {len(slides)} slides ({size[0]}x{size[1]} cells), notes included")
    return 0


def run_present(args: Namespace) -> int:
    deck_text = args.deck
    link_first = not args.export and args.presenter and not deck_text  # the deck is the running talk's
    if link_first:
        _need_terminal()
        folder, chosen, link_problem = _find_link(args)
        if chosen is not None:
            from roofline.tui.talk.sync import read_state

            running = read_state(chosen)
            deck_text = running.deck if running is not None and running.deck else None
    deck = load_deck(deck_text)  # a bad deck is reported before anything else
    catalog = load_catalog()
    try:
        slides = check_deck(deck, catalog)
    except DeckError as err:
        raise ValueError(f"{deck.path}: {err}") from None
    if args.export:
        return _export(args, deck, slides, catalog)
    if not link_first:
        _need_terminal()
        folder, chosen, link_problem = _find_link(args)
    from roofline.tui.talk.sync import TalkLink, talk_state_path

    link = None
    if folder is not None:
        link = TalkLink(chosen or talk_state_path(folder), deck_identity(deck))
    else:  # the talk works alone; the footer says "alone (no link)"
        print(f"roofline present: warning: {link_problem}; the screens are not linked", file=sys.stderr)
    if args.presenter:
        from roofline.tui.talk.presenter import PresenterApp

        PresenterApp(deck, link=link).run()
        return 0
    from roofline.tui.app import RooflineApp

    RooflineApp(slides[0].form, catalog=catalog, deck=deck, talk_link=link).run()
    return 0


def _need_terminal() -> None:
    """Nothing to draw on: one line now, not escape codes until killed."""
    if not has_terminal():
        raise ValueError("the talk needs a terminal (stdin and stdout); without one use 'roofline present --export "
                         "markdown' (or 'svg DIR', 'html FILE')")


def _find_link(args: Namespace) -> tuple[Path | None, Path | None, str | None]:
    """(the checked talk folder or None, the running talk the presenter joins or None, why there is no folder).

    The audience screen always starts its own talk (its own state file); the presenter joins the running talk
    of its deck (of any deck when none is given), asking on the terminal when there are several."""
    from roofline.tui.talk.sync import TalkFolderError, choose_talk, running_talks, talk_folder

    try:
        folder = talk_folder()
    except TalkFolderError as err:
        return None, None, str(err)
    if not args.presenter:
        return folder, None, None
    wanted = deck_identity(load_deck(args.deck)) if args.deck else None
    ask = input if sys.stdin.isatty() else None
    return folder, choose_talk(running_talks(folder, wanted), ask, out=lambda line: print(line, file=sys.stderr)), None
