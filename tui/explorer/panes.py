"""The three input panes: Hardware, Workload, Batching. They only compose widgets;
the app listens to their Input/Select/Switch messages ("attributes down, messages up")."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.geometry import Size
from textual.reactive import Reactive
from textual.widgets import Checkbox, Input, Label, Select, Static

from roofline.presets.loader import PresetCatalog
from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.inputs.limits import MAX_INPUT_CHARS
from roofline.tui.inputs.registry import EMPTY_CHOICE, EMPTY_CHOICE_INPUTS, inputs_for_pane, label


class StateCheckbox(Checkbox):
    """A checkbox whose box is empty when off: Textual's draws a dim X either way, which reads as ticked on some
    themes and under NO_COLOR (where the colour that tells them apart is gone)."""

    BUTTON_INNER = " "

    def watch_value(self) -> None:
        self.BUTTON_INNER = "X" if self.value else " "
        super().watch_value()  # the -on class and the Changed message

    def on_mount(self) -> None:
        self.BUTTON_INNER = "X" if self.value else " "
        self.refresh()


def _field(widget) -> Horizontal:
    """A row: the field's label (from the input registry, by the widget's id), then the widget."""
    return Horizontal(Label(label(widget.id), classes="field-label"), widget, classes="field")


def _number_field(field_id: str, value: float | int | None, placeholder: str = "", integer: bool = True
                  ) -> Horizontal:
    return _field(_number_input(field_id, value, placeholder, integer))


class FieldInput(Input):
    """An Input whose new text repaints it without laying the screen out again (the batch field repaints on
    every ``+``).

    Textual's Input sets its virtual size to the width of its text on every change, and a widget's virtual size
    asks for a layout of the whole screen when it changes: 64 -> 128 in the batch field cost a layout pass
    (about 10 ms at 160x50) on every third ``+``. A field's region never depends on its text here (its width
    comes from CSS, its height is one row), and scrolling within it reads the virtual size directly, so a repaint
    is enough, with the scroll kept in range as the layout would.
    """

    virtual_size = Reactive(Size(0, 0), layout=False)

    def watch_virtual_size(self, _old: Size, _new: Size) -> None:
        """What the skipped layout would have done: keep the scroll within the text (deleting from the middle of
        a long path shrinks it under the cursor, which does not move)."""
        self.scroll_x = self.validate_scroll_x(self.scroll_x)

    async def on_key(self, event: events.Key) -> None:
        """Editing keys (Backspace, Delete, arrows, Home, End...) act here, in the order the keys came.

        Textual inserts a printable key at once but runs a binding only after the key bubbles up to the App, so in
        a burst (over SSH one read brings several keys) every character is typed before any Backspace: "256", three
        Backspaces, "32" became 2, and in a selected "1" Backspace then "4" became "4" then blank. Running the
        Input's own binding while the key is handled keeps the keys in order; the App's priority bindings are
        checked before a key reaches the field, so they still win. (Tab is the App's: keys after it in the same
        burst still reach this field.)"""
        action = _EDITING_ACTIONS.get(event.key)
        if action is None:
            return
        event.stop()
        event.prevent_default()
        await self.run_action(action)


_EDITING_ACTIONS: dict[str, str] = {  # key -> the Input's own action for it
    key.strip(): binding.action
    for binding in Input.BINDINGS if isinstance(binding, Binding)
    for key in binding.key.split(",")
}


def _number_input(field_id: str, value: float | int | None, placeholder: str = "", integer: bool = True) -> Input:
    text = "" if value is None else (f"{value:g}" if not integer else str(value))
    # max_length also keeps Textual's number-pattern check (which backtracks) cheap
    # type "text": Textual's integer/number types drop the characters they refuse ("2.5" became 25, "1e12" 112),
    # where parse_number says what is wrong with what was typed
    return FieldInput(value=text, placeholder=placeholder, id=field_id, type="text",
                      select_on_focus=True, compact=True, max_length=MAX_INPUT_CHARS)


def _preset_select(spec, catalog: PresetCatalog, value: str) -> OptionSelect:
    """A preset id input's select: the catalogue's devices by vendor and year, or its models by id (plus the
    form's own config.json path, which is no preset)."""
    if spec.preset_kind == "hardware":
        options = [(f"{h.name} ({h.year})", h.id) for h in
                   sorted(catalog.hardware.values(), key=lambda h: (h.vendor, -h.year, h.name))]
    else:
        options = [(m.name, m.id) for m in sorted(catalog.models.values(), key=lambda m: m.id)]
        if value not in catalog.models:
            options.append((value, value))
    return OptionSelect(options, value=value, allow_blank=False, id=spec.name, compact=True)


def input_widget(spec, form: ScenarioForm, catalog: PresetCatalog | None = None):
    """The explorer's widget for one input of the registry, from its record alone: a preset select (no label row:
    the select says what it is), a choice (``auto`` for empty where the input may be empty), a checkbox, or a
    number field (its placeholder the record's ``widget_text``)."""
    value = getattr(form, spec.name, None)
    if spec.kind == "id":
        return _preset_select(spec, catalog, value)
    if spec.kind == "dtype":
        options = [(c, c) for c in spec.choices]
        if spec.name in EMPTY_CHOICE_INPUTS:  # empty (None in the form) is EMPTY_CHOICE in the select
            options.insert(0, (spec.widget_text, EMPTY_CHOICE))
            value = EMPTY_CHOICE if value is None else value
        row = _field(OptionSelect(options, value=value, allow_blank=False, id=spec.name, compact=True))
    elif spec.kind == "bool":
        return StateCheckbox(spec.widget_text or spec.label, value=value, id=spec.name, compact=True)
    else:
        row = _number_field(spec.name, value, spec.widget_text, integer=spec.whole)
    if spec.group == "serving":
        row.add_class("serving-field")  # shown while serving mode is on
    return row


class HardwarePane(Vertical):
    def __init__(self, catalog: PresetCatalog, form: ScenarioForm) -> None:
        super().__init__(id="hardware-pane", classes="pane")
        self.border_title = "Hardware"
        self._catalog, self._form = catalog, form

    def compose(self) -> ComposeResult:
        for spec in inputs_for_pane("hardware"):
            yield input_widget(spec, self._form, self._catalog)
        yield StateCheckbox("achievable ceilings (expected)", value=False, id="achievable", compact=True)
        yield Static(id="hardware-figures", classes="figures", markup=False)


class WorkloadPane(Vertical):
    def __init__(self, catalog: PresetCatalog, form: ScenarioForm) -> None:
        super().__init__(id="workload-pane", classes="pane")
        self.border_title = "Workload"
        self._catalog, self._form = catalog, form

    def compose(self) -> ComposeResult:
        for spec in inputs_for_pane("workload"):
            yield input_widget(spec, self._form, self._catalog)
        yield _field(FieldInput(placeholder="path to a local config.json", id="config_path", compact=True))
        yield Static(id="model-summary", classes="figures", markup=False)


class BatchingPane(Vertical):
    def __init__(self, form: ScenarioForm) -> None:
        super().__init__(id="batching-pane", classes="pane")
        self.border_title = "Batching"
        self._form = form

    def compose(self) -> ComposeResult:
        for spec in inputs_for_pane("batching"):
            yield input_widget(spec, self._form)


class OptionSelect(Select):
    """A Select that remembers its options (public API only), so a value from elsewhere (a config.json path
    typed in a field, a scenario file) can be added as an option before it is shown."""

    def __init__(self, options, **kwargs) -> None:
        # prompts as Text: preset names and config.json paths come from user files and are never markup
        self.option_list: list[tuple[Text, object]] = [(Text(str(p)), v) for p, v in options]
        super().__init__(self.option_list, **kwargs)

    def ensure_option(self, value) -> None:
        if value not in (v for _, v in self.option_list):
            self.option_list.append((Text(str(value)), value))
            self.set_options(self.option_list)
