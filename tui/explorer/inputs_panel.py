"""The inputs panel: the three panes of fields, what typed text means, and the fields' invalid marks.

Messages up (tui/messages.py): a field, select or checkbox that changes the form posts ``FormChanged`` with the new
values (the context field ``ContextChanged``, the ceilings box ``CeilingChanged``); text that is not an acceptable
value posts ``FieldRefused``, text that is acceptable again ``FieldAccepted``. State down: the screen keeps
:attr:`InputsPanel.form` current, hands the panel each new state (the figures under the Hardware and Workload panes
draw from it) and shows values with :meth:`InputsPanel.show_value`.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import var
from textual.widget import Widget
from textual.widgets import Checkbox, Input, Select, Static

from roofline.presets.loader import PresetCatalog, PresetFileError
from roofline.tui.explorer.panes import BatchingPane, HardwarePane, OptionSelect, WorkloadPane
from roofline.tui.explorer.quiet_update import set_text
from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.inputs.limits import FIELD_LIMITS, parse_number
from roofline.tui.inputs.registry import BY_NAME, EMPTY_CHOICE, EMPTY_CHOICE_INPUTS, FORM_FIELDS
from roofline.tui.messages import CeilingChanged, ContextChanged, FieldAccepted, FieldRefused, FormChanged
from roofline.tui.views.formatting import flop_per_byte, gib, si
from roofline.tui.views.state import ExplorerState

AUTO_FIELDS = EMPTY_CHOICE_INPUTS  # None in the form, EMPTY_CHOICE in the select (the input registry's)


class InputsPanel(VerticalScroll):
    """Hardware, Workload and Batching; above them (narrow terminals) the fields' problems."""

    state: var[ExplorerState | None] = var(None, init=False)

    def __init__(self, catalog: PresetCatalog, form: ScenarioForm) -> None:
        super().__init__(id="inputs")
        self.catalog, self.form = catalog, form
        self._fields: dict[str, Widget] = {}  # field -> its widget, looked up once (DOM queries walk every node)
        self._last_accepted: dict[str, tuple[str, object]] = {}  # field -> (text accepted, the value before it)

    def compose(self) -> ComposeResult:
        yield Static(id="input-status", markup=False)  # narrow terminals: field problems where the fields are
        yield HardwarePane(self.catalog, self.form)
        yield WorkloadPane(self.catalog, self.form)
        yield BatchingPane(self.form)

    def on_mount(self) -> None:
        for name in (*FORM_FIELDS, "shown_context", "config_path", "achievable"):
            found = self.query(f"#{name}")
            if found:
                self._fields[name] = found.first()

    @property
    def status(self) -> Static:
        return self.query_one("#input-status", Static)

    def field(self, name: str) -> Widget | None:
        return self._fields.get(name)

    # ---- state down ----------------------------------------------------------------------------------------------
    def watch_state(self, state: ExplorerState | None) -> None:
        """The figures under the Hardware and Workload panes."""
        if state is None:
            return
        r = state.results
        hw, m = r.scenario.hardware, r.scenario.model
        c = r.chosen_ceilings(state.achievable)
        set_text(self.query_one("#hardware-figures", Static),
                 f"{si(c.mem_bw_bytes_per_s, 'B/s')} | {c.compute_dtype} {si(c.matmul_flops_per_s, 'FLOP/s')}\n"
                 f"{gib(hw.memory_capacity_bytes)} | ridge {flop_per_byte(c.ridge_flops_per_byte)} FLOP/B"
                 f"{' (achievable)' if state.achievable else ''}")
        a = m.attention
        moe = f" | {m.moe.num_experts} experts, top-{m.moe.top_k}" if m.moe else ""
        set_text(self.query_one("#model-summary", Static),
                 f"{m.params / 1e9:,.1f} B params, {m.active_params / 1e9:,.1f} B active\n"
                 f"{m.num_layers} layers, {a.num_heads} heads, {a.num_kv_heads} KV heads"
                 f"{' (MLA)' if a.is_mla else ''}{moe}")
        self._show_preset_price(hw.price_usd_per_hour)

    def _show_preset_price(self, price_usd_per_hour: float | None) -> None:
        """The empty price field says the preset's price that Compare and the serving numbers use ('none' read as no
        price while $3.78 was in use)."""
        field = self._fields.get("price_per_device_hour")
        if isinstance(field, Input):
            text = BY_NAME["price_per_device_hour"].widget_text if price_usd_per_hour is None else (
                f"preset ${price_usd_per_hour:,.2f}")
            if field.placeholder != text:
                field.placeholder = text

    def show_value(self, name: str, value) -> None:
        """Show ``value`` in the field's widget without a change message (a number field is acceptable again)."""
        w = self._fields.get(name)
        if isinstance(w, OptionSelect):
            if value is None and name in AUTO_FIELDS:
                value = EMPTY_CHOICE
            with w.prevent(Select.Changed):  # set_options also announces a change (to the first option)
                w.ensure_option(value)  # a config.json path typed elsewhere
                w.value = value
        elif isinstance(w, Input):
            with w.prevent(Input.Changed):
                spec = BY_NAME.get(name)
                w.value = "" if value is None else (f"{value:g}" if spec and spec.kind == "float" else str(value))
            self._accepted(name)
        elif isinstance(w, Checkbox):
            with w.prevent(Checkbox.Changed):
                w.value = bool(value)

    def set_invalid(self, name: str, invalid: bool) -> None:
        """Mark a field's widget as invalid, or not."""
        widget = self._fields.get(name)
        if widget is not None:
            widget.set_class(invalid, "-invalid")

    # ---- messages up ---------------------------------------------------------------------------------------------
    def _accepted(self, name: str) -> None:
        self.set_invalid(name, False)
        self.post_message(FieldAccepted(name))

    def _refuse(self, name: str, message: str, *, typed: bool = False) -> None:
        self.set_invalid(name, True)
        self.post_message(FieldRefused(name, message, typed=typed))

    def _change(self, **values) -> None:
        self.post_message(FormChanged(values))

    @on(Select.Changed)
    def _select_changed(self, event: Select.Changed) -> None:
        name = event.select.id or ""
        if name not in FORM_FIELDS:
            return  # a view's select (History's metric and vendors)
        event.stop()
        value = None if name in AUTO_FIELDS and event.value == EMPTY_CHOICE else event.value
        self._change(**{name: value})

    @on(Checkbox.Changed)
    def _checkbox_changed(self, event: Checkbox.Changed) -> None:
        event.stop()
        name = event.checkbox.id or ""
        if name == "achievable":
            self.post_message(CeilingChanged(event.value))
        elif name in FORM_FIELDS:
            self._change(**{name: event.value})

    @on(Input.Changed)
    def _input_changed(self, event: Input.Changed) -> None:
        event.stop()
        name, text = event.input.id or "", event.value
        if name == "config_path":
            if not text.strip():
                self._accepted(name)
            return
        if name not in FIELD_LIMITS:
            return
        spec = BY_NAME[name]
        try:
            value = None if not text.strip() and spec.optional else parse_number(name, text)
        except ValueError as err:
            # a partial entry ("1e1" on the way to "1e12") must not stay as the last good value: when the refused
            # text continues the last accepted one, go back to the value before that one was typed
            last_text, before = self._last_accepted.get(name, (None, None))
            if last_text is not None and text.startswith(last_text) and name != "shown_context":
                self._last_accepted.pop(name)
                self._change(**{name: before})
            self._refuse(name, str(err), typed=True)
            return
        self._accepted(name)
        if name == "shown_context":
            self.post_message(ContextChanged(value))
            return
        earlier = self._last_accepted.get(name)
        chained = earlier is not None and text.startswith(earlier[0])  # still typing the same entry
        self._last_accepted[name] = (text, earlier[1] if chained else getattr(self.form, name, None))
        self._change(**{name: value})

    @on(Input.Submitted, "#config_path")
    def _config_path_submitted(self, event: Input.Submitted) -> None:
        """Load a local config.json (or a folder with one); a path that does not load says why."""
        from roofline.presets.loader import resolve_model

        event.stop()
        path = event.value.strip()
        if not path:
            return
        try:
            resolve_model(path)
        except KeyError:
            self._refuse("config_path", f"no config.json at {path!r}")
            return
        except (PresetFileError, OSError, RuntimeError, ValueError) as err:
            self._refuse("config_path", str(err))
            return
        self._accepted("config_path")
        self.show_value("model_ref", path)
        self._change(model_ref=path)
