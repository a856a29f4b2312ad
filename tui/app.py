"""The explorer: three input panes, headline numbers and chart views, recomputed on every change."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.lazy import Lazy
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Checkbox, DataTable, Header, Input, Select, Static, TabbedContent, TabPane

from roofline.models.errors import ModelInputError
from roofline.models.history import METRIC_LABELS
from roofline.presets import load_catalog
from roofline.presets.loader import PresetCatalog, PresetFileError

from roofline.tui.explorer.charts import (
    BatchSweepChart,
    ContextSweepChart,
    HistoryGrowthChart,
    HistoryRidgeChart,
    MemoryChart,
    RooflineChart,
)
from roofline.tui.explorer.commands import ScenarioCommands
from roofline.tui.views.explain import explain_op
from roofline.tui.views.results import ExplorerResults, compute_results
from roofline.tui.perf.footer import LeanFooter
from roofline.tui.views.formatting import duration, flop_per_byte, gib, si
from roofline.tui.perf.gc_pacing import CollectionPacer
from roofline.tui.explorer.headline import Headline, Verdict, WrappedText
from roofline.tui.views.history_charts import callout_lines
from roofline.tui.inputs.limits import FIELD_LIMITS, parse_number
from roofline.tui.explorer.ops_table import OpsTable
from roofline.tui.explorer.panes import FIELD_LABELS, BatchingPane, HardwarePane, ViewBody, WorkloadPane
from roofline.tui.perf.partial_paint import ClusteredScreen
from roofline.tui.perf.quiet_update import set_text
from roofline.tui.inputs.form import FormError, ScenarioForm, build_scenario
from roofline.tui.inputs.file_values import form_from_file_values, form_to_file_values
from roofline.tui.views.chart_data import CHART_VIEWS, chart_args, history_for, live_points_log10

NARROW_WIDTH = 100
SHORT_HEIGHT = 36  # below this the History view scrolls its charts instead of squashing them
# what an empty optional field stands for, as the status line says it ("showing peak TFLOP/s from the preset")
_UNSET_TEXT = {"mem_bw_override_gb_per_s": "from the preset", "peak_override_tflops": "from the preset",
               "capacity_override_gib": "from the preset", "price_per_device_hour": "none",
               "shown_context": "at the mean of the generation"}
LIVE_GPU_INDEX = 0  # the live point shows one device; with TP every rank runs the same kernels
STARTUP_DETECT_TIMEOUT_S = 3.0  # per source; detection runs in a worker, the screen is up meanwhile
COMPARE_DEFAULT = ("h100-sxm", "h200", "b200", "mi300x", "a100-sxm4-80gb", "l40s")
LAZY_VIEWS = frozenset({"ops", "compare", "history"})
VIEWS = ("roofline", "batch", "context", "memory", "ops", "compare", "history")
OPS_HEADER = ("phase", "op", "count", "FLOPs", "weights", "activations", "KV read", "KV write", "FLOP/B",
              "limited by", "time", "share")
OPTIONAL_FIELDS = {"mem_bw_override_gb_per_s", "peak_override_tflops", "capacity_override_gib",
                   "price_per_device_hour", "shown_context"}


class RooflineApp(App):
    """Live roofline explorer over :mod:`roofline.models`."""

    CSS_PATH = "roofline.tcss"
    TITLE = "roofline explorer"
    COMMANDS = App.COMMANDS | {ScenarioCommands}
    # The batch and context keys are priority bindings: the app takes them as they arrive instead of after the key
    # has gone down to the focused widget and bubbled back up through its containers (four message hops, about
    # 0.6 ms of a keystroke). check_action hands them on, as before, to a widget that types them (a field, a
    # select's search) and leaves them to any screen on top of the explorer's.
    BINDINGS = [
        Binding("plus,equals_sign", "scale_batch(2)", "batch x2", id="batch.double", priority=True),
        Binding("minus", "scale_batch(0.5)", "batch /2", id="batch.halve", priority=True),
        Binding("right_square_bracket", "scale_prompt(2)", "ctx x2", tooltip="double the prompt (context)",
                id="context.double", priority=True),
        Binding("left_square_bracket", "scale_prompt(0.5)", "ctx /2", tooltip="halve the prompt (context)",
                id="context.halve", priority=True),
        Binding("p", "pin_baseline", "baseline", tooltip="pin the scenario as a baseline", id="baseline.pin"),
        Binding("a", "toggle_achievable", "ceilings", tooltip="spec or achievable ceilings", id="ceilings.toggle"),
        Binding("i", "toggle_inputs", "inputs", id="inputs.toggle"),
        Binding("x", "compare_remove", "remove from compare", show=False, id="compare.remove"),
        Binding("g", "explain_gap", "gap", tooltip="bound vs expected, term by term", id="gap.explain"),
        Binding("l", "toggle_live", "live", tooltip="live GPU counters on the roofline", id="live.toggle"),
        Binding("question_mark", "help", "keys", id="help"),
        Binding("ctrl+s", "screenshot_svg", "svg", tooltip="save an SVG screenshot here", id="screenshot"),
        Binding("ctrl+p", "command_palette", "palette", id="palette"),
        Binding("q", "quit", "quit", id="quit"),
        Binding("escape", "back_to_slides", "back to slides", show=False, id="slides.back"),
        *[Binding(str(i + 1), f"show_view('{v}')", v, show=False, id=f"view.{v}") for i, v in enumerate(VIEWS)],
    ]

    # var, not reactive: a reactive on the App repaints the whole screen on every change; the
    # watchers below redraw exactly the widgets that depend on the value.
    form: var[ScenarioForm] = var(ScenarioForm, init=False)
    achievable: var[bool] = var(False, init=False)

    def get_default_screen(self) -> Screen:
        """The explorer's screen paints each cluster of changes on its own (see partial_paint)."""
        return ClusteredScreen(id="_default")

    def __init__(self, form: ScenarioForm | None = None, catalog: PresetCatalog | None = None,
                 shown_context: int | None = None, deck=None, detect_hardware: bool = False) -> None:
        super().__init__()
        self.detect_hardware = detect_hardware  # probe for local GPUs and open on them (no --hardware given)
        self.deck = deck  # a talk deck (roofline present): slides over the explorer
        self.present_screen = None
        self.catalog = catalog or load_catalog()
        self.set_reactive(RooflineApp.form, form or ScenarioForm())
        self.shown_context = shown_context
        self.results: ExplorerResults | None = None
        self.baseline: ExplorerResults | None = None
        self.compare_ids: list[str] = [h for h in COMPARE_DEFAULT if h in self.catalog.hardware]
        self.invalid_fields: dict[str, str] = {}  # field -> the status line's message, latest last
        self._typed_invalid: set[str] = set()  # fields whose text is not an acceptable number
        self._ready_views: set[str] = set()  # lazily mounted views that are in the DOM
        self.live_trail = None  # gpu.live.Trail: the running workload's last points while live counters are on
        self._collection_pacer = CollectionPacer()  # garbage collection waits for the frame (gc_pacing)

    # ---- layout --------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="body"):
            with VerticalScroll(id="inputs"):
                yield Static(id="input-status")  # narrow terminals: field problems where the fields are
                yield HardwarePane(self.catalog, self.form)
                yield WorkloadPane(self.catalog, self.form)
                yield BatchingPane(self.form)
            with Vertical(id="results"):
                yield Headline(id="headline")
                yield Verdict(id="verdict")
                yield WrappedText(id="memory-bar")
                yield Static(id="status")
                with TabbedContent(id="views", initial="roofline"):
                    with TabPane("1 Roofline", id="roofline"):
                        yield RooflineChart(id="roofline-chart")
                        yield Static(id="live-status")
                    with TabPane("2 Batch", id="batch"):
                        yield BatchSweepChart(id="batch-chart")
                    with TabPane("3 Context", id="context"):
                        yield ContextSweepChart(id="context-chart")
                    with TabPane("4 Memory", id="memory"):
                        yield MemoryChart(id="memory-chart")
                    # Views that start hidden are mounted just after the first frame (start-up time)
                    with TabPane("5 Ops", id="ops"), Lazy(ViewBody("ops")):
                        yield OpsTable(id="ops-table")
                        # a few lines that change on every keystroke: drawn as the verdict is, not as a Static
                        yield WrappedText("select an op to see its formulas", id="op-formula")
                    with TabPane("6 Compare", id="compare"), Lazy(ViewBody("compare")):
                        yield DataTable(id="compare-table", cursor_type="row", zebra_stripes=True)
                    with TabPane("7 History", id="history"), Lazy(ViewBody("history")):
                        with Horizontal(id="history-controls"):
                            yield Select([(label, m) for m, label in METRIC_LABELS.items()], value="bf16",
                                         allow_blank=False, id="history-metric", compact=True)
                            vendors = sorted({hw.vendor for hw in self.catalog.hardware.values()})
                            yield Select([("all vendors", "all"), *((v, v) for v in vendors)], value="all",
                                         allow_blank=False, id="history-vendor", compact=True)
                        yield HistoryGrowthChart(id="history-growth")
                        yield HistoryRidgeChart(id="history-ridge")
                        yield Static(id="history-callout")
        # compact, and the palette key among the others rather than docked over them at narrow widths
        yield LeanFooter(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self._explorer_screen().call_after_each_frame(self._collection_pacer.frame_painted)
        self._apply_layout_class(self.size.width, self.size.height)
        self.recompute()
        if self.detect_hardware:
            self.run_worker(self._detect_local_hardware, thread=True, group="detect", exit_on_error=False)
        if self.deck is not None:
            from roofline.tui.talk.screen import PresentScreen, check_deck

            self.present_screen = PresentScreen(self.deck, check_deck(self.deck, self.catalog), self.catalog)
            # installed, so that opening the explorer (which pops it) does not remove it: Esc pushes it back, and a
            # removed screen would come back with its update timer stopped, never painted again
            self.install_screen(self.present_screen, name="present")
            self.push_screen(self.present_screen)
        if self.catalog.warnings:
            shown = "\n".join(str(w) for w in self.catalog.warnings[:5])
            self.notify(f"preset warnings:\n{shown}", severity="warning", timeout=15)
        if self.catalog.errors:  # broken user presets were skipped; say which and why
            shown = "\n".join(str(e) for e in self.catalog.errors[:5])
            more = f"\n... and {len(self.catalog.errors) - 5} more" if len(self.catalog.errors) > 5 else ""
            self.notify(f"skipped {len(self.catalog.errors)} preset file(s):\n{shown}{more}", severity="warning",
                        timeout=15)

    async def on_event(self, event: events.Event) -> None:
        """Keys and clicks reach the app first: from here to the frame that shows their effect, garbage
        collection waits (tui/gc_pacing.py)."""
        if isinstance(event, (events.Key, events.MouseDown, events.MouseUp, events.Click)):
            self._collection_pacer.hold()
        await super().on_event(event)

    def on_unmount(self) -> None:
        self._collection_pacer.release()  # never leave collection off behind us

    # ---- the box we run on -----------------------------------------------------------------------
    def _detect_local_hardware(self) -> None:
        """Thread worker: find local GPUs (bounded by a short timeout), then switch to them on the UI thread."""
        from roofline.tui.probe.detect import detect_accelerators

        form_before = self.form
        detection = detect_accelerators(timeout_s=STARTUP_DETECT_TIMEOUT_S, available_ids=list(self.catalog.hardware))
        self.call_from_thread(self._apply_detection, detection, form_before)

    def _apply_detection(self, detection, form_before: ScenarioForm) -> None:
        from roofline.tui.probe.match import format_gib

        if not detection.devices:
            return  # nothing found: the embedded default stays, without noise
        group = next((g for g in detection.groups if g.preset_id == detection.preset_id), detection.groups[0])
        found = f"{group.count} x {group.name} ({format_gib(group.memory_bytes)}) via {detection.source}"
        if detection.preset_id is None:
            self.notify(f"found {found}: no preset ({detection.preset_reason})", severity="warning", timeout=10)
            return
        if self.form != form_before:  # the user has already changed something: do not move under them
            self.notify(f"found {found} (preset {detection.preset_id}); not switched, the scenario was edited")
            return
        tp = min(detection.preset_count, int(FIELD_LIMITS["tp"][1]))
        candidate = replace(self.form, hardware_id=detection.preset_id, tp=tp)
        try:
            build_scenario(candidate, self.catalog)
        except (FormError, ModelInputError) as err:
            candidate = replace(self.form, hardware_id=detection.preset_id)
            note = f"TP {tp} does not fit this model ({err}), so TP 1"
        else:
            note = f"TP {tp}" if tp > 1 else "one device"
        self._show_form(candidate)
        self.notify(f"detected {found}: showing {detection.preset_id}, {note}", timeout=8)

    def view_body_ready(self, view: str) -> None:
        """A lazily mounted view is in the DOM: set it up, and draw it if it is already showing."""
        self._ready_views.add(view)
        if view == "compare":
            self._w("#compare-table", DataTable).add_columns(
                "device", "tok/s/seq", "tok/s total", "TTFT", "idle %", "fits", "max batch", "$/Mtok")
        if self._w("#views", TabbedContent).active == view:
            self._draw_view(view)

    def on_resize(self, event) -> None:
        self._apply_layout_class(event.size.width, event.size.height)

    def _explorer_screen(self) -> ClusteredScreen:
        """The explorer's own screen, at the bottom of the stack (dialogs and slides go on top of it)."""
        return self.screen_stack[0]

    def _apply_layout_class(self, width: int, height: int) -> None:
        # on the explorer's screen, not the one on top: a resize under a dialog must reach the explorer too
        screen = self._explorer_screen()
        screen.set_class(width < NARROW_WIDTH, "-narrow")
        self._w("#headline", Headline).compact = width < NARROW_WIDTH  # one line per number instead of digits
        screen.set_class(height < SHORT_HEIGHT, "-short")

    # ---- state changes -------------------------------------------------------------------------
    def watch_form(self, _old: ScenarioForm, _new: ScenarioForm) -> None:
        self.recompute()

    def watch_achievable(self, value: bool) -> None:
        self._w("#achievable", Checkbox).value = value
        self.redraw()

    def set_field(self, field: str, value) -> None:
        """Set one form field (used by the palette and key bindings) and mirror it in its widget."""
        self.form = replace(self.form, **{field: value})
        self._sync_widget(field, value)

    def _w(self, selector, expect_type=None):
        """query_one, remembered: every widget here lives as long as the app (queries walk the DOM)."""
        cache = self.__dict__.setdefault("_widget_cache", {})
        key = selector
        if key not in cache:
            cache[key] = self.query_one(selector) if expect_type is None else self.query_one(selector, expect_type)
        return cache[key]

    def _show_form(self, form: ScenarioForm) -> None:
        """Make a whole form current, its values mirrored in the input widgets."""
        for field in ("hardware_id", "model_ref", "weights", "activations", "kv", "batch", "prompt_tokens",
                      "output_tokens", "tp", "pp", "flash_attention", "kv_compression_ratio"):
            self._sync_widget(field, getattr(form, field))
        self.form = form

    def _field_widget(self, field: str):
        """The input widget for a form field, looked up once (DOM queries walk every node)."""
        cache = self.__dict__.setdefault("_field_widgets", {})
        if field not in cache:
            found = self.query(f"#{field}")
            cache[field] = found.first() if found else None
        return cache[field]

    def _sync_widget(self, field: str, value) -> None:
        w = self._field_widget(field)
        if w is None:
            return
        if isinstance(w, Select):
            if value is None and field in ("weights", "activations"):
                value = "auto"
            with w.prevent(Select.Changed):  # set_options also announces a change (to the first option)
                if value not in (v for _, v in w._options):  # a config.json path typed elsewhere
                    w.set_options([*((label, v) for label, v in w._options), (str(value), value)])
                w.value = value
        elif isinstance(w, Input):
            with w.prevent(Input.Changed):
                w.value = "" if value is None else str(value)
            w.remove_class("-invalid")
        elif isinstance(w, Checkbox):
            with w.prevent(Checkbox.Changed):
                w.value = bool(value)

    @on(Input.Changed)
    def _input_changed(self, event: Input.Changed) -> None:
        field = event.input.id or ""
        if field == "config_path":
            if not event.value.strip():
                self._clear_invalid(field)
            return
        if field not in FIELD_LIMITS:
            return
        try:
            value = None if not event.value.strip() and field in OPTIONAL_FIELDS else parse_number(field, event.value)
        except ValueError as err:
            self._mark_invalid(field, str(err), typed=True)
            return
        self._clear_invalid(field)
        if field == "shown_context":
            self.shown_context = value
            self.recompute()
        elif field == "price_per_device_hour":
            self.form = replace(self.form, price_per_device_hour=value)
        else:
            self.form = replace(self.form, **{field: value})

    @on(Input.Submitted, "#config_path")
    def _config_path_submitted(self, event: Input.Submitted) -> None:
        """Load a local config.json (or a folder with one); a path that does not load says why, and the model
        on screen stays."""
        from roofline.presets.loader import resolve_model

        path = event.value.strip()
        if not path:
            return
        try:
            resolve_model(path)
        except KeyError:
            self._mark_invalid("config_path", f"no config.json at {path!r}")
            return
        except PresetFileError as err:
            self._mark_invalid("config_path", str(err))
            return
        self._clear_invalid("config_path")
        self.set_field("model_ref", path)

    @on(Select.Changed)
    def _select_changed(self, event: Select.Changed) -> None:
        field = event.select.id or ""
        value = event.value
        if field in ("weights", "activations") and value == "auto":
            value = None
        if field in ("hardware_id", "model_ref", "weights", "activations", "kv"):
            self.form = replace(self.form, **{field: value})

    @on(Checkbox.Changed)
    def _checkbox_changed(self, event: Checkbox.Changed) -> None:
        if event.checkbox.id == "flash_attention":
            self.form = replace(self.form, flash_attention=event.value)
        elif event.checkbox.id == "achievable":
            self.achievable = event.value

    def _mark_invalid(self, field: str, message: str, *, typed: bool = False) -> None:
        """Show a field as invalid with its message; the screen keeps the last good scenario.

        ``typed``: the field's text is not an acceptable number (it stays invalid until its text changes); else
        the model refused the value (a later good scenario clears it)."""
        label = FIELD_LABELS.get(field, field.replace("_", " "))
        if typed and field in FIELD_LIMITS:
            good = self.shown_context if field == "shown_context" else getattr(self.form, field, None)
            shown = (_UNSET_TEXT.get(field, "none") if good is None
                     else f"{good:,}" if isinstance(good, int) else f"{good:,g}")
            suffix = f"showing {label} {shown}, the last good value"
        elif field == "config_path":
            suffix = "the model shown is unchanged"
        else:
            suffix = "showing the last good scenario"
        self.invalid_fields.pop(field, None)  # re-inserted: the latest problem is shown first
        self.invalid_fields[field] = f"{label}: {message} ({suffix})"
        if typed:
            self._typed_invalid.add(field)
        widget = self._field_widget(field)
        if widget is not None:
            widget.add_class("-invalid")
        self._show_status()

    def _clear_invalid(self, field: str) -> None:
        """The field is acceptable again: unmark it and show what else is still wrong, if anything."""
        self._typed_invalid.discard(field)
        widget = self._field_widget(field)
        if widget is not None:
            widget.remove_class("-invalid")
        if self.invalid_fields.pop(field, None) is not None:
            self._show_status()

    def _show_status(self, text: str | None = None) -> None:
        """The status line: ``text``, else the latest field problem (and how many more), else nothing."""
        if text is None and self.invalid_fields:
            latest = next(reversed(self.invalid_fields.values()))
            more = len(self.invalid_fields) - 1
            text = latest + (f"; {more} more field{'s' if more > 1 else ''} to fix" if more else "")
        for selector in ("#status", "#input-status"):
            set_text(self._w(selector, Static), text or "")
        self._w("#input-status", Static).set_class(not text, "-empty")  # no blank row above the inputs

    # ---- computing and drawing -----------------------------------------------------------------
    def recompute(self) -> None:
        """Rebuild the scenario from the form; keep the last good one on screen if it fails."""
        self._collection_pacer.hold()  # palette commands, typing and workers come this way too
        try:
            scenario = build_scenario(self.form, self.catalog)
            results = compute_results(scenario, self.shown_context)
            results.carry_over(self.results)  # a batch change keeps the batch sweep (it does not depend on it)
        except FormError as err:
            self._mark_invalid(err.field, err.message)
            return
        except ModelInputError as err:
            self._mark_invalid(err.field, err.message)
            return
        except (ArithmeticError, ValueError) as err:  # a combination no check anticipated: keep the last good
            self._show_status(f"could not compute this scenario ({err}); showing the last good one")
            return
        for field in [f for f in self.invalid_fields if f not in self._typed_invalid and f != "config_path"]:
            self._clear_invalid(field)  # the model accepted the scenario: its complaints are settled
        if not self.invalid_fields:
            self._show_status()
        self.results = results
        self.redraw()

    def redraw(self) -> None:
        r = self.results
        if r is None:
            return
        self._draw_inputs_summary(r)
        self._draw_headline(r)
        self._draw_view(self._w("#views", TabbedContent).active)

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self._draw_view(event.pane.id or "")

    def _draw_view(self, view: str) -> None:
        r = self.results
        if r is None or (view in LAZY_VIEWS and view not in self._ready_views):
            return  # a lazy view draws itself once mounted (view_body_ready)
        if view in CHART_VIEWS:
            chart = {"roofline": RooflineChart, "batch": BatchSweepChart, "context": ContextSweepChart,
                     "memory": MemoryChart}[view]
            args = chart_args(view, r, self.achievable, self.baseline)
            if view == "roofline":
                args = (*args, live_points_log10(self.live_trail))
            self._w(chart).show(*args)
        if view == "ops":
            self._draw_ops(r)
        elif view == "compare":
            self._draw_compare(r)
        elif view == "history":
            self._draw_history(r)

    def _draw_history(self, r: ExplorerResults) -> None:
        """Datacenter parts of the chosen vendors (and the selected device), vs the K20X baseline."""
        metric = self._w("#history-metric", Select).value
        data = history_for(self.catalog, r, metric, self._w("#history-vendor", Select).value)
        if data is None:
            self._w("#history-callout", Static).update(f"no device here has a {METRIC_LABELS[metric]} peak")
            return
        self._w("#history-growth", HistoryGrowthChart).show(data)
        self._w("#history-ridge", HistoryRidgeChart).show(data)
        self._w("#history-callout", Static).update("\n".join(callout_lines(data)))

    @on(Select.Changed, "#history-metric, #history-vendor")
    def _history_filter_changed(self, event: Select.Changed) -> None:
        event.stop()
        if self.results is not None and self._w("#views", TabbedContent).active == "history":
            self._draw_history(self.results)

    def _draw_inputs_summary(self, r: ExplorerResults) -> None:
        hw, m, c = r.scenario.hardware, r.scenario.model, r.spec
        ridge = flop_per_byte(c.ridge_flops_per_byte)
        set_text(self._w("#hardware-figures", Static),
            f"{si(hw.mem_bw_bytes_per_s, 'B/s')} | {c.compute_dtype} {si(c.matmul_flops_per_s, 'FLOP/s')}\n"
            f"{gib(hw.memory_capacity_bytes)} | ridge {ridge} FLOP/B")
        a = m.attention
        moe = f" | {m.moe.num_experts} experts, top-{m.moe.top_k}" if m.moe else ""
        set_text(self._w("#model-summary", Static),
            f"{m.params / 1e9:,.1f} B params, {m.active_params / 1e9:,.1f} B active\n"
            f"{m.num_layers} layers, {a.num_heads} heads, {a.num_kv_heads} KV heads"
            f"{' (MLA)' if a.is_mla else ''}{moe}")

    def _draw_headline(self, r: ExplorerResults) -> None:
        e = r.chosen(self.achievable)
        other = r.bound if self.achievable else r.expected
        base = self.baseline.chosen(self.achievable) if self.baseline else None

        def delta(now: float, before: float | None, unit: str = "") -> str:
            if before is None or before == 0:
                return ""
            return f"{100 * (now / before - 1):+.0f}%{unit} vs base"

        d, bd = e.decode, (base.decode if base else None)
        per_seq, total = d.tokens_per_s_per_seq, d.tokens_per_s
        headline = self._w("#headline", Headline)
        idle = d.phase.idle_core_pct
        idle_delta = "" if bd is None else f"{idle - bd.phase.idle_core_pct:+.1f} pt vs base"
        headline.show_all({
            "m-per-seq": (per_seq, f"{per_seq:,.1f}", delta(per_seq, bd and bd.tokens_per_s_per_seq)),
            "m-aggregate": (total, f"{total:,.1f}" if total < 1000 else f"{total:,.0f}",
                            delta(total, bd and bd.tokens_per_s)),
            "m-idle": (idle, f"{idle:.1f}", idle_delta),
            "m-ttft": (e.ttft_s * 1e3, f"{e.ttft_s * 1e3:,.1f}", delta(e.ttft_s, base and base.ttft_s)),
        })
        label = "achievable (expected)" if self.achievable else "spec (bound)"
        other_label = "spec bound" if self.achievable else "expected"
        crossover = r.compute_bound_batch(self.achievable)
        turn = "never turns compute-bound" if crossover is None else f"turns compute-bound at batch {crossover:,}"
        self._w("#verdict", Verdict).show(
            f"[b]{label}[/b]: decode is [b]{d.phase.limited_by}-bound[/b] "
            f"({d.phase.arithmetic_intensity_flops_per_byte:,.1f} FLOP/B vs ridge "
            f"{flop_per_byte(r.spec.ridge_flops_per_byte)}), {turn}; "
            f"{other_label}: {other.decode.tokens_per_s_per_seq:,.1f} tok/s/seq, TTFT {duration(other.ttft_s)}",
            markup=True)
        m = r.memory
        used, cap = m.per_device_bytes, m.capacity_bytes
        width = 30
        filled = min(width, round(width * used / cap)) if cap else width
        bar = "#" * filled + "." * (width - filled)
        verdict = "fits" if m.fits else "DOES NOT FIT"
        mem_bar = self._w("#memory-bar", WrappedText)
        mem_bar.set_class(not m.fits, "-overflow")
        mem_bar.show(f"memory/device [{bar}] {gib(used)} / {gib(cap)} {verdict}, max batch {m.max_batch:,}")

    def _draw_ops(self, r: ExplorerResults) -> None:
        """Fill the ops table (the cursor stays on the same op when it is still listed)."""
        from roofline.models.estimate import time_op

        c = r.achievable if self.achievable else r.spec
        rows: list[list[str]] = []
        keys: list[str] = []
        ops_in_order = []
        for ops in (r.prefill_ops, r.decode_ops):
            timed = [(op, time_op(op, c)) for op in ops]
            total = sum(op.count * float(t.time_s) for op, t in timed)
            for op, t in timed:
                ai = "-" if op.kind == "collective" else f"{float(op.arithmetic_intensity_flops_per_byte):,.1f}"
                rows.append([op.phase, op.name, str(op.count), si(float(op.flops), ""), si(float(op.weight_bytes), "B"),
                             si(float(op.activation_bytes), "B"), si(float(op.kv_read_bytes), "B"),
                             si(float(op.kv_write_bytes), "B"), ai, t.limited_by, duration(op.count * float(t.time_s)),
                             f"{100 * op.count * float(t.time_s) / total:.1f}%"])
                keys.append(f"{op.phase}/{op.name}")
                ops_in_order.append(op)
        self._op_rows = ops_in_order
        table = self._w("#ops-table", OpsTable)
        table.set_rows(list(OPS_HEADER), rows, keys)
        self._show_formula(table.cursor_row)  # the highlighted row's formula, with this scenario's numbers

    @on(OpsTable.RowHighlighted, "#ops-table")
    def _op_highlighted(self, event: OpsTable.RowHighlighted) -> None:
        self._show_formula(event.row)

    def _show_formula(self, row: int) -> None:
        rows = getattr(self, "_op_rows", [])
        if self.results is None or not 0 <= row < len(rows):
            return
        c = self.results.achievable if self.achievable else self.results.spec
        self._w("#op-formula", WrappedText).show(explain_op(rows[row], c, self.results.scenario.parallelism.pp))

    def _draw_compare(self, r: ExplorerResults) -> None:
        table = self._w("#compare-table", DataTable)
        table.clear()
        ids = list(dict.fromkeys([r.scenario.hardware.id, *self.compare_ids]))
        price = self.form.price_per_device_hour
        for hw_id in ids:
            try:
                s = build_scenario(replace(self.form, hardware_id=hw_id), self.catalog)
                other = compute_results(s, self.shown_context)
            except (FormError, ModelInputError) as err:
                table.add_row(hw_id, "-", "-", "-", "-", f"n/a: {err}", "-", "-", key=hw_id)
                continue
            e = other.chosen(self.achievable)
            cost = "-"
            if price:
                dollars_per_s = price * s.parallelism.devices / 3600
                cost = f"{dollars_per_s / e.output_tokens_per_s * 1e6:,.2f}"
            marker = "> " if hw_id == r.scenario.hardware.id else "  "
            table.add_row(marker + s.hardware.name, f"{e.decode.tokens_per_s_per_seq:,.1f}",
                          f"{e.decode.tokens_per_s:,.0f}", duration(e.ttft_s), f"{e.decode.phase.idle_core_pct:.1f}",
                          "yes" if other.memory.fits else "NO", f"{other.memory.max_batch:,}", cost, key=hw_id)

    # ---- actions -------------------------------------------------------------------------------
    def action_scale_batch(self, factor: float) -> None:
        self.set_field("batch", max(1, min(1 << 20, int(self.form.batch * factor))))

    def action_scale_prompt(self, factor: float) -> None:
        self.set_field("prompt_tokens", max(1, min(10_000_000, int(self.form.prompt_tokens * factor))))

    def action_show_view(self, view: str) -> None:
        self._w("#views", TabbedContent).active = view

    def action_toggle_inputs(self) -> None:
        """Narrow terminals show inputs or results; wide ones can hide the inputs for a bigger chart."""
        self.screen.toggle_class("-inputs-toggled")
        if self.screen.has_class("-narrow") and self.screen.has_class("-inputs-toggled"):
            self._w("#hardware_id").focus()

    def action_toggle_achievable(self) -> None:
        self.achievable = not self.achievable

    def action_pin_baseline(self) -> None:
        if self.results is not None:
            self.baseline = self.results
            self.notify("baseline pinned: numbers now show the change against it")
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
            self._draw_view("compare")

    def action_explain_gap(self) -> None:
        from roofline.models.report import decode_gap_dict, expected_assumption_rows

        from roofline.tui.explorer.dialogs import GapScreen
        from roofline.tui.views.report_text import assumption_lines, gap_lines

        if self.results is None:
            return
        scenario = self.results.scenario
        lines = [*gap_lines(decode_gap_dict(scenario)), "", *assumption_lines(expected_assumption_rows(scenario))]
        self.push_screen(GapScreen(lines))

    # ---- live counters: the running workload on the roofline --------------------------------------
    def action_toggle_live(self) -> None:
        """Switch live counters on (a worker samples them) or off (the worker stops, the status line goes)."""
        status = self._w("#live-status", Static)
        if status.has_class("-on"):
            for worker in self.workers:
                if worker.group == "live" and not worker.is_finished:
                    worker.cancel()
            self.live_trail = None
            status.update("")
            status.remove_class("-on")
            self._draw_view("roofline")
            return
        from roofline.tui.probe.live import Trail

        self._w("#views", TabbedContent).active = "roofline"  # the live point is drawn on the roofline
        self.live_trail = Trail()
        status.add_class("-on")
        status.update(f"live: looking for counters on GPU {LIVE_GPU_INDEX} (dcgmi dmon, then NVML GPM)...")
        self.run_worker(self._sample_live, thread=True, exclusive=True, group="live", exit_on_error=False)

    def _sample_live(self) -> None:
        """Thread worker: open a counter source, then post one sample a second until cancelled."""
        from textual.worker import get_current_worker

        from roofline.tui.probe.live import Unavailable, open_live_source

        worker = get_current_worker()
        opened = open_live_source(LIVE_GPU_INDEX)
        if isinstance(opened, Unavailable):
            self.call_from_thread(self._live_unavailable, opened.reason)
            return
        with opened as source:
            while not worker.is_cancelled:
                sample = source.read(timeout_s=0.5)
                if worker.is_cancelled:
                    return
                if sample is not None:
                    self.call_from_thread(self._add_live_sample, sample, source.name)
                elif source.failure is not None:
                    self.call_from_thread(self._live_unavailable, source.failure)
                    return

    def _live_unavailable(self, reason: str) -> None:
        self.live_trail = None
        self._w("#live-status", Static).update(f"live counters unavailable: {reason} (l to close)")

    def _add_live_sample(self, sample, source_name: str) -> None:
        """One gpu.live.ActivitySample: a new point on the roofline at the current device's spec ceilings."""
        from roofline.tui.probe.live import sample_to_point

        r = self.results
        if self.live_trail is None or r is None:
            return  # switched off meanwhile
        hw = r.scenario.hardware
        point = sample_to_point(sample, spec_mem_bw_bytes_per_s=hw.mem_bw_bytes_per_s,
                                spec_peak_flops_per_s=r.spec.matmul_flops_per_s)
        self.live_trail.add(point)
        ai = point.arithmetic_intensity_flop_per_byte
        self._w("#live-status", Static).update(
            f"live GPU {sample.gpu_index} via {source_name}: DRAM {sample.dram_active:.0%} x "
            f"{si(hw.mem_bw_bytes_per_s, 'B/s')} = {si(point.achieved_bytes_per_s, 'B/s')}, tensor "
            f"{sample.tensor_active:.0%} x {si(r.spec.matmul_flops_per_s, 'FLOP/s')} = "
            f"{si(point.achieved_flops_per_s, 'FLOP/s')}, {'-' if ai is None else f'{ai:,.1f}'} FLOP/B "
            f"(whole-device averages; l stops)")
        if self._w("#views", TabbedContent).active == "roofline":
            self._draw_view("roofline")

    # ---- talk mode ---------------------------------------------------------------------------------
    _EXPLORER_ACTIONS = frozenset({"scale_batch", "scale_prompt", "pin_baseline", "toggle_achievable", "toggle_inputs",
                                   "compare_remove", "explain_gap", "help", "show_view", "back_to_slides",
                                   "toggle_live"})

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        """While a slide is on screen the explorer's keys belong to the presenter; while a field has focus the
        keys that type text are shown dimmed (escape leaves the field)."""
        from roofline.tui.talk.screen import PresentScreen

        if action in self._EXPLORER_ACTIONS and isinstance(self.screen, PresentScreen):
            return False
        if action in self._PRIORITY_ACTIONS:  # as if they were not priority bindings (see BINDINGS)
            if self.screen is not self._explorer_screen():
                return False  # a dialog, the help or the palette on top: its keys, as with an ordinary binding
            focused = self.focused
            if focused is not None and focused.check_consume_key("plus", "+"):
                return None  # typed into a field or a select's search (they take printable keys), shown dimmed
        if action in self._TYPED_IN_FIELDS and isinstance(self.focused, Input):
            return None
        if action == "back_to_slides":
            return self.present_screen is not None or isinstance(self.focused, Input | Select)
        return True

    def open_explorer_from_slide(self, form: ScenarioForm) -> None:
        self._show_form(form)
        self.pop_screen()
        self.notify("explorer on this slide's scenario; Esc returns to the slides")

    def action_back_to_slides(self) -> None:
        """Escape: leave the field being typed in (its keys work again); in talk mode, back to the slides."""
        if isinstance(self.focused, Input | Select):
            self.set_focus(None)
            return
        if self.present_screen is not None and self.screen is not self.present_screen:
            self.push_screen(self.present_screen)

    _PRIORITY_ACTIONS = frozenset({"scale_batch", "scale_prompt"})
    # keys that type text while a field has focus: shown dimmed in the footer then (escape leaves the field)
    _TYPED_IN_FIELDS = (_EXPLORER_ACTIONS - {"back_to_slides"}) | {"quit"}


    def action_help(self) -> None:
        from roofline.tui.explorer.dialogs import HelpScreen  # Markdown (markdown-it) only when asked for: start-up stays lean

        self.push_screen(HelpScreen())

    def action_screenshot_svg(self) -> None:
        path = self.save_screenshot(path=str(Path.cwd()))
        self.notify(f"screenshot saved: {path}")

    def action_save_scenario(self) -> None:
        from roofline.tui.explorer.dialogs import ConfirmScreen, PathScreen

        def chosen(path: str | None) -> None:
            if not path:
                return
            target = Path(path).expanduser()
            if target.exists():
                self.push_screen(ConfirmScreen(f"{target} exists. Overwrite it?"),
                                 lambda ok: self._write_scenario(target, overwrite=True) if ok else None)
            else:
                self._write_scenario(target, overwrite=False)

        self.push_screen(PathScreen("Save scenario as (TOML)", "scenario.toml"), chosen)

    def _write_scenario(self, target: Path, *, overwrite: bool) -> None:
        from roofline.presets.scenario_file import write_scenario

        try:
            write_scenario(target, form_to_file_values(self.form), overwrite=overwrite)
        except OSError as err:
            self.notify(f"could not save {target}: {err}", severity="error")
            return
        self.notify(f"scenario saved: {target}")

    def action_load_scenario(self) -> None:
        from roofline.tui.explorer.dialogs import PathScreen

        self.push_screen(PathScreen("Load scenario (TOML)", "scenario.toml"),
                         lambda path: self.load_scenario_file(Path(path).expanduser()) if path else None)

    def load_scenario_file(self, path: Path) -> bool:
        from roofline.presets.scenario_file import read_scenario

        warnings: list = []
        try:
            form = form_from_file_values(read_scenario(path, warnings))
        except PresetFileError as err:
            self.notify(str(err), severity="error")
            return False
        except FormError as err:
            self.notify(f"{path}: {err.field}: {err.message}", severity="error")
            return False
        self._show_form(form)
        self.notify(f"scenario loaded: {path}")
        for warning in warnings:
            self.notify(str(warning), severity="warning")
        return True


def run_explorer(form: ScenarioForm | None = None, shown_context: int | None = None,
                 scenario_file: Path | None = None, detect_hardware: bool = False,
                 catalog: PresetCatalog | None = None) -> int:
    app = RooflineApp(form, catalog=catalog, shown_context=shown_context, detect_hardware=detect_hardware)
    if scenario_file is not None:
        app.call_after_refresh(app.load_scenario_file, scenario_file)
    app.run()
    return 0
