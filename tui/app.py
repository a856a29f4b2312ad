"""The Textual application: themes, the screen stack (explorer, slides, dialogs), workers and notifications.

The explorer itself (its form, ceilings, baseline, compare list and views) is
:class:`~roofline.tui.explorer.screen.ExplorerScreen`, the default screen; talk mode pushes
:class:`~roofline.tui.talk.screen.PresentScreen` over it.
"""

from __future__ import annotations

import os
from pathlib import Path

from textual import events
from textual.app import App
from textual.screen import Screen

from roofline.presets import load_catalog
from roofline.presets.loader import PresetCatalog
from roofline.tui.actions import bindings
from roofline.tui.explorer.screen import ExplorerScreen
from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.messages import BackToSlides, OpenExplorer
from roofline.tui.perf import switch


class RooflineApp(App):
    """Live roofline explorer over :mod:`roofline.models`."""

    CSS_PATH = "roofline.tcss"
    TITLE = "roofline"  # short: the header also carries the scenario line, which must fit at 80 columns
    BINDINGS = bindings("app")

    def __init__(self, form: ScenarioForm | None = None, catalog: PresetCatalog | None = None,
                 shown_context: int | None = None, deck=None, detect_hardware: bool = False,
                 talk_link=None, engine_url: str | None = None, measured_runs: tuple = ()) -> None:
        super().__init__()
        self.catalog = catalog or load_catalog()
        self.detect_hardware = detect_hardware  # probe for local GPUs and open on them (no --hardware given)
        self.deck = deck  # a talk deck (roofline present): slides over the explorer
        self.present_screen = None
        self.talk_link = talk_link  # talk.sync.TalkLink: the audience screen follows the presenter's (and leads it)
        self.collection_pacer = None  # perf.gc_pacing, when the speed-ups are on
        from roofline.tui.preferences import load_preferences

        self.preferences, self._preferences_problem = load_preferences()
        self._explorer = ExplorerScreen(self.catalog, form, shown_context, detect_hardware=detect_hardware,
                                        engine_url=engine_url, measured_runs=measured_runs)

    @property
    def explorer(self) -> ExplorerScreen:
        """The explorer's screen, at the bottom of the stack (dialogs and slides go on top of it)."""
        return self._explorer

    def get_default_screen(self) -> Screen:
        return self._explorer

    def on_mount(self) -> None:
        switch.start_collection_pacing(self, self._explorer)
        self._apply_preferences()
        if self.deck is not None:
            from roofline.tui.talk.deck import check_deck
            from roofline.tui.talk.screen import PresentScreen

            self.present_screen = PresentScreen(self.deck, check_deck(self.deck, self.catalog), self.catalog,
                                                link=self.talk_link)
            # installed, so that opening the explorer (which pops it) does not remove it: Esc pushes it back, and a
            # removed screen would come back with its update timer stopped, never painted again
            self.install_screen(self.present_screen, name="present")
            self.push_screen(self.present_screen)
        if self.catalog.warnings:
            shown = "\n".join(str(w) for w in self.catalog.warnings[:5])
            self.notify(f"preset warnings:\n{shown}", severity="warning", timeout=15, markup=False)
        if self.catalog.errors:  # broken user presets were skipped; say which and why
            shown = "\n".join(str(e) for e in self.catalog.errors[:5])
            more = f"\n... and {len(self.catalog.errors) - 5} more" if len(self.catalog.errors) > 5 else ""
            self.notify(f"skipped {len(self.catalog.errors)} preset file(s):\n{shown}{more}", severity="warning",
                        timeout=15, markup=False)

    def _apply_preferences(self) -> None:
        """Theme and key overrides from the preferences file; the theme chosen later is remembered."""
        prefs = self.preferences
        if self._preferences_problem:
            self.notify(self._preferences_problem, severity="warning", markup=False)
        if prefs.theme:
            if prefs.theme in self.available_themes:
                self.theme = prefs.theme
            else:
                self.notify(f"preferences: unknown theme {prefs.theme[:40]!r}", severity="warning", markup=False)
        if prefs.keys:
            self.set_keymap(prefs.keys)  # binding ids (tui/actions.py) -> keys
        # remember themes the user picks, not the ones Textual sets itself (NO_COLOR switches to an ANSI theme at
        # start-up): listen only once the first frame is up, and never under NO_COLOR
        if not os.environ.get("NO_COLOR"):
            self.call_after_refresh(self.theme_changed_signal.subscribe, self, self._remember_theme)

    def _remember_theme(self, theme) -> None:
        from roofline.tui.preferences import save_theme

        if theme.name != self.preferences.theme:
            problem = save_theme(theme.name)
            if problem:
                self.notify(problem, severity="warning", markup=False)
            else:
                from dataclasses import replace

                self.preferences = replace(self.preferences, theme=theme.name)

    async def on_event(self, event: events.Event) -> None:
        """Keys and clicks reach the app first: from here to the frame that shows their effect, garbage
        collection waits (perf/gc_pacing.py, when the speed-ups are on)."""
        if isinstance(event, (events.Key, events.MouseDown, events.MouseUp, events.Click)):
            switch.hold_collection(self)
        await super().on_event(event)

    def on_unmount(self) -> None:
        switch.release_collection(self)  # never leave collection off behind us

    def on_resize(self, event: events.Resize) -> None:
        # on the explorer's screen, not the one on top: a resize under a dialog must reach the explorer too
        self._explorer.apply_layout_class(event.size.width, event.size.height)

    # ---- talk mode -------------------------------------------------------------------------------
    def on_open_explorer(self, message: OpenExplorer) -> None:
        self._explorer.show_form(message.form)
        self.pop_screen()
        self.notify("explorer on this slide's scenario; Esc returns to the slides")

    def on_back_to_slides(self, message: BackToSlides) -> None:
        if self.present_screen is not None and self.screen is not self.present_screen:
            self.push_screen(self.present_screen)

    # ---- app-wide keys ---------------------------------------------------------------------------
    def action_help(self) -> None:
        from roofline.tui.explorer.dialogs import HelpScreen  # Markdown only when asked for: start-up stays lean

        self.push_screen(HelpScreen())

    def action_command_palette(self) -> None:
        """Textual's palette, made harmless after it is dismissed (tui/explorer/commands.py); no id, unlike
        Textual's: a palette opened while the last one is still being taken down would clash with it."""
        from textual.command import CommandPalette

        from roofline.tui.explorer.commands import palette_class

        if self.use_command_palette and not CommandPalette.is_open(self):
            self.push_screen(palette_class()())

    def action_screenshot_svg(self) -> None:
        try:
            path = self.save_screenshot(path=str(Path.cwd()))
        except OSError as err:
            self.notify(f"could not save the screenshot here: {err.strerror or err}", severity="error",
                        markup=False)
            return
        self.notify(f"screenshot saved: {path}", markup=False)


def run_explorer(form: ScenarioForm | None = None, shown_context: int | None = None,
                 scenario_file: Path | None = None, detect_hardware: bool = False,
                 catalog: PresetCatalog | None = None, engine_url: str | None = None,
                 measured_runs: tuple = ()) -> int:
    import os
    import sys

    # nothing to draw on: exit at once instead of hanging (textual-serve's web driver runs over pipes on purpose)
    if not os.environ.get("TEXTUAL_DRIVER") and not (sys.stdin.isatty() and sys.stdout.isatty()):
        print("roofline: the explorer needs a terminal (stdin and stdout); without one use 'roofline report' or "
              "'roofline plan'", file=sys.stderr)
        return 2
    app = RooflineApp(form, catalog=catalog, shown_context=shown_context, detect_hardware=detect_hardware,
                      engine_url=engine_url, measured_runs=measured_runs)
    if scenario_file is not None:
        app.call_after_refresh(app.explorer.load_scenario_file, scenario_file)
    app.run()
    return 0
