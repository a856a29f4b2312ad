"""The reference for start-up: a minimal Textual app (Header, Static, Footer) and nothing else.

Run: .venv/bin/python benchmarks/minimal_app.py   (q quits)
bench_startup.py times it under the same pseudo-terminal and the same first-frame rule as the
explorer, so the ratio between the two is the cost of this project's own code and imports
on top of Textual's.
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header, Static


class MinimalApp(App):
    TITLE = "minimal"
    BINDINGS = [Binding("q", "quit", "quit")]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("a minimal Textual app")
        yield Footer()


if __name__ == "__main__":
    MinimalApp().run()
