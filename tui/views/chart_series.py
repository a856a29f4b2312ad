"""What the charts plot, as numbers: where ops sit on the roofline, and the axes' tick positions and labels.

Log axes are plotted as log10 (or log2) values on linear axes (plotext 5 takes the log again on a rebuild), so the
ticks are placed and labelled here. No Textual and no plotext here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from roofline.models.dtypes import GGUF_INTEGER_FORMATS
from roofline.models.estimate import Ceilings, time_op
from roofline.models.ops import Op

_DECADE_LABELS = {-3: "1m", -2: "10m", -1: "0.1", 0: "1", 1: "10", 2: "100", 3: "1k", 4: "10k", 5: "100k",
                  6: "1M", 7: "10M", 8: "100M", 9: "1G", 10: "10G", 11: "100G", 12: "1T", 13: "10T",
                  14: "100T", 15: "1P", 16: "10P", 17: "100P", 18: "1E"}


def decade_ticks(low: float, high: float) -> tuple[list[float], list[str]]:
    """Integer log10 positions between low and high with short SI labels."""
    first, last = math.floor(low), math.ceil(high)
    positions = list(range(first, last + 1))
    return [float(p) for p in positions], [_DECADE_LABELS.get(p, f"1e{p}") for p in positions]


def power_of_two_label(exponent: int) -> str:
    """2^e as people write token counts and batch sizes: 1, 512, 1k, 4k, 64k, 1M (binary k and M, exact)."""
    if exponent >= 20:
        return f"{2 ** (exponent - 20)}M"
    if exponent >= 10:
        return f"{2 ** (exponent - 10)}k"
    return str(2**exponent) if exponent >= 0 else f"1/{2 ** -exponent}"


def power_of_two_ticks(low: float, high: float, max_ticks: int = 8) -> tuple[list[float], list[str]]:
    exponents = list(range(math.floor(low), math.ceil(high) + 1))
    step = max(1, math.ceil(len(exponents) / max_ticks))
    shown = exponents[::step]
    return [float(e) for e in shown], [power_of_two_label(e) for e in shown]


@dataclass(frozen=True, slots=True)
class RooflinePoints:
    """Where ops sit: log10 intensity and log10 achieved FLOP/s, per phase."""

    decode_x: list[float]
    decode_y: list[float]
    prefill_x: list[float]
    prefill_y: list[float]
    step_x: float
    step_y: float
    integer_gemms: bool = False  # GGUF weights: GEMMs may run at the int8 peak (see Ceilings)


def roofline_points(decode_ops: list[Op], prefill_ops: list[Op], c: Ceilings) -> RooflinePoints:
    def place(ops: list[Op]) -> tuple[list[float], list[float]]:
        xs, ys = [], []
        for op in ops:
            if op.kind == "collective" or float(op.flops) <= 0:
                continue
            t = float(time_op(op, c).time_s)
            xs.append(math.log10(float(op.arithmetic_intensity_flops_per_byte)))
            ys.append(math.log10(float(op.flops) / t))
        return xs, ys

    dx, dy = place(decode_ops)
    px, py = place(prefill_ops)
    flops = sum(op.count * float(op.flops) for op in decode_ops)
    moved = sum(op.count * float(op.memory_bytes) for op in decode_ops)
    time_s = sum(op.count * float(time_op(op, c).time_s) for op in decode_ops)
    integer = any(op.weight_dtype in GGUF_INTEGER_FORMATS for op in (*decode_ops, *prefill_ops))
    return RooflinePoints(dx, dy, px, py, math.log10(flops / moved), math.log10(flops / time_s), integer)
