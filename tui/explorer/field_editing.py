"""Editing the explorer's fields: typed text to form values, the fields' problems and the status line.

A mixin of :class:`~roofline.tui.explorer.screen.ExplorerScreen`. Handlers go by name (``on_input_changed``), not
``@on``: Textual collects ``@on`` handlers only from a message pump's own class body.
"""

from __future__ import annotations

from dataclasses import replace

from textual.widgets import Checkbox, Input, Select, Static

from roofline.presets.loader import PresetFileError
from roofline.tui.explorer.panes import OptionSelect
from roofline.tui.explorer.quiet_update import set_text
from roofline.tui.inputs.limits import FIELD_LIMITS, parse_number
from roofline.tui.inputs.registry import BY_NAME


class FieldEditing:
    def _field_widget(self, field: str):
        """The input widget for a form field, looked up once (DOM queries walk every node)."""
        key = ("field", field)
        if key not in self._widgets:
            found = self.query(f"#{field}")
            self._widgets[key] = found.first() if found else None
        return self._widgets[key]

    def _sync_widget(self, field: str, value) -> None:
        w = self._field_widget(field)
        if w is None:
            return
        if isinstance(w, OptionSelect):
            if value is None and field in ("weights", "activations", "topology"):
                value = "auto"
            with w.prevent(Select.Changed):  # set_options also announces a change (to the first option)
                w.ensure_option(value)  # a config.json path typed elsewhere
                w.value = value
        elif isinstance(w, Input):
            with w.prevent(Input.Changed):
                spec = BY_NAME.get(field)
                w.value = "" if value is None else (f"{value:g}" if spec and spec.kind == "float" else str(value))
            w.remove_class("-invalid")
            self._clear_invalid(field)
        elif isinstance(w, Checkbox):
            with w.prevent(Checkbox.Changed):
                w.value = bool(value)

    def on_input_changed(self, event: Input.Changed) -> None:
        field = event.input.id or ""
        self.seen_text[field] = event.value  # what the screen has handled (tests wait for it, not for time)
        if field == "config_path":
            if not event.value.strip():
                self._clear_invalid(field)
            return
        if field not in FIELD_LIMITS:
            return
        spec = BY_NAME[field]
        try:
            value = None if not event.value.strip() and spec.optional else parse_number(field, event.value)
        except ValueError as err:
            # a partial entry ("1e1" on the way to "1e12") must not stay as the last good value: when the refused
            # text continues the last accepted one, go back to the value before that one was typed
            last_text, before = self._last_accepted.get(field, (None, None))
            if last_text is not None and event.value.startswith(last_text) and field != "shown_context":
                self._last_accepted.pop(field)
                self.form = replace(self.form, **{field: before})
                self.recompute()
            self._mark_invalid(field, str(err), typed=True)
            return
        self._clear_invalid(field)
        if field != "shown_context":
            earlier = self._last_accepted.get(field)
            chained = earlier is not None and event.value.startswith(earlier[0])  # still typing the same entry
            self._last_accepted[field] = (event.value, earlier[1] if chained else getattr(self.form, field, None))
        if field == "shown_context":
            self.shown_context = value
            self.recompute()
        else:
            self.set_form(replace(self.form, **{field: value}))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Load a local config.json (or a folder with one); a path that does not load says why."""
        if event.input.id != "config_path":
            return
        from roofline.presets.loader import resolve_model

        path = event.value.strip()
        if not path:
            return
        try:
            resolve_model(path)
        except KeyError:
            self._mark_invalid("config_path", f"no config.json at {path!r}")
            return
        except (PresetFileError, OSError, RuntimeError, ValueError) as err:
            self._mark_invalid("config_path", str(err))
            return
        self._clear_invalid("config_path")
        self.set_field("model_ref", path)

    def _mark_invalid(self, field: str, message: str, *, typed: bool = False) -> None:
        """Show a field as invalid with its message; the screen keeps the last good scenario."""
        good = self.shown_context if field == "shown_context" else getattr(self.form, field, None)
        self.problems.mark(field, message, typed=typed, last_good=good)
        widget = self._field_widget(field)
        if widget is not None:
            widget.add_class("-invalid")
        self._show_status()

    def _clear_invalid(self, field: str) -> None:
        widget = self._field_widget(field)
        if widget is not None:
            widget.remove_class("-invalid")
        if self.problems.clear(field):
            self._show_status()

    def _show_status(self, text: str | None = None) -> None:
        """The status line: ``text``, else the latest field problem (and how many more), else nothing."""
        text = text if text is not None else self.problems.message()
        for selector in ("#status", "#input-status"):
            set_text(self._w(selector, Static), text)
        self._w("#input-status", Static).set_class(not text, "-empty")  # no blank row above the inputs
