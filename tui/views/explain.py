"""An op's numbers traced back to their formulas, with the values substituted (plain text)."""

from __future__ import annotations

from roofline.models.estimate import Ceilings, compute_rate_flops_per_s, time_op
from roofline.models.ops import Op
from roofline.tui.views.formatting import duration, si


def _n(value: float) -> str:
    value = float(value)
    return f"{value:,.0f}" if value == int(value) else f"{value:,.4g}"


def explain_op(op: Op, c: Ceilings, pp: int = 1) -> str:
    """Multi-line derivation of one op's FLOPs, bytes and time under ceilings ``c``.

    ``pp``: pipeline stages. The count is per pass, over all stages (which run one after another); the figures are
    one instance's, on one device.
    """
    d = {k: float(v) for k, v in op.dims}
    stages = f" across {pp} pipeline stages" if pp > 1 else ""
    lines = [f"{op.phase} / {op.name}  ({op.kind}, x{op.count} per pass{stages}; figures per device)"]
    if op.kind == "matmul" and {"T", "K", "N"} <= d.keys():
        lines += [
            f"FLOPs = 2 x T x K x N = 2 x {_n(d['T'])} x {_n(d['K'])} x {_n(d['N'])} = {si(float(op.flops), 'FLOP')}",
            f"weights = K x N x b_w = {_n(d['K'])} x {_n(d['N'])} x {_n(d['b_w'])} B"
            f" = {si(float(op.weight_bytes), 'B')}",
            f"activations = T x (K x b_a + N x b_out) = {_n(d['T'])} x ({_n(d['K'])} x {_n(d['b_a'])} + "
            f"{_n(d['N'])} x {_n(d['b_out'])}) B = {si(float(op.activation_bytes), 'B')}",
        ]
    elif op.kind == "elementwise" and "elements" in d:
        lines += [
            f"FLOPs = elements x FLOP/element = {_n(d['elements'])} x {_n(d['FLOP/element'])}"
            f" = {si(float(op.flops), 'FLOP')}",
            f"activations = elements x (reads x b_in + 1 write x b_out) = {_n(d['elements'])} x "
            f"({_n(d['reads'])} x {_n(d['b_in'])} + {_n(d['b_out'])}) B = {si(float(op.activation_bytes), 'B')}",
        ]
    elif op.kind == "attention" and {"B", "c", "h_q"} <= d.keys():
        lines += [
            f"FLOPs = B x c x h_q x (2 (d_qk + d_v) + 5) = {_n(d['B'])} x {_n(d['c'])} x {_n(d['h_q'])} x "
            f"{_n(2 * (d['d_qk'] + d['d_v']) + 5)} = {si(float(op.flops), 'FLOP')}",
            f"KV read = B x c x g x (d_qk + d_v) x b_kv = {_n(d['B'])} x {_n(d['c'])} x {_n(d['g'])} x "
            f"{_n(d['d_qk'] + d['d_v'])} x {_n(d['b_kv'])} B = {si(float(op.kv_read_bytes), 'B')}",
            f"intensity ~ 2 x (h_q / g) / b_kv = {_n(2 * d['h_q'] / d['g'] / d['b_kv'])} FLOP/B, whatever B is",
        ]
    elif op.kind == "collective" and {"tp", "T", "H", "b_a"} <= d.keys():  # ring all-reduce of the residual
        lines.append(
            f"sent = 2 (tp - 1) / tp x T x H x b_a = 2 x {_n(d['tp'] - 1)}/{_n(d['tp'])} x {_n(d['T'])} x "
            f"{_n(d['H'])} x {_n(d['b_a'])} B = {si(float(op.comm_bytes), 'B')}")
    elif op.kind == "collective" and {"tp", "B", "V", "b_a"} <= d.keys():  # all-gather of the last logits
        lines.append(
            f"sent = (tp - 1) / tp x B x V x b_a = {_n(d['tp'] - 1)}/{_n(d['tp'])} x {_n(d['B'])} x "
            f"{_n(d['V'])} x {_n(d['b_a'])} B = {si(float(op.comm_bytes), 'B')}")
    elif op.kind == "collective" and {"T", "H", "b_a"} <= d.keys():  # a pipeline stage passes its activations on
        lines.append(f"sent = T x H x b_a = {_n(d['T'])} x {_n(d['H'])} x {_n(d['b_a'])} B"
                     f" = {si(float(op.comm_bytes), 'B')}")
    elif op.kind == "collective":
        lines.append(f"sent {si(float(op.comm_bytes), 'B')}")
    else:
        lines.append(f"FLOPs {si(float(op.flops), 'FLOP')}; weights {si(float(op.weight_bytes), 'B')}, "
                     f"activations {si(float(op.activation_bytes), 'B')}, KV read {si(float(op.kv_read_bytes), 'B')}")
    t = time_op(op, c)
    if op.kind == "collective":
        lines.append(f"time = sent / link {si(c.link_bw_bytes_per_s, 'B/s')} + latency {duration(t.overhead_s)}"
                     f" = {duration(float(t.time_s))}")
    else:
        peak = compute_rate_flops_per_s(op, c)
        overlap = c.compute_memory_overlap
        # the roofline's max when compute and memory overlap fully; expected adds the unhidden part
        combine = "max" if overlap >= 1 else ("sum" if overlap == 0 else f"max + {1 - overlap:.2g} x min of")
        lines.append(
            f"time = {combine}(FLOPs / {si(peak, 'FLOP/s')}, bytes / {si(c.mem_bw_bytes_per_s, 'B/s')})"
            f" + {duration(t.overhead_s)} = {combine}({duration(float(t.compute_s))}, {duration(float(t.memory_s))})"
            f" + {duration(t.overhead_s)} = {duration(float(t.time_s))}  -> limited by {t.limited_by}")
    return "\n".join(lines)
