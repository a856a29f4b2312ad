"""The command palette: its commands (pick hardware, model, precision; pin a baseline; save and load) and a palette
that stays harmless after it is dismissed.

Preset names, ids and vendors come from user files, so every title and help line is built as
:class:`~textual.content.Content` (plain text, highlighted here), never parsed as markup: Textual's
``Matcher.highlight`` and the palette's help line would read ``[/x]`` as a closing tag and kill the explorer,
and already dropped ids such as ``[h200]`` from the titles as unknown style tags.
"""

from __future__ import annotations

import asyncio
from functools import partial

from textual import on
from textual.await_complete import AwaitComplete
from textual.command import CommandPalette, DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.widgets import Button, Input, OptionList

from roofline.models.dtypes import ACTIVATION_BITS_PER_ELEMENT, KV_BITS_PER_ELEMENT, WEIGHT_BITS_PER_ELEMENT

YIELD_EVERY = 16  # hits between two awaits: a search the user has moved on from stops within a few matches
DISCOVERED = ("pin", "save", "load", "compare")  # the commands listed before anything is typed


class ScenarioCommands(Provider):
    """Every preset and precision as a command: 'hardware: NVIDIA H200 [h200]', 'weights: int4', ..."""

    _commands_cache: list[tuple[str, object, str]] | None = None

    def _commands(self) -> list[tuple[str, object, str]]:
        """(title, callback, help) for every command, built once per palette (the catalog does not change)."""
        if self._commands_cache is not None:
            return self._commands_cache
        app = self.screen  # the explorer's screen (the palette is opened over it; COMMANDS lives there)
        catalog = app.catalog
        commands: list[tuple[str, object, str]] = []
        for hw in sorted(catalog.hardware.values(), key=lambda h: h.id):
            commands.append((f"hardware: {hw.name} [{hw.id}]", partial(app.set_field, "hardware_id", hw.id),
                             f"{hw.vendor} {hw.year}"))
        for m in sorted(catalog.models.values(), key=lambda m: m.id):
            commands.append((f"model: {m.name} [{m.id}]", partial(app.set_field, "model_ref", m.id),
                             f"{m.params / 1e9:,.1f} B params"))
        for d in WEIGHT_BITS_PER_ELEMENT:
            commands.append((f"weights: {d}", partial(app.set_field, "weights", d), "weight storage format"))
        for d in ACTIVATION_BITS_PER_ELEMENT:
            commands.append((f"activations: {d}", partial(app.set_field, "activations", d), "activation format"))
        for d in KV_BITS_PER_ELEMENT:
            commands.append((f"kv cache: {d}", partial(app.set_field, "kv", d), "KV-cache format"))
        commands += [
            ("pin baseline", app.action_pin_baseline, "compare every change against the current scenario"),
            ("clear baseline", app.action_clear_baseline, "stop comparing"),
            ("save scenario", app.action_save_scenario, "write the scenario to a TOML file"),
            ("load scenario", app.action_load_scenario, "read a scenario TOML file"),
            ("compare: add current hardware", app.action_compare_add, "add to the Compare view"),
        ]
        from roofline.tui.explorer.engine_line import engine_commands

        commands += engine_commands(app)  # the live engine, and the model it serves
        self._commands_cache = commands
        return commands

    async def discover(self) -> Hits:
        for title, callback, help_text in self._commands():
            if title.startswith(DISCOVERED):
                yield DiscoveryHit(Content(title), callback, text=title, help=Content(help_text))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for index, (title, callback, help_text) in enumerate(self._commands()):
            if index % YIELD_EVERY == YIELD_EVERY - 1:
                await asyncio.sleep(0)  # let a cancellation in: the palette may be gone or the query changed
            score, offsets = matcher.fuzzy_search.match(query, title)
            if score > 0:
                yield Hit(score, highlight(title, offsets, matcher.match_style), callback, text=title,
                          help=Content(help_text))


def highlight(title: str, offsets, style) -> Content:
    """The title as plain text, with the matched characters in the palette's highlight style."""
    content = Content(title)
    for offset in offsets:
        if not title[offset].isspace():
            content = content.stylize(style, offset, offset + 1)
    return content


class ExplorerPalette(CommandPalette):
    """Textual's palette, dismissed at most once and deaf after that.

    Messages queued before a dismissal still reach the palette afterwards (a letter typed just before Escape
    arrives as ``Input.Changed``; a second Enter as a second ``OptionSelected``). Textual's palette then starts
    a new search on a screen that is being taken down, or dismisses again and pops whatever screen is on top,
    the explorer included (``ScreenStackError: Can't pop screen``). Here a dismissal cancels the palette's
    searches, and everything that arrives later is dropped.
    """

    _dismissed = False

    def dismiss(self, result=None) -> AwaitComplete:
        if self._dismissed or not self.is_active:  # a second dismissal would pop the screen below
            return AwaitComplete.nothing()
        self._dismissed = True
        self.workers.cancel_node(self)
        return super().dismiss(result)

    @on(Input.Changed)
    @on(Input.Submitted)
    @on(Button.Pressed)
    @on(OptionList.OptionSelected)
    def _drop_when_dismissed(self, event) -> None:
        if self._dismissed:
            event.prevent_default()  # the palette's own handlers (base class) never see it
            event.stop()


def palette_class() -> type[CommandPalette]:
    """The palette the explorer opens: :class:`ExplorerPalette`, with watchers that survive a missing list on
    Textual versions the suite has verified (:mod:`roofline.tui.perf.palette_guard`)."""
    from roofline.tui.perf.palette_guard import guarded_palette

    return guarded_palette(ExplorerPalette)
