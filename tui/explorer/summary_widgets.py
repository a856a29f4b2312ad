"""What sits over the views: the scenario line, the four headline numbers, the verdict and the memory bar. Each is
handed the explorer's state and draws itself from it, in static or serving mode.
"""

from __future__ import annotations

import math

from textual.reactive import var
from textual.widgets import Static

from roofline.tui.explorer.headline import HEADLINE_METRICS, Headline, Verdict, WrappedText
from roofline.tui.explorer.quiet_update import set_text
from roofline.tui.views.formatting import duration, fill_bar, flop_per_byte, gib, relative_change
from roofline.tui.views.serving_data import (
    SERVING_LABELS,
    headline_values,
    memory_line,
    operating_text,
    verdict_markup,
)
from roofline.tui.views.state import ExplorerState
from roofline.tui.views.summary import context_warning, scenario_summary

STATIC_LABELS = dict(HEADLINE_METRICS)  # the labels that do not name an estimate


def _versus(change: str) -> str:
    return f"{change} vs base" if change else ""


def estimate_label(name: str) -> str:
    """Which estimate a per-sequence speed is, in plain words: ``bound`` is the spec-sheet ceiling, never reached."""
    return f"{'ceiling' if name == 'bound' else name} tok/s/seq"


def static_numbers(state: ExplorerState) -> dict[str, tuple]:
    """The headline's numbers for the static batch: ``{metric: (value, text, change, label)}``; the per-sequence
    speed under both estimates side by side, the chosen one first, each named (the ceiling alone
    in large digits read as the answer)."""
    r, achievable = state.results, state.achievable
    e, other = r.chosen(achievable), r.chosen(not achievable)
    base = state.baseline.chosen(achievable) if state.baseline else None
    other_base = state.baseline.chosen(not achievable) if state.baseline else None
    d, bd = e.decode, (base.decode if base else None)
    per_seq, total = d.tokens_per_s_per_seq, d.tokens_per_s
    other_per_seq = other.decode.tokens_per_s_per_seq
    idle = d.phase.idle_core_pct
    ttft_ms = e.ttft_s * 1e3
    in_seconds = ttft_ms >= 10_000  # 51,758 ms reads as 51.8 s (the verdict switches too)
    ttft_value, ttft_text = (e.ttft_s, f"{e.ttft_s:,.1f}") if in_seconds else (ttft_ms, f"{ttft_ms:,.1f}")
    return {
        "m-per-seq": (per_seq, f"{per_seq:,.1f}", _versus(relative_change(per_seq, bd and bd.tokens_per_s_per_seq)),
                      estimate_label(e.name)),
        "m-other": (other_per_seq, f"{other_per_seq:,.1f}",
                    _versus(relative_change(other_per_seq, other_base and other_base.decode.tokens_per_s_per_seq)),
                    estimate_label(other.name)),
        "m-aggregate": (total, f"{total:,.1f}" if total < 1000 else f"{total:,.0f}",
                        _versus(relative_change(total, bd and bd.tokens_per_s)), STATIC_LABELS["m-aggregate"]),
        "m-idle": (idle, f"{idle:.1f}", "" if bd is None else f"{idle - bd.phase.idle_core_pct:+.1f} pt vs base",
                   STATIC_LABELS["m-idle"]),
        # the static batch's TTFT, not serving's
        "m-ttft": (ttft_value, ttft_text, _versus(relative_change(e.ttft_s, base and base.ttft_s)),
                   f"TTFT {'s' if in_seconds else 'ms'} (static)"),
    }


def serving_numbers(state: ExplorerState) -> dict[str, tuple]:
    """The headline's numbers at the serving operating point, and beside ITL the idle cores and MBU of its mean
    mixed step; an infinite TTFT (past what the replica carries) reads as unbounded, in words."""
    sr = state.serving
    values = headline_values(sr.point)
    base = headline_values(sr.baseline_point) if sr.baseline_point is not None else {}

    def change(key: str, value: float) -> str:
        before = base.get(key, (None,))[0]
        ok = before is not None and math.isfinite(value) and math.isfinite(before)
        return _versus(relative_change(value, before) if ok else "")

    numbers = {k: (v if math.isfinite(v) else None, text, change(k, v),
                   SERVING_LABELS[k] if math.isfinite(v) or k != "m-ttft" else "TTFT")
               for k, (v, text) in values.items()}
    p, bp = sr.point, sr.baseline_point
    idle_change = "" if bp is None else f"{p.idle_core_pct - bp.idle_core_pct:+.1f} pt vs base"
    util = (p.idle_core_pct, f"{p.idle_core_pct:.1f} MBU {p.mbu_pct:.0f}%", idle_change,
            f"idle % (MBU {p.mbu_pct:.0f}%)")
    order = ("m-per-seq", "m-aggregate", "m-idle")
    return {**{k: numbers[k] for k in order}, "m-util": util, **{k: v for k, v in numbers.items() if k not in order}}


def in_serving_mode(state: ExplorerState) -> bool:
    return state.form.serving and state.serving is not None


class ScenarioLine(Static):
    """What is on screen, one line (views/summary.py): over the results, not a Textual Header (whose title change
    lays the whole screen out again) and not across the inputs (a key would repaint them)."""

    state: var[ExplorerState | None] = var(None, init=False)

    def watch_state(self, state: ExplorerState | None) -> None:
        if state is not None:  # set_text: a repaint of that line, no layout
            operating = operating_text(state.serving) if in_serving_mode(state) else None  # not "batch 1"
            set_text(self, scenario_summary(state.results.scenario, state.ceiling.estimate_name, operating))


class ResultsHeadline(Headline):
    """Decode tokens/s per sequence and aggregate, idle cores, TTFT (serving mode: per user, per device, ITL, TTFT),
    with the change against a pinned baseline."""

    state: var[ExplorerState | None] = var(None, init=False)

    def watch_state(self, state: ExplorerState | None) -> None:
        if state is None:
            return
        serving = in_serving_mode(state)
        self.show_all(serving_numbers(state) if serving else static_numbers(state))
        self.set_class(not (state.serving.point.fits if serving else state.results.memory.fits), "-overflow")


class ResultsVerdict(Verdict):
    """What limits decode and when it turns compute-bound, and the other estimate beside the chosen one."""

    state: var[ExplorerState | None] = var(None, init=False)

    def watch_state(self, state: ExplorerState | None) -> None:
        if state is None:
            return
        if in_serving_mode(state):
            self.show(verdict_markup(state.serving, state.ceiling.label), markup=True)
            return
        r, achievable = state.results, state.achievable
        d = r.chosen(achievable).decode
        other = r.bound if achievable else r.expected
        crossover = r.compute_bound_batch(achievable)
        if crossover is None:
            turn = "never turns compute-bound"
        else:
            beyond = " (beyond the memory limit)" if crossover > r.memory.max_batch else ""
            turn = f"turns compute-bound at batch {crossover:,}{beyond}"
        c = r.chosen_ceilings(achievable)
        self.show(f"[b]{state.ceiling.label}[/b]: decode is [b]{d.phase.limited_by}-bound[/b] "
                  f"({d.phase.arithmetic_intensity_flops_per_byte:,.1f} FLOP/B vs ridge "
                  f"{flop_per_byte(c.ridge_flops_per_byte)}), {turn}; "
                  f"{'spec bound' if achievable else 'expected'}: {other.decode.tokens_per_s_per_seq:,.1f} "
                  f"tok/s/seq, TTFT {duration(other.ttft_s)}", markup=True)


class MemoryBar(WrappedText):
    """Memory per device against capacity (serving mode: the KV blocks the operating point holds), and whether a
    context runs past the model's maximum."""

    state: var[ExplorerState | None] = var(None, init=False)

    def watch_state(self, state: ExplorerState | None) -> None:
        if state is None:
            return
        if in_serving_mode(state):
            share, text = memory_line(state.serving)
            self.set_class(not state.serving.point.fits, "-overflow")
            self.show(f"KV blocks/device [{fill_bar(share)}] {text}")
            return
        m = state.results.memory
        used, cap = m.per_device_bytes, m.capacity_bytes
        verdict = "fits" if m.fits else "DOES NOT FIT: the numbers above cannot run as set"
        past_context = context_warning(state.results.scenario)
        self.set_class(bool(past_context) or not m.fits, "-overflow")
        self.show(f"memory/device [{fill_bar(used / cap if cap else 1.0)}] {gib(used)} / {gib(cap)} {verdict}, "
                  f"max batch {m.max_batch:,}" + (f"\n{past_context}" if past_context else ""))
