"""The talk exported for the archive: one SVG per slide drawn by Textual (the audience screen in a headless
``run_test`` at a stated size, ``export_screenshot``, the way ``save_screenshot`` draws), and one self-contained
HTML page with those SVGs inlined and the speaker's notes. Files are written atomically."""

from __future__ import annotations

import asyncio
import html
import re
from pathlib import Path

from roofline.presets.clean_text import without_controls
from roofline.presets.deck_file import Deck
from roofline.presets.loader import PresetCatalog
from roofline.presets.safe_files import atomic_write_text
from roofline.tui.talk.deck import BuiltSlide, slide_numbers

_REMOTE_FONT = re.compile(r",?\s*url\(\"?https?://[^)]*\)\s*format\(\"[a-z0-9]+\"\)")  # local() fonts stay


def slide_file_name(index: int, title: str) -> str:
    """``03-decode-streams-every-weight.svg``: the slide's number, then its title's first words."""
    words = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return f"{index:02d}-{words[:40].rstrip('-') or 'slide'}.svg"


async def _screenshots(deck: Deck, catalog: PresetCatalog, size: tuple[int, int]) -> list[str]:
    from roofline.tui.app import RooflineApp
    from roofline.tui.talk.screen import PresentScreen

    app = RooflineApp(catalog=catalog, deck=deck)
    shots: list[str] = []
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PresentScreen)
        for position, built in enumerate(screen.slides):
            screen.go(position)
            await pilot.pause()
            await pilot.wait_for_scheduled_animations()
            shots.append(_offline(app.export_screenshot(title=f"{deck.title}: {built.slide.index}. "
                                                             f"{built.slide.title}")))
    return shots


def _offline(svg: str) -> str:
    """The SVG without its web-font download (the viewer's local Fira Code or monospace is used), and without
    control characters: XML 1.0 allows none but tab and newlines, so one left from a deck would make the file
    not well-formed (the deck was cleaned where it was read; this is the sink's own pass)."""
    return without_controls(_REMOTE_FONT.sub("", svg).replace("\r\n", "\n"))


def screenshots(deck: Deck, catalog: PresetCatalog, size: tuple[int, int]) -> list[str]:
    """One SVG text per slide, the audience screen at ``size`` (columns, rows)."""
    return asyncio.run(_screenshots(deck, catalog, size))


def export_svgs(deck: Deck, catalog: PresetCatalog, folder: Path, size: tuple[int, int]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for slide, svg in zip(deck.slides, screenshots(deck, catalog, size), strict=True):
        paths.append(atomic_write_text(folder / slide_file_name(slide.index, slide.title), svg))
    return paths


def html_page(deck: Deck, slides: list[BuiltSlide], catalog: PresetCatalog, svgs: list[str]) -> str:
    """One page: each slide's SVG, its numbers as text and its notes. No scripts, no remote resources."""
    title = html.escape(deck.title)
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "img-src data:\">",
        f"<title>{title}</title>",
        "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
        "section{margin-bottom:3em}svg{width:100%;height:auto}.notes{color:#444;border-left:4px solid #888;"
        "padding-left:1em}</style>",
        "</head>", "<body>", f"<h1>{title}</h1>",
        "<p>Every number was computed by roofline explorer's model for the slide's scenario.</p>",
    ]
    for built, svg in zip(slides, svgs, strict=True):
        slide = built.slide
        parts.append(f'<section id="slide-{slide.index}">')
        parts.append(f"<h2>{slide.index}. {html.escape(slide.title)}</h2>")
        parts.append(svg)
        numbers = slide_numbers(built, catalog)
        if numbers:
            parts.append("<ul>" + "".join(f"<li><b>{html.escape(label)}</b>: {html.escape(value)}</li>"
                                          for label, value in numbers) + "</ul>")
        if slide.notes:
            parts.append(f'<p class="notes">Notes: {html.escape(slide.notes)}</p>')
        parts.append("</section>")
    parts += ["</body>", "</html>", ""]
    return "\n".join(parts)


def export_html(deck: Deck, slides: list[BuiltSlide], catalog: PresetCatalog, target: Path,
                size: tuple[int, int]) -> Path:
    page = html_page(deck, slides, catalog, screenshots(deck, catalog, size))
    return atomic_write_text(target, without_controls(page))  # no raw control byte in the file
