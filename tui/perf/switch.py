"""One switch for every speed-up that touches a private name of Textual or plotext, and a version gate.

``ROOFLINE_SPEEDUPS=0`` (or ``off``, ``false``, ``no``) turns all of them off: the explorer then paints through
Textual's own compositor and styles cache, builds charts with plotext's public ``build()``, uses Textual's
Footer and leaves the garbage collector alone. With the switch on, each patch still stays off unless the
installed library is a version the suite has verified (:data:`VERIFIED`), so an upgrade of Textual or plotext
falls back to the public path instead of breaking the explorer. CI runs the explorer's tests both ways.
"""

from __future__ import annotations

import functools
import os

from roofline.tui.perf.versions import installed_version

SWITCH_ENV = "ROOFLINE_SPEEDUPS"
# library -> version prefixes whose private names the patches were checked against (tests/perf/)
VERIFIED: dict[str, tuple[str, ...]] = {"textual": ("8.2.",), "plotext": ("5.3.",)}


def requested() -> bool:
    """False when the user turned the speed-ups off."""
    return os.environ.get(SWITCH_ENV, "1").strip().lower() not in ("0", "off", "false", "no")


@functools.cache
def verified(library: str) -> bool:
    version = installed_version(library)
    return version is not None and version.startswith(VERIFIED.get(library, ()))


def textual_speedups() -> bool:
    return requested() and verified("textual")


def plotext_speedups() -> bool:
    return requested() and verified("plotext")


def explorer_screen_base():
    """The explorer screen's base class: Textual's Screen, or one painted by the clustered compositor."""
    from textual.screen import Screen

    if textual_speedups():
        from roofline.tui.perf.partial_paint import ClusteredScreen

        return ClusteredScreen
    return Screen


def footer_class():
    from textual.widgets import Footer

    if textual_speedups():
        from roofline.tui.perf.footer import LeanFooter

        return LeanFooter
    return Footer


def start_collection_pacing(app, screen) -> None:
    """Garbage collection waits from a key to its frame (gc_pacing), when the screen reports its frames."""
    if not textual_speedups() or not hasattr(screen, "call_after_each_frame"):
        return
    from roofline.tui.perf.gc_pacing import CollectionPacer

    app.collection_pacer = CollectionPacer()
    screen.call_after_each_frame(app.collection_pacer.frame_painted)


def hold_collection(app) -> None:
    pacer = getattr(app, "collection_pacer", None)
    if pacer is not None:
        pacer.hold()


def release_collection(app) -> None:
    pacer = getattr(app, "collection_pacer", None)
    if pacer is not None:
        pacer.release()


def install_plotext_speedups() -> bool:
    if not plotext_speedups():
        return False
    from roofline.tui.perf import plotext_speedups as drop_ins

    return drop_ins.install()


def reset_plot(plt) -> None:
    """Clear a figure before it is drawn again: a fresh monitor (fast), or plotext's public clear_figure."""
    if plotext_speedups():
        from roofline.tui.perf.plotext_speedups import reset_plot as fast_reset

        fast_reset(plt)
    else:
        plt.clear_figure()


def plot_rows(plt, width: int, height: int, widget, previous, *, light: bool, console, public):
    """(cells, rows of segments) of a plotext figure at a size: plotext 5's private build steps when verified, else
    ``public()`` (the widget's own textual-plotext render) decoded: see :mod:`roofline.tui.perf.plotext_rows`.

    The fast path sets the plotext theme that textual-plotext registered for the app's theme itself; textual-plotext
    names it only through a private method (``_get_plotext_theme_name``, checked by tests/perf against its
    ``textual-auto-<theme>`` form for the verified version)."""
    from roofline.tui.perf import plotext_rows

    if plotext_speedups():
        theme_name = widget._get_plotext_theme_name(widget.app.theme)
        return plotext_rows.fast_rows(plt, width, height, theme_name, previous, light)
    return plotext_rows.public_rows(public(), height, console)
