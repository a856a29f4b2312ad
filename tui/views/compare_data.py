"""The Compare table as data: the scenario's workload on each device, one row per device (no Textual here).

Written once for the explorer's Compare view, the slides and the handout. A row holds numbers (SI units) and turns
them into cells; a device the workload does not fit on gets no throughput and no price, only the smallest TP degree
that would fit it. Sorting works on the numbers, never on the formatted text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from roofline.models.errors import ModelInputError
from roofline.models.hardware import Hardware
from roofline.models.memory import memory_footprint
from roofline.models.scenario import Scenario
from roofline.tui.inputs.registry import BY_NAME
from roofline.tui.views.formatting import duration, flop_per_byte
from roofline.tui.views.results import ExplorerResults, compute_results

GIB = 1024**3
# TP degrees searched for "fits at TP n": one node's NVLink/Infinity Fabric domain (8 devices), as the serving
# search does, and never past the tp input's own limit
MAX_TP_SEARCH = int(min(8, BY_NAME["tp"].high or 8))


@dataclass(frozen=True, slots=True, kw_only=True)
class CompareColumn:
    key: str
    label: str
    descending: bool = True  # the first sort on this column puts the largest first (tok/s), else the smallest


COLUMNS: tuple[CompareColumn, ...] = (
    CompareColumn(key="device", label="device", descending=False),
    CompareColumn(key="tp", label="TP", descending=False),
    CompareColumn(key="tokens_per_s_per_seq", label="tok/s/seq"),
    CompareColumn(key="tokens_per_s", label="tok/s all"),
    CompareColumn(key="ttft_s", label="TTFT", descending=False),
    CompareColumn(key="idle_core_pct", label="idle%", descending=False),
    CompareColumn(key="fits", label="fits"),
    CompareColumn(key="max_batch", label="max B"),
    CompareColumn(key="usd_per_mtok", label="$/Mtok", descending=False),
    CompareColumn(key="mem_bw_bytes_per_s", label="TB/s"),
    CompareColumn(key="capacity_bytes", label="GiB"),
    CompareColumn(key="ridge_flops_per_byte", label="ridge", descending=False),
)
COLUMN_KEYS = tuple(c.key for c in COLUMNS)

# what $/Mtok counts, in one line under the table
PRICE_CAPTION = ("$/Mtok = $/device-hour (preset, or the field's for this device) x devices / output tok/h of the "
                 "static batch x 1e6")


@dataclass(frozen=True, slots=True, kw_only=True)
class CompareRow:
    """The workload on one device. Throughput, TTFT, idle and price are None where it does not fit (or cannot be
    built: ``problem`` says why); ``fits_at_tp`` is the smallest TP degree (dividing the heads, up to
    :data:`MAX_TP_SEARCH`) at which it fits, when it does not fit at the TP used."""

    hardware_id: str
    name: str
    current: bool
    problem: str = ""
    tp: int | None = None
    pp: int = 1
    fits: bool = False
    fits_at_tp: int | None = None
    tokens_per_s_per_seq: float | None = None
    tokens_per_s: float | None = None
    ttft_s: float | None = None
    idle_core_pct: float | None = None
    max_batch: int | None = None
    usd_per_mtok: float | None = None
    mem_bw_bytes_per_s: float | None = None
    capacity_bytes: float | None = None
    ridge_flops_per_byte: float | None = None
    scenario: Scenario | None = field(default=None, repr=False, compare=False)  # None: it could not be built

    def fits_text(self) -> str:
        if self.problem:
            return f"n/a: {self.problem}"
        if self.fits:
            return "yes"
        if self.fits_at_tp is not None:
            return f"NO: TP {self.fits_at_tp} fits"
        return f"NO: not at TP {MAX_TP_SEARCH}"

    def cells(self) -> tuple[str, ...]:
        """The row as text, in :data:`COLUMNS` order (``-`` where there is no number)."""

        def fmt(value, text) -> str:
            return "-" if value is None else text(value)

        tp = "-" if self.tp is None else (f"{self.tp}" if self.pp == 1 else f"{self.tp} x PP{self.pp}")
        return (("> " if self.current else "  ") + short_name(self.name), tp,
                fmt(self.tokens_per_s_per_seq, lambda v: f"{v:,.1f}"),
                fmt(self.tokens_per_s, lambda v: f"{v:,.0f}"),
                fmt(self.ttft_s, duration),
                fmt(self.idle_core_pct, lambda v: f"{v:.1f}"),
                self.fits_text(),
                fmt(self.max_batch, lambda v: f"{v:,}"),
                fmt(self.usd_per_mtok, lambda v: f"{v:,.2f}"),
                fmt(self.mem_bw_bytes_per_s, lambda v: f"{v / 1e12:.2f}"),
                fmt(self.capacity_bytes, lambda v: f"{v / GIB:,.0f}"),
                fmt(self.ridge_flops_per_byte, flop_per_byte))

    def sort_value(self, key: str):
        """The number (or name) this row sorts by in column ``key``; None sorts last."""
        if key == "device":
            return self.name.lower()
        if key == "fits":  # fits first, then the smaller TP that would fit, then the rest
            if self.problem:
                return None
            return 0.0 if self.fits else float(self.fits_at_tp) if self.fits_at_tp is not None else 1e9
        return getattr(self, key)


def short_name(name: str) -> str:
    """A device's name without its parenthesised detail: ``NVIDIA B200 (HGX B200, per GPU)`` -> ``NVIDIA B200``."""
    return name.split(" (", 1)[0] if not name.startswith("(") else name


def number_in(text: str) -> float | None:
    """The first number in a cell's text (``$1,234.5`` -> 1234.5); None for ``-`` or text without one."""
    match = re.search(r"-?\d[\d,]*(?:\.\d+)?", text)
    return None if match is None else float(match.group().replace(",", ""))


def sorted_by(items: Sequence, key: str | None, values, *, descending: bool) -> list:
    """``items`` ordered by ``values(item)`` (None last whatever the direction); ``key`` None keeps the order."""
    if key is None:
        return list(items)
    present = [item for item in items if values(item) is not None]
    missing = [item for item in items if values(item) is None]
    return sorted(present, key=values, reverse=descending) + missing


def sort_rows(rows: Sequence[CompareRow], key: str | None, descending: bool | None = None) -> list[CompareRow]:
    """Rows sorted on column ``key`` (the column's own first direction unless ``descending`` is given)."""
    if key is None:
        return list(rows)
    first = next(c.descending for c in COLUMNS if c.key == key)
    return sorted_by(rows, key, lambda row: row.sort_value(key), descending=first if descending is None else descending)


def smallest_fitting_tp(scenario: Scenario, max_tp: int = MAX_TP_SEARCH) -> int | None:
    """The smallest TP degree (1..max_tp, dividing the attention heads, PP kept) at which the workload's memory fits
    each device; None when none does (or the device cannot be linked for TP)."""
    heads = scenario.model.attention.num_heads
    for tp in range(1, max_tp + 1):
        if heads % tp:
            continue
        try:
            trial = replace(scenario, parallelism=replace(scenario.parallelism, tp=tp))
        except ModelInputError:  # no interconnect: one device only
            continue
        if memory_footprint(trial).fits:
            return tp
    return None


def compare_row(scenario: Scenario, *, achievable: bool, current: bool = False,
                shown_context: float | None = None, price_usd_per_hour: float | None = None,
                results: ExplorerResults | None = None) -> CompareRow:
    """One device's row. ``price_usd_per_hour``: the price per device-hour to use (None: the device's preset price);
    ``results``: the scenario's results when already computed."""
    hw = scenario.hardware
    r = results if results is not None else compute_results(scenario, shown_context)
    c = r.chosen_ceilings(achievable)
    par = scenario.parallelism
    common = dict(scenario=scenario, hardware_id=hw.id, name=hw.name, current=current, tp=par.tp, pp=par.pp,
                  max_batch=r.memory.max_batch,
                  mem_bw_bytes_per_s=c.mem_bw_bytes_per_s, capacity_bytes=hw.memory_capacity_bytes,
                  ridge_flops_per_byte=c.ridge_flops_per_byte)
    if not r.memory.fits:
        return CompareRow(fits=False, fits_at_tp=smallest_fitting_tp(scenario), **common)
    e = r.chosen(achievable)
    price = price_usd_per_hour if price_usd_per_hour is not None else hw.price_usd_per_hour
    usd_per_mtok = None
    if price and e.output_tokens_per_s > 0 and math.isfinite(e.output_tokens_per_s):
        # $ per second for all the scenario's devices / output tokens per second, per million tokens
        usd_per_mtok = price * par.devices / 3600 / e.output_tokens_per_s * 1e6
    return CompareRow(fits=True, tokens_per_s_per_seq=e.decode.tokens_per_s_per_seq, tokens_per_s=e.decode.tokens_per_s,
                      ttft_s=e.ttft_s, idle_core_pct=e.decode.phase.idle_core_pct, usd_per_mtok=usd_per_mtok, **common)


def compare_rows(current: ExplorerResults, hardware: Mapping[str, Hardware], hardware_ids: Sequence[str], *,
                 achievable: bool, price_usd_per_hour: float | None = None) -> list[CompareRow]:
    """The current scenario's workload on its own device (first, with its overrides and ``price_usd_per_hour``, the
    form's price) and on each of ``hardware_ids`` (their presets as published, their own prices)."""
    own = current.scenario.hardware.id
    rows = [compare_row(current.scenario, achievable=achievable, current=True, results=current,
                        price_usd_per_hour=price_usd_per_hour)]
    for hw_id in dict.fromkeys(hardware_ids):
        if hw_id == own:
            continue
        hw = hardware.get(hw_id)
        if hw is None:
            rows.append(CompareRow(hardware_id=hw_id, name=hw_id, current=False, problem="unknown hardware"))
            continue
        try:
            rows.append(compare_row(replace(current.scenario, hardware=hw), achievable=achievable,
                                    shown_context=current.shown_context))
        except (ModelInputError, ArithmeticError) as err:
            rows.append(CompareRow(hardware_id=hw_id, name=hw.name, current=False, problem=str(err)))
    return rows
