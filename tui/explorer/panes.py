"""The three input panes: Hardware, Workload, Batching. They only compose widgets;
the app listens to their Input/Select/Switch messages ("attributes down, messages up")."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.geometry import Size
from textual.message import Message
from textual.reactive import Reactive
from textual.widgets import Checkbox, Input, Label, Select, Static

from roofline.models.dtypes import ACTIVATION_BITS_PER_ELEMENT, KV_BITS_PER_ELEMENT, WEIGHT_BITS_PER_ELEMENT
from roofline.presets.loader import PresetCatalog
from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.inputs.limits import MAX_INPUT_CHARS
from roofline.tui.inputs.registry import BY_NAME, SERVING_INPUTS, label


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


def _number_input(field_id: str, value: float | int | None, placeholder: str = "", integer: bool = True) -> Input:
    text = "" if value is None else (f"{value:g}" if not integer else str(value))
    # max_length also keeps Textual's number-pattern check (which backtracks) cheap
    # type "text": Textual's integer/number types drop the characters they refuse ("2.5" became 25, "1e12" 112),
    # where parse_number says what is wrong with what was typed
    return FieldInput(value=text, placeholder=placeholder, id=field_id, type="text",
                      select_on_focus=True, compact=True, max_length=MAX_INPUT_CHARS)


class HardwarePane(Vertical):
    def __init__(self, catalog: PresetCatalog, form: ScenarioForm) -> None:
        super().__init__(id="hardware-pane", classes="pane")
        self.border_title = "Hardware"
        self._catalog, self._form = catalog, form

    def compose(self) -> ComposeResult:
        options = [(f"{h.name} ({h.year})", h.id) for h in
                   sorted(self._catalog.hardware.values(), key=lambda h: (h.vendor, -h.year, h.name))]
        yield OptionSelect(options, value=self._form.hardware_id, allow_blank=False, id="hardware_id", compact=True)
        yield _number_field("tp", self._form.tp)
        yield _number_field("pp", self._form.pp)
        for name in ("mem_bw_override_gb_per_s", "peak_override_tflops", "capacity_override_gib",
                     "price_per_device_hour"):
            yield _number_field(name, getattr(self._form, name), "preset" if name != "price_per_device_hour"
                                else "none", integer=False)
        # the serving stack and the TP group's links, which expected assumes (the registry's choices)
        yield _field(OptionSelect([(e, e) for e in BY_NAME["engine"].choices], value=self._form.engine,
                                  allow_blank=False, id="engine", compact=True))
        topologies = [("from the preset", "auto")] + [(t, t) for t in BY_NAME["topology"].choices]
        yield _field(OptionSelect(topologies, value=self._form.topology or "auto", allow_blank=False, id="topology",
                                  compact=True))
        yield StateCheckbox("achievable ceilings (expected)", value=False, id="achievable", compact=True)
        yield Static(id="hardware-figures", classes="figures", markup=False)


class WorkloadPane(Vertical):
    def __init__(self, catalog: PresetCatalog, form: ScenarioForm) -> None:
        super().__init__(id="workload-pane", classes="pane")
        self.border_title = "Workload"
        self._catalog, self._form = catalog, form

    def compose(self) -> ComposeResult:
        options = [(m.name, m.id) for m in sorted(self._catalog.models.values(), key=lambda m: m.id)]
        if self._form.model_ref not in self._catalog.models:
            options.append((self._form.model_ref, self._form.model_ref))
        yield OptionSelect(options, value=self._form.model_ref, allow_blank=False, id="model_ref", compact=True)
        weights = [("released format", "auto")] + [(d, d) for d in WEIGHT_BITS_PER_ELEMENT]
        yield _field(OptionSelect(weights, value=self._form.weights or "auto", allow_blank=False, id="weights",
                                       compact=True))
        activations = [("released format", "auto")] + [(d, d) for d in ACTIVATION_BITS_PER_ELEMENT]
        yield _field(OptionSelect(activations, value=self._form.activations or "auto",
                                           allow_blank=False, id="activations", compact=True))
        yield _field(OptionSelect([(d, d) for d in KV_BITS_PER_ELEMENT], value=self._form.kv, allow_blank=False,
                                        id="kv", compact=True))
        yield _field(FieldInput(placeholder="path to a local config.json", id="config_path", compact=True))
        yield Static(id="model-summary", classes="figures", markup=False)


class BatchingPane(Vertical):
    def __init__(self, form: ScenarioForm) -> None:
        super().__init__(id="batching-pane", classes="pane")
        self.border_title = "Batching"
        self._form = form

    def compose(self) -> ComposeResult:
        f = self._form
        yield _number_field("batch", f.batch)
        yield _number_field("prompt_tokens", f.prompt_tokens)
        yield _number_field("output_tokens", f.output_tokens)
        yield StateCheckbox("FlashAttention (fused)", value=f.flash_attention, id="flash_attention", compact=True)
        yield _number_field("kv_compression_ratio", f.kv_compression_ratio, integer=False)
        yield _number_field("shown_context", None, "mean of generation")
        yield from _serving_fields(f)


def _serving_fields(form: ScenarioForm):
    """The serving-mode switch, then its fields (shown while it is on), from the input registry."""
    for name in SERVING_INPUTS:
        spec, value = BY_NAME[name], getattr(form, name)
        if spec.kind == "bool":
            yield StateCheckbox(spec.label, value=value, id=name, compact=True)
            continue
        row = _number_field(name, value, "none" if spec.optional else "", integer=spec.whole)
        row.add_class("serving-field")
        yield row


class ViewBody(Vertical):
    """The contents of a view's tab; says when it is mounted (views can be mounted lazily)."""

    @dataclass
    class Ready(Message):
        view: str

    def __init__(self, view: str) -> None:
        super().__init__(id=f"{view}-body", classes="view-body")
        self.view = view

    def on_mount(self) -> None:
        self.post_message(self.Ready(self.view))


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
