"""The explorer's screen: it owns the form, the ceiling choice, the baseline and the compare list, recomputes on
every change and hands one :class:`~roofline.tui.views.state.ExplorerState` down to the inputs panel and the results
pane, whose widgets draw themselves from it.

State down, messages up: the panel and the views post tui/messages.py's messages; nothing below calls the screen or
the App, and the screen tells the App by message too (``BackToSlides``).
"""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Static

from roofline.models.errors import ModelInputError
from roofline.presets.loader import PresetCatalog
from roofline.tui import messages as m
from roofline.tui.actions import bindings
from roofline.tui.explorer import keys, scenario_files
from roofline.tui.explorer.commands import ScenarioCommands
from roofline.tui.explorer.field_status import FieldProblems, StatusLines
from roofline.tui.explorer.inputs_panel import InputsPanel
from roofline.tui.explorer.live_status import LiveStatus
from roofline.tui.explorer.results_pane import ResultsPane
from roofline.tui.explorer.serving_numbers import ServingNumbers
from roofline.tui.explorer.summary_widgets import ResultsHeadline
from roofline.tui.inputs.form import FormError, ScenarioForm, build_scenario
from roofline.tui.inputs.registry import FORM_FIELDS, SERVING_INPUTS, input_for_model_error
from roofline.tui.perf import switch
from roofline.tui.views.results import Ceiling, ExplorerResults, compute_results
from roofline.tui.views.state import ExplorerState

NARROW_WIDTH = 100
SHORT_HEIGHT = 36  # below this the History view scrolls its charts instead of squashing them
COMPARE_DEFAULT = ("h100-sxm", "h200", "b200", "mi300x", "a100-sxm4-80gb", "l40s")


class ExplorerScreen(switch.explorer_screen_base()):
    """Three input panes, the headline numbers and the registry's views over one scenario."""

    BINDINGS = bindings("explorer")
    COMMANDS = {ScenarioCommands}

    def __init__(self, catalog: PresetCatalog, form: ScenarioForm | None = None,
                 shown_context: int | None = None, *, detect_hardware: bool = False,
                 engine_url: str | None = None, measured_runs: tuple = ()) -> None:
        super().__init__(id="_default")
        self.catalog, self.form, self.shown_context = catalog, form or ScenarioForm(), shown_context
        self.detect_hardware = detect_hardware  # probe for local GPUs once mounted and open on them
        self.ceiling, self.baseline, self.compare_sort = Ceiling.SPEC, None, None
        self.compare_ids: tuple[str, ...] = tuple(h for h in COMPARE_DEFAULT if h in catalog.hardware)
        self.live_points: tuple[tuple[float, float], ...] = ()
        self.engine_url, self.measured_runs = engine_url, measured_runs  # the serving box's engine
        self.state: ExplorerState | None = None
        self.problems, self.serving_numbers = FieldProblems(), ServingNumbers()

    results = property(lambda self: self.state.results if self.state else None, doc="the results on screen")
    serving = property(lambda self: self.state.serving if self.state else None, doc="the serving numbers shown")
    achievable = property(lambda self: self.ceiling.achievable, doc="the achievable ceilings chosen")
    invalid_fields = property(lambda self: self.problems.invalid, doc="field -> its status message, latest last")
    live_trail = property(lambda self: self.live.trail, doc="the live counters' points while they are on")
    inputs = cached_property(lambda self: self.query_one(InputsPanel))
    pane = cached_property(lambda self: self.query_one(ResultsPane))
    live = cached_property(lambda self: self.query_one(LiveStatus))
    status = cached_property(lambda self: StatusLines(self.problems, self.inputs, self.query_one("#status", Static)))

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            yield InputsPanel(self.catalog, self.form)
            yield ResultsPane(self.catalog)
        # compact, and the palette key among the others rather than docked over them at narrow widths
        yield switch.footer_class()(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self._layout_for(self.app.size.width, self.app.size.height)
        self.recompute()
        if self.detect_hardware:
            scenario_files.detect_local_hardware(self)

    def apply_layout_class(self, width: int, height: int) -> None:
        """Narrow and short layouts (the App calls this on every resize, also under a dialog)."""
        if self.is_mounted:  # else on_mount applies it
            self._layout_for(width, height)

    def _layout_for(self, width: int, height: int) -> None:
        self.set_class(width < NARROW_WIDTH, "-narrow")
        self.query_one(ResultsHeadline).compact = width < NARROW_WIDTH  # one line per number instead of digits
        self.set_class(height < SHORT_HEIGHT, "-short")

    def show_form(self, form: ScenarioForm, fields=FORM_FIELDS) -> None:
        """Make a form current, the fields' widgets showing its values (all of them unless ``fields`` names some)."""
        for name in fields:
            self.inputs.show_value(name, getattr(form, name))
        self.inputs.form = form
        if form != self.form:
            self.form = form
            self.recompute()

    def set_field(self, field: str, value) -> None:
        """Set one form field (palette, keys) and show it in its widget."""
        self.show_form(replace(self.form, **{field: value}), (field,))

    def recompute(self) -> None:
        """Rebuild the scenario from the form; keep the last good one on screen if it fails."""
        switch.hold_collection(self.app)  # palette commands, typing and workers come this way too
        try:
            results = compute_results(build_scenario(self.form, self.catalog), self.shown_context)
            results.carry_over(self.results)  # a batch change keeps the batch sweep (it does not depend on it)
        except (FormError, ModelInputError) as err:
            return self._refuse(err.field, err.message)
        except (ArithmeticError, ValueError) as err:  # a combination no check anticipated: keep the last good
            return self.status.show(f"could not compute this scenario ({err}); showing the last good one")
        self.status.settle(self.problems.settled_by_model())  # the model took the scenario: complaints settled
        self.redraw(results)

    def redraw(self, results: ExplorerResults | None = None) -> None:
        """A new state of the results (the last ones unless given) and the choices, handed down."""
        results = results or self.results
        if results is None:
            return
        serving, problem = (self.state.serving if self.state else None), ""
        if self.form.serving or self.pane.active == "serving":  # computed once per change of what they need
            outcome = self.serving_numbers.update(self.form, results, self.ceiling, self.baseline)
            serving, problem = outcome.results, outcome.problem
            if outcome.refused is not None:
                self._refuse(input_for_model_error(outcome.refused.field), outcome.refused.message)
            elif not problem:
                self.status.settle([f for f in self.problems.settled_by_model() if f in SERVING_INPUTS])
        self.state = ExplorerState(form=self.form, results=results, catalog=self.catalog, ceiling=self.ceiling,
                                   baseline=self.baseline, serving=serving, serving_problem=problem,
                                   compare_ids=self.compare_ids, compare_sort=self.compare_sort,
                                   live_points=self.live_points, engine_url=self.engine_url,
                                   measured_runs=self.measured_runs)
        self.set_class(self.form.serving, "-serving")  # the Batching pane shows the serving fields
        self.inputs.state = self.live.state = self.pane.state = self.state

    def _refuse(self, field: str, message: str, *, typed: bool = False) -> None:
        good = self.shown_context if field == "shown_context" else getattr(self.form, field, None)
        self.status.refuse(field, message, typed=typed, last_good=good)

    def set_ceiling(self, ceiling: Ceiling) -> None:
        if ceiling is not self.ceiling:
            self.ceiling = ceiling
            self.inputs.show_value("achievable", ceiling.achievable)
            self.redraw()

    # ---- messages from below: each changes one choice, then a new state goes down ---------------------------------
    def on_form_changed(self, msg: m.FormChanged) -> None:
        self.show_form(replace(self.form, **msg.values), ())

    def on_field_refused(self, msg: m.FieldRefused) -> None:
        self._refuse(msg.field, msg.message, typed=msg.typed)

    def on_field_accepted(self, msg: m.FieldAccepted) -> None:
        self.status.accepted(msg.field)

    def on_ceiling_changed(self, msg: m.CeilingChanged) -> None:
        self.set_ceiling(Ceiling.ACHIEVABLE if msg.achievable else Ceiling.SPEC)

    def on_context_changed(self, msg: m.ContextChanged) -> None:
        self.shown_context = msg.shown_context
        self.recompute()

    def on_compare_changed(self, msg: m.CompareChanged) -> None:
        self.compare_ids = msg.compare_ids
        self.redraw()

    def on_sort_changed(self, msg: m.SortChanged) -> None:
        self.compare_sort = msg.sort
        self.redraw()

    def on_live_points(self, msg: m.LivePoints) -> None:
        self.live_points = msg.points
        self.redraw()

    def on_view_shown(self, msg: m.ViewShown) -> None:
        if msg.view == "serving":
            self.redraw()  # with the serving numbers

    # ---- keys: what each does is in keys.py -----------------------------------------------------------------------
    check_action = keys.check_action
    on_key = keys.arrows_into_tables
    action_scale_batch, action_scale_prompt = keys.scale_batch, keys.scale_prompt
    action_show_view, action_toggle_inputs = keys.show_view, keys.toggle_inputs
    action_toggle_ceilings, action_pin_baseline, action_clear_baseline = (keys.toggle_ceilings, keys.pin_baseline,
                                                                          keys.clear_baseline)
    action_compare_add, action_compare_remove = keys.compare_add, keys.compare_remove
    action_compare_sort = keys.compare_sort
    action_explain_gap, action_toggle_live, action_leave_field = keys.explain_gap, keys.toggle_live, keys.leave_field
    action_toggle_engine = keys.toggle_engine
    action_save_scenario, action_load_scenario = scenario_files.ask_to_save, scenario_files.ask_to_load
    load_scenario_file = scenario_files.load_scenario_file
