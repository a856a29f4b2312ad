"""The reference for start-up and keystrokes: a minimal Textual app with what the explorer's first frame has in
kind (a Header, five Inputs, a Static and a Footer) and nothing else; ``+`` updates the Static.

Run: .venv/bin/python benchmarks/minimal_app.py   (+ counts, q quits)
compare_startup.py and compare_keystroke.py time it under the same pseudo-terminal and the same rules as the
explorer, so the ratio between the two is the cost of this project's own code and imports on top of Textual's.
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header, Input, Static


class MinimalApp(App):
    TITLE = "minimal"
    BINDINGS = [Binding("q", "quit", "quit"), Binding("plus", "count", "count", priority=True)]

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def compose(self) -> ComposeResult:
        yield Header()
        for i in range(5):
            yield Input(str(i), id=f"field-{i}")
        yield Static("a minimal Textual app: + counts", id="counter")
        yield Footer()

    def on_mount(self) -> None:
        self.set_focus(None)  # keys reach the app, as the explorer's do with no field focused

    def action_count(self) -> None:
        self.count += 1
        self.query_one("#counter", Static).update(f"+ pressed {self.count} times")


if __name__ == "__main__":
    MinimalApp().run()
