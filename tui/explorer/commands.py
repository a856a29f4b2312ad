"""Command-palette providers: pick hardware, model, precision; pin a baseline; save and load."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from roofline.models.dtypes import ACTIVATION_BITS_PER_ELEMENT, KV_BITS_PER_ELEMENT, WEIGHT_BITS_PER_ELEMENT


class ScenarioCommands(Provider):
    """Every preset and precision as a command: 'hardware: NVIDIA H200', 'weights: int4', ..."""

    def _commands(self) -> list[tuple[str, object, str]]:
        app = self.screen  # the explorer's screen (the palette is opened over it)
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
        return commands

    async def discover(self) -> Hits:
        for title, callback, help_text in self._commands():
            if title.startswith(("pin", "save", "load", "compare")):
                yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, callback, help_text in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)
