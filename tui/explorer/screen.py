"""The explorer's screen: it owns the form, the ceiling choice, the baseline and the compare list, recomputes on
every change and hands the results to the view widgets (drawing: :mod:`.view_drawing`).

Attributes down, messages up: the input panes are plain widgets whose Input/Select/Checkbox messages arrive here;
nothing below calls back into the App.
"""

from __future__ import annotations

from dataclasses import replace

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.lazy import Lazy
from textual.widgets import Checkbox, DataTable, Input, Select, Static, TabbedContent, TabPane

from roofline.models.errors import ModelInputError
from roofline.models.history import METRIC_LABELS
from roofline.presets.loader import PresetCatalog
from roofline.tui.explorer.actions import VIEWS, bindings
from roofline.tui.explorer.charts import (
    BatchSweepChart,
    ContextSweepChart,
    HistoryGrowthChart,
    HistoryRidgeChart,
    MemoryChart,
    RooflineChart,
)
from roofline.tui.explorer.commands import ScenarioCommands
from roofline.tui.explorer.field_editing import FieldEditing
from roofline.tui.explorer.field_status import FieldProblems
from roofline.tui.explorer.headline import Headline, Verdict, WrappedText
from roofline.tui.explorer.live_counters import LiveCounters
from roofline.tui.explorer.ops_table import OpsTable
from roofline.tui.explorer.panes import BatchingPane, HardwarePane, ViewBody, WorkloadPane
from roofline.tui.explorer.scenario_actions import ScenarioActions
from roofline.tui.explorer.serving_view import ServingScreen, serving_tab_pane
from roofline.tui.explorer.view_drawing import ViewDrawing
from roofline.tui.inputs.form import FormError, ScenarioForm, build_scenario
from roofline.tui.inputs.limits import FIELD_LIMITS
from roofline.tui.inputs.registry import FORM_FIELDS
from roofline.tui.perf.switch import explorer_screen_base
from roofline.tui.views.results import Ceiling, ExplorerResults, compute_results

NARROW_WIDTH = 100
SHORT_HEIGHT = 36  # below this the History view scrolls its charts instead of squashing them
COMPARE_DEFAULT = ("h100-sxm", "h200", "b200", "mi300x", "a100-sxm4-80gb", "l40s")
LAZY_VIEWS = frozenset({"ops", "compare", "history", "serving"})
# keys that type text while a field has focus: shown dimmed in the footer then (escape leaves the field)
_TYPED_IN_FIELDS = frozenset({"scale_batch", "scale_prompt", "pin_baseline", "toggle_ceilings", "toggle_inputs",
                              "compare_remove", "compare_sort", "explain_gap", "show_view", "toggle_live"})


class ExplorerScreen(FieldEditing, ServingScreen, ScenarioActions, LiveCounters, ViewDrawing, explorer_screen_base()):
    """Three input panes, the headline numbers and eight views over one scenario."""

    BINDINGS = bindings("explorer")
    COMMANDS = {ScenarioCommands}

    def __init__(self, catalog: PresetCatalog, form: ScenarioForm | None = None,
                 shown_context: int | None = None, *, detect_hardware: bool = False) -> None:
        super().__init__(id="_default")
        self.detect_hardware = detect_hardware  # probe for local GPUs once mounted and open on them
        self.catalog = catalog
        self.form = form or ScenarioForm()
        self.shown_context = shown_context
        self.ceiling = Ceiling.SPEC
        self.results: ExplorerResults | None = None
        self.baseline: ExplorerResults | None = None
        self.compare_ids: list[str] = [h for h in COMPARE_DEFAULT if h in catalog.hardware]
        self.problems = FieldProblems()
        self._ready_views: set[str] = set()  # lazily mounted views that are in the DOM
        self._widgets: dict = {}
        self.seen_text: dict[str, str] = {}  # field -> the last text its Changed message brought
        self._last_accepted: dict = {}  # field -> (text last accepted, the value before that entry began)

    achievable = property(lambda self: bool(self.ceiling), doc="True when the achievable ceilings are chosen")
    invalid_fields = property(lambda self: self.problems.invalid, doc="field -> its status message, latest last")
    # ---- layout --------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            with VerticalScroll(id="inputs"):
                yield Static(id="input-status", markup=False)  # narrow terminals: field problems where the fields are
                yield HardwarePane(self.catalog, self.form)
                yield WorkloadPane(self.catalog, self.form)
                yield BatchingPane(self.form)
            with Vertical(id="results"):
                # what is on screen, one line (views/summary.py): over the results, not a Textual Header (whose
                # title change lays the whole screen out again) and not across the inputs (a key would repaint them)
                yield Static(id="scenario-line", markup=False)
                yield Headline(id="headline")
                yield Verdict(id="verdict")
                yield WrappedText(id="memory-bar")
                yield Static(id="status", markup=False)
                with TabbedContent(id="views", initial="roofline"):
                    with TabPane("1 Roofline", id="roofline"):
                        yield RooflineChart(id="roofline-chart")
                        yield Static(id="live-status", markup=False)
                    with TabPane("2 Batch", id="batch"):
                        yield BatchSweepChart(id="batch-chart")
                    with TabPane("3 Context", id="context"):
                        yield ContextSweepChart(id="context-chart")
                    with TabPane("4 Memory", id="memory"):
                        yield MemoryChart(id="memory-chart")
                    # Views that start hidden are mounted just after the first frame (start-up time)
                    with TabPane("5 Ops", id="ops"), Lazy(ViewBody("ops")):
                        yield Static(id="ops-caption", markup=False)  # which decode step, what is per op
                        yield OpsTable(id="ops-table")
                        # a few lines that change on every keystroke: drawn as the verdict is, not as a Static
                        yield WrappedText("select an op to see its formulas", id="op-formula")
                    with TabPane("6 Compare", id="compare"), Lazy(ViewBody("compare")):
                        yield DataTable(id="compare-table", cursor_type="row", zebra_stripes=True)
                        yield Static(id="compare-caption", markup=False)  # the sort, and what $/Mtok counts
                    with TabPane("7 History", id="history"), Lazy(ViewBody("history")):
                        with Horizontal(id="history-controls"):
                            yield Select([(name, m) for m, name in METRIC_LABELS.items()], value="bf16",
                                         allow_blank=False, id="history-metric", compact=True)
                            vendors = sorted({hw.vendor for hw in self.catalog.hardware.values()})
                            yield Select([("all vendors", "all"), *((Text(v), v) for v in vendors)], value="all",
                                         allow_blank=False, id="history-vendor", compact=True)
                        yield HistoryGrowthChart(id="history-growth")
                        yield HistoryRidgeChart(id="history-ridge")
                        yield Static(id="history-callout", markup=False)
                    yield serving_tab_pane()
        from roofline.tui.perf.switch import footer_class

        # compact, and the palette key among the others rather than docked over them at narrow widths
        yield footer_class()(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self._composed = True
        self.apply_layout_class(self.app.size.width, self.app.size.height)
        self.recompute()
        if self.detect_hardware:
            self.detect_local_hardware()

    def _w(self, selector, expect_type=None):
        """query_one, remembered: every widget here lives as long as the screen (queries walk the DOM)."""
        if selector not in self._widgets:
            self._widgets[selector] = (self.query_one(selector) if expect_type is None
                                       else self.query_one(selector, expect_type))
        return self._widgets[selector]

    def apply_layout_class(self, width: int, height: int) -> None:
        """Narrow and short layouts (the App calls this on every resize, also under a dialog)."""
        if not getattr(self, "_composed", False):
            return  # on_mount applies it
        self.set_class(width < NARROW_WIDTH, "-narrow")
        self._w("#headline", Headline).compact = width < NARROW_WIDTH  # one line per number instead of digits
        self.set_class(height < SHORT_HEIGHT, "-short")

    @on(ViewBody.Ready)
    def _view_body_ready(self, event: ViewBody.Ready) -> None:
        """A lazily mounted view is in the DOM: set it up, and draw it if it is already showing."""
        view = event.view
        self._ready_views.add(view)
        if self._w("#views", TabbedContent).active == view:
            self.draw_view(view)

    # ---- the form ------------------------------------------------------------------------------
    def set_form(self, form: ScenarioForm) -> None:
        if form != self.form:
            self.form = form
            self.recompute()

    def set_field(self, field: str, value) -> None:
        """Set one form field (palette, keys) and mirror it in its widget."""
        self._sync_widget(field, value)
        self.set_form(replace(self.form, **{field: value}))

    def show_form(self, form: ScenarioForm) -> None:
        """Make a whole form current, every input's widget showing its value (overrides and price included)."""
        for field in FORM_FIELDS:
            self._sync_widget(field, getattr(form, field))
        self.set_form(form)

    @on(Select.Changed, "#hardware_id, #model_ref, #weights, #activations, #kv, #engine, #topology")
    def _select_changed(self, event: Select.Changed) -> None:
        field = event.select.id or ""
        value = event.value
        if field in ("weights", "activations", "topology") and value == "auto":
            value = None
        self.set_form(replace(self.form, **{field: value}))

    @on(Checkbox.Changed)
    def _checkbox_changed(self, event: Checkbox.Changed) -> None:
        if event.checkbox.id == "flash_attention":
            self.set_form(replace(self.form, flash_attention=event.value))
        elif event.checkbox.id == "achievable":
            self.set_ceiling(Ceiling.ACHIEVABLE if event.value else Ceiling.SPEC)

    def set_ceiling(self, ceiling: Ceiling) -> None:
        if ceiling is not self.ceiling:
            self.ceiling = ceiling
            box = self._w("#achievable", Checkbox)
            with box.prevent(Checkbox.Changed):
                box.value = bool(ceiling)
            self.redraw()

    # ---- computing -----------------------------------------------------------------------------
    def recompute(self) -> None:
        """Rebuild the scenario from the form; keep the last good one on screen if it fails."""
        from roofline.tui.perf.switch import hold_collection

        hold_collection(self.app)  # palette commands, typing and workers come this way too
        try:
            scenario = build_scenario(self.form, self.catalog)
            results = compute_results(scenario, self.shown_context)
            results.carry_over(self.results)  # a batch change keeps the batch sweep (it does not depend on it)
        except (FormError, ModelInputError) as err:
            self._mark_invalid(err.field, err.message)
            return
        except (ArithmeticError, ValueError) as err:  # a combination no check anticipated: keep the last good
            self._show_status(f"could not compute this scenario ({err}); showing the last good one")
            return
        for field in self.problems.settled_by_model():
            self._clear_invalid(field)  # the model accepted the scenario: its complaints are settled
        if not self.problems.invalid:
            self._show_status()
        self.results = results
        self.redraw()

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self.draw_view(event.pane.id or "")

    # ---- keys ----------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple) -> bool | None:
        """While a field has focus the keys that type text belong to it and are shown dimmed (None)."""
        focused = self.focused
        if action in _TYPED_IN_FIELDS and (isinstance(focused, Input) or (
                focused is not None and focused.check_consume_key("plus", "+"))):
            return None  # typed into a field or a select's search (they take printable keys)
        return True

    def on_key(self, event: events.Key) -> None:
        """Arrows on the Ops and Compare views move the table's cursor at once (no click or tab first)."""
        if event.key not in ("up", "down", "pageup", "pagedown", "home", "end") or isinstance(self.focused, Input):
            return
        active = self._w("#views", TabbedContent).active
        target = {"ops": "#ops-table", "compare": "#compare-table"}.get(active)
        if target is None or active not in self._ready_views or self.focused is self._w(target):
            return
        self._w(target).focus()
        self.app.simulate_key(event.key)  # after the focus change: the table's own binding moves its cursor
        event.stop()

    def action_scale_batch(self, factor: float) -> None:
        self.set_field("batch", max(1, min(int(FIELD_LIMITS["batch"][1]), int(self.form.batch * factor))))

    def action_scale_prompt(self, factor: float) -> None:
        self.set_field("prompt_tokens",
                       max(1, min(int(FIELD_LIMITS["prompt_tokens"][1]), int(self.form.prompt_tokens * factor))))

    def action_show_view(self, view: str) -> None:
        if view in VIEWS:
            self._w("#views", TabbedContent).active = view

    def action_toggle_inputs(self) -> None:
        """Narrow terminals show inputs or results; wide ones can hide the inputs for a bigger chart."""
        self.toggle_class("-inputs-toggled")
        if self.has_class("-narrow") and self.has_class("-inputs-toggled"):
            self._w("#hardware_id").focus()

    def action_toggle_ceilings(self) -> None:
        self.set_ceiling(self.ceiling.toggled())

    def action_pin_baseline(self) -> None:
        """Pin the scenario as a baseline; pressed again on the pinned scenario, unpin."""
        if self.results is None:
            return
        if self.baseline is not None and self.baseline.scenario == self.results.scenario:
            self.action_clear_baseline()
            self.notify("baseline unpinned")
            return
        self.baseline = self.results
        self.notify("baseline pinned: numbers now show the change against it (p again on it to unpin)")
        self.redraw()

    def action_clear_baseline(self) -> None:
        self.baseline = None
        self.redraw()

    def action_compare_add(self) -> None:
        if self.results is not None and self.results.scenario.hardware.id not in self.compare_ids:
            self.compare_ids.append(self.results.scenario.hardware.id)
        self.action_show_view("compare")

    def action_compare_remove(self) -> None:
        """Drop the highlighted device from the Compare view (the current hardware always stays)."""
        if self._w("#views", TabbedContent).active != "compare" or "compare" not in self._ready_views:
            return
        table = self._w("#compare-table", DataTable)
        if not table.row_count:
            return
        hw_id = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        if hw_id in self.compare_ids:
            self.compare_ids.remove(hw_id)
            self.draw_view("compare")

    def action_leave_field(self) -> None:
        """Escape: leave the field being typed in (its keys work again); in talk mode, back to the slides."""
        if isinstance(self.focused, Input | Select):
            self.set_focus(None)
            return
        self.app.back_to_slides()
