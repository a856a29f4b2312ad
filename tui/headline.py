"""Headline numbers, large: decode tokens/s per sequence and aggregate, idle cores, TTFT."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Digits, Label, Static

from .quiet_update import set_text


def _short(value: float) -> str:
    """Digits-friendly: 4 significant figures, thousands as k."""
    if value >= 100_000:
        return f"{value / 1000:,.0f}k"
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


class Metric(Vertical):
    def __init__(self, label: str, metric_id: str) -> None:
        super().__init__(id=metric_id, classes="metric")
        self._label = label

    def compose(self) -> ComposeResult:
        yield Label(self._label, classes="metric-label")
        yield Digits("-")
        yield Label("-", classes="value-text")
        yield Label("", classes="delta")

    def show(self, value: float, text: str, delta: str = "") -> None:
        if not self.is_mounted or not self.children:  # a late message while the app shuts down
            return
        self.query_one(Digits).update(_short(value))
        set_text(self.query_one(".value-text", Label), text)
        label = self.query_one(".delta", Label)
        set_text(label, delta)
        label.display = bool(delta)


class Headline(Horizontal):
    def compose(self) -> ComposeResult:
        yield Metric("decode tok/s/seq", "m-per-seq")
        yield Metric("decode tok/s total", "m-aggregate")
        yield Metric("idle cores %", "m-idle")
        yield Metric("TTFT ms", "m-ttft")


class Verdict(Static):
    """What limits decode, and the other estimate beside the chosen one."""
