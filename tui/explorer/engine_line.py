"""A running engine's live point in the Serving view: this line polls the engine's ``/metrics`` on a thread
(:class:`~roofline.tui.probe.engine_metrics.EnginePoller`), says in one line where it stands
(:func:`~roofline.tui.views.live_engine.verdict`) and posts each status up as :class:`EngineUpdate` (the Serving view
draws the point and its trail on the frontier). The frontier at the live concurrency is computed on the polling
thread (``annotate``), so the UI thread only formats text. It never touches a widget from the thread: the status
comes back as a message. GPU counters (``l``) are another worker; both can be on together.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from rich.text import Text
from textual.message import Message
from textual.widgets import Static

from roofline.tui.probe.engine_metrics import (
    POLL_INTERVAL_S,
    EngineMonitor,
    EnginePoller,
    EngineStatus,
    endpoint_for,
)
from roofline.tui.views.live_engine import (
    ExpectedMemo,
    engine_series,
    live_concurrency,
    measured_points,
    model_note,
    verdict,
    with_engine_series,
)
from roofline.tui.views.state import ExplorerState


@dataclass
class EngineUpdate(Message):
    """A poll's status (None: polling stopped), posted from the polling thread to the line, bubbling to its view."""

    status: EngineStatus | None


class EngineLine(Static):
    """The engine's one-line verdict under the frontier; :meth:`start` and :meth:`stop` the polling."""

    interval_s = POLL_INTERVAL_S  # one poll a second (tests poll faster)

    def __init__(self) -> None:
        super().__init__(id="engine-line", markup=False)
        self.poller: EnginePoller | None = None
        self.status: EngineStatus | None = None
        self.state: ExplorerState | None = None  # the scenario the point is read against (set by the view)
        self.url: str | None = None
        self._memo = ExpectedMemo()
        self._autostarted = False
        self._said = ""
        self._width = 0
        self._visible = False
        self._pending: str | None = None  # the text to show when the tab is shown
        self.display = False  # shown while it has something to say
        self._noted: tuple[str | None, str, str] = (None, "", "")  # (served model, scenario's model, the note)

    @property
    def on(self) -> bool:
        return self.poller is not None

    def autostart(self, url: str | None) -> None:
        """Start polling the first time the state carries a URL (``roofline --engine-url``); ``m`` decides after."""
        if url and not self._autostarted:
            self._autostarted = True
            self.start(url)

    def say(self, text: str) -> None:
        """Show ``text`` (plain); a layout pass only when the line appears, goes, or wraps to another number of rows
        (a layout of the explorer costs milliseconds; the verdict changes every second)."""
        if text == self._said:
            return
        if not self._visible:  # refreshing a widget in a hidden tab maps the whole screen: shown when the tab is
            self._pending = text
            return
        self._pending = None
        width = self._width  # from the last Resize (asking self.size maps the whole screen when the tab is hidden)
        layout = bool(text) != bool(self._said) or (
            width > 0 and (len(text) + width - 1) // width != (len(self._said) + width - 1) // width)
        self._said = text
        if self.display != bool(text):
            self.display = bool(text)
        self.update(Text(text), layout=layout)

    def start(self, url: str) -> None:
        """Poll ``url`` (the user's, nothing else); a URL that is not one says why on the line."""
        self.stop()
        self._autostarted = True
        self.url = url
        try:
            monitor = EngineMonitor(url)
        except ValueError as err:
            self.say(f"{err} (m to retry)")
            return
        self.add_class("-on")
        self.say(f"engine: asking {endpoint_for(url).display} ... (m stops)")
        self.poller = EnginePoller(monitor, lambda status: self.post_message(EngineUpdate(status)),
                                   interval_s=self.interval_s, annotate=self._annotate).start()

    def stop(self) -> None:
        if self.poller is not None:
            self.poller.stop()
            self.poller = None
            self.status = None
            self.remove_class("-on")
            self.say("")
            self.post_message(EngineUpdate(None))

    def toggle(self, url: str | None) -> None:
        if self.on:
            self.stop()
        elif url:
            self.start(url)
        else:
            self.say("no engine URL: start with roofline --engine-url http://127.0.0.1:8000 (its /metrics and "
                     "/v1/models are read, nothing else)")

    def on_resize(self, event) -> None:
        self._width = event.size.width

    def tab_shown(self, shown: bool) -> None:
        """The Serving view's tab is shown or hidden (its Show and Hide events: this line, display none while it
        has nothing to say, gets none of its own)."""
        self._visible = shown
        if shown and self._pending is not None:
            self.say(self._pending)

    def on_unmount(self) -> None:
        if self.poller is not None:
            self.poller.stop()

    def _annotate(self, status: EngineStatus) -> float | None:
        """Polling thread: the expected frontier's tokens/s per device at the live concurrency, for the state the
        line holds now (a frozen object: reading the reference is safe)."""
        state = self.state
        if state is None or state.serving is None or status.point is None:
            return None
        settings = state.serving.settings
        return self._memo(state.results.scenario, settings.mix, live_concurrency(status), settings.options)

    def on_engine_update(self, message: EngineUpdate) -> None:
        if message.status is None or self.poller is None:
            return
        self.status = message.status
        self.show()

    def show(self) -> None:
        """The verdict for the last status against the state's scenario and targets."""
        status, state = self.status, self.state
        if status is None:
            return
        if state is None or state.serving is None:
            self.say(f"{status.engine or 'engine'}: the serving numbers are not computed")
            return
        scenario = state.results.scenario
        line = verdict(status, devices=scenario.parallelism.devices, itl_target_s=state.serving.settings.itl_target_s,
                       expected_per_device=status.annotation if isinstance(status.annotation, float) else None,
                       now_s=time.monotonic())
        if status.model != self._noted[0] or scenario.model.id != self._noted[1]:
            self._noted = (status.model, scenario.model.id, model_note(status.model, scenario.model.id,
                                                                       state.catalog.models))
        self.say(line + (f"; {self._noted[2]}" if self._noted[2] else ""))


def engine_chart_data(data, status: EngineStatus | None, state: ExplorerState):
    """The frontier chart's data with the live trail and the state's measured runs (views/live_engine.py)."""
    devices = state.results.scenario.parallelism.devices
    measured = measured_points(state.measured_runs, devices=devices)
    trail, runs = engine_series(status, measured, devices=devices, now_s=time.monotonic())
    if trail is None and runs is None:
        return data
    return with_engine_series(data, trail, runs)


def engine_commands(screen) -> list[tuple[str, object, str]]:
    """The command palette's engine commands: start or stop the live engine, and, when the engine serves a model
    with a preset other than the scenario's, switch the scenario to it."""
    from functools import partial

    from roofline.presets.bench_files import model_preset_for

    commands: list[tuple[str, object, str]] = [
        ("live engine: start or stop polling (--engine-url)", screen.action_toggle_engine,
         "a running engine's live point on the Serving view (m)")]
    lines = screen.query(EngineLine)
    status = lines.first().status if lines else None
    if status is not None and status.model:
        preset = model_preset_for(status.model, list(screen.catalog.models))
        if preset is not None and screen.state is not None and preset != screen.state.results.scenario.model.id:
            commands.append((f"model: the engine's, {preset}", partial(screen.set_field, "model_ref", preset),
                             f"the engine at {status.endpoint} serves {status.model}"))
    return commands
