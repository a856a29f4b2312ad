"""Update text widgets without needless repaints: over slow SSH every repaint costs bytes and time.

Textual's ``Static.update`` re-lays-out the whole screen by default, so one changed number
repaints every widget. Here a widget is only touched when its text changed, and a layout pass is
only asked for when its size can change: a different number of rows (after wrapping at the
widget's width), or a different longest line where the widget's width follows its content.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import Static

_SHOWN = "_quiet_update_text"


def _rows(plain: str, width: int) -> int:
    if width <= 0:
        return plain.count("\n") + 1
    return sum(max(1, -(-cell_len(line) // width)) for line in plain.split("\n"))


def _longest(plain: str) -> int:
    return max(cell_len(line) for line in plain.split("\n"))


def set_text(widget: Static, text: str, *, markup: bool = False) -> None:
    """Show ``text`` in ``widget`` (markup only when asked: text that quotes a user, a file or a tool is never
    parsed as markup); no-op when it is already shown."""
    previous = getattr(widget, _SHOWN, None)
    if previous == text:
        return
    setattr(widget, _SHOWN, text)
    content = text if markup else Text(text)
    if previous is None or not widget.is_mounted:
        widget.update(content)
        return
    old, new = (Text.from_markup(t).plain if markup else t for t in (previous, text))
    width = widget.content_size.width
    layout = _rows(old, width) != _rows(new, width)
    if not layout and widget.styles.width is not None and widget.styles.width.is_auto:
        layout = _longest(old) != _longest(new)
    widget.update(content, layout=layout)
