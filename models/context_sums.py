"""Sums over the decode steps' contexts in closed form, at a cost that does not grow with the output length (pure).

Decode step k (k = 1..G-1) attends to c = P + k tokens. Every op's FLOPs and bytes are polynomials of degree <= 2
in c (degree 1 today: decode attention reads B*c*g*(d_qk+d_v)*b_kv bytes, :mod:`ops`) between the contexts where
``min(c, window)`` changes slope (a sliding-window layer group's window W: the pieces [lo, W] and [W+1, hi]).
On such a piece, sampled at its ends a, b and its middle m = (a+b)/2 (t = -1, 1, 0 in t = (x - m)/h, h = (b-a)/2),

    p(t) = p_m + beta*t + gamma*t^2,  beta = (p_b - p_a)/2,  gamma = (p_a + p_b)/2 - p_m,

and over the n = b-a+1 integers of the piece sum(t) = 0 and sum(t^2) = n(n+1)/(3(n-1)), so

    sum_{x=a..b} p(x) = n*p_m + gamma * n(n+1)/(3(n-1))     (n >= 2; n = 1: p_a).

An op's time is max(compute, memory) + (1 - overlap) * min(compute, memory) + a fixed cost (:mod:`estimate`):
a polynomial on each side of the contexts where compute(c) = memory(c), the roots of the polynomial
compute - memory, solved per piece (at most two). Each op is split there and the formula applied to each part;
the op at the parts' sample contexts is the op at the piece's samples, each field interpolated by p(t) (exact for
polynomials), timed by :func:`estimate.time_op`. Three ops per piece and per root replace one per context.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import threading
from dataclasses import dataclass

import numpy as np

from .estimate import Ceilings, OpTiming, PassTotals, time_op
from .ops import Number, Op
from .scenario import Scenario

Pieces = tuple[tuple[int, int], ...]
SAMPLES_PER_PIECE = 3  # a, (a+b)/2, b: a polynomial of degree <= 2 per piece
# gamma below this share of the samples' scale: the difference compute - memory is linear (rounding, not curvature)
_LINEAR_REL = 1e-12


def decode_context_range(scenario: Scenario) -> tuple[int, int]:
    """First and last context of the decode steps: P+1 .. P+G-1 (P+1 alone when G = 1), as
    :func:`inference.decode_contexts` lists them."""
    p, g = scenario.batching.prompt_tokens, scenario.batching.output_tokens
    return p + 1, p + max(g, 2) - 1


def context_pieces(scenario: Scenario, *, first: int | None = None, last: int | None = None) -> Pieces:
    """The decode contexts (``first`` .. ``last``, default :func:`decode_context_range`) split where a layer group's
    sliding window W or the sparse top-k stops growing (after c = W) and after each multiple of an attention chunk
    (:meth:`ModelArchitecture.context_breaks`): within a piece every op's FLOPs and bytes are one polynomial in c."""
    lo, hi = decode_context_range(scenario)
    lo, hi = lo if first is None else first, hi if last is None else last
    if hi < lo:
        raise ValueError(f"no contexts from {lo} to {hi}")
    cuts = scenario.model.context_breaks(lo, hi)  # windows, sparse top-k, chunk boundaries
    starts = [lo, *(w + 1 for w in cuts)]
    ends = [*cuts, hi]
    return tuple(zip(starts, ends, strict=True))


def sample_contexts(pieces: Pieces) -> np.ndarray:
    """a, (a+b)/2, b for each piece (a, b), one after another (a float array of 3 per piece)."""
    return np.array([x for a, b in pieces for x in (a, (a + b) / 2, b)], dtype=float)


def context_count(pieces: Pieces) -> int:
    return sum(b - a + 1 for a, b in pieces)


@functools.lru_cache(maxsize=64)
def _piece_weights(pieces: Pieces) -> tuple[np.ndarray, np.ndarray, float]:
    """(n, n(n+1)/(3(n-1))) per piece, and the sum of n; the second is 0 for a single context (then p_m = p_a)."""
    n = np.array([b - a + 1 for a, b in pieces], dtype=float)
    curvature = np.where(n > 1, n * (n + 1) / (3 * np.maximum(n - 1, 1)), 0.0)
    return n, curvature, float(n.sum())


def piece_sums(values: Number, pieces: Pieces) -> float:
    """Sum over every integer context of the pieces of a quantity given at :func:`sample_contexts` (a number: the
    same at every context) and polynomial of degree <= 2 on each piece."""
    n, curvature, contexts = _piece_weights(pieces)
    if type(values) is float or np.ndim(values) == 0:
        return float(values) * contexts
    v = np.asarray(values, dtype=float).reshape(len(pieces), SAMPLES_PER_PIECE)
    gamma = (v[:, 0] + v[:, 2]) / 2 - v[:, 1]
    return float(n @ v[:, 1] + curvature @ gamma)


def _roots_t(d_a: float, d_m: float, d_b: float) -> list[float]:
    """Roots in (-1, 1) of d(t) = d_m + beta*t + gamma*t^2 through (-1, d_a), (0, d_m), (1, d_b)."""
    beta, gamma = (d_b - d_a) / 2, (d_a + d_b) / 2 - d_m
    scale = abs(d_a) + abs(d_m) + abs(d_b)
    if abs(gamma) <= _LINEAR_REL * scale:
        roots = [-d_m / beta] if beta != 0 else []
    else:
        disc = beta * beta - 4 * gamma * d_m
        if disc < 0:
            return []
        q = -(beta + math.copysign(math.sqrt(disc), beta)) / 2  # the stable pair: q/gamma and d_m/q
        roots = [q / gamma] + ([d_m / q] if q != 0 else [])
    return sorted(t for t in roots if -1 < t < 1)


def _split(pieces: Pieces, d: np.ndarray) -> list[tuple[int, int, int]]:
    """(parent piece, a', b'): the pieces cut after the last integer before each root of d = compute - memory,
    so that on each part one branch of the roofline max holds (at an integer within rounding of a root both
    branches agree)."""
    v = np.asarray(d, dtype=float).reshape(len(pieces), SAMPLES_PER_PIECE)
    parts = []
    for i, (a, b) in enumerate(pieces):
        m, h = (a + b) / 2, (b - a) / 2
        start = a
        if b > a:
            for t in _roots_t(*v[i]):
                cut = math.floor(m + t * h)
                if start <= cut < b:
                    parts.append((i, start, cut))
                    start = cut + 1
        parts.append((i, start, b))
    return parts


_OP_FIELDS = tuple(f.name for f in dataclasses.fields(Op) if f.name != "dims")  # ``dims`` describes, it is no work


def _array_fields(op: Op) -> list[str]:
    """The op's fields that vary over the sampled contexts."""
    return [name for name in _OP_FIELDS if isinstance(getattr(op, name), np.ndarray)]


def _interpolated(op: Op, pieces: Pieces, parts: list[tuple[int, int, int]]) -> Op:
    """The op at the parts' sample contexts: each array field's polynomial through the parent piece's samples."""
    parent = np.repeat([i for i, _, _ in parts], SAMPLES_PER_PIECE)
    x = sample_contexts(tuple((a, b) for _, a, b in parts))
    mids = np.array([(a + b) / 2 for a, b in pieces])[parent]
    halves = np.array([(b - a) / 2 for a, b in pieces])[parent]
    t = np.divide(x - mids, halves, out=np.zeros_like(x), where=halves > 0)
    changes = {}
    for name in _array_fields(op):
        v = np.broadcast_to(getattr(op, name), (len(pieces) * SAMPLES_PER_PIECE,)).reshape(len(pieces), -1)[parent]
        beta, gamma = (v[:, 2] - v[:, 0]) / 2, (v[:, 0] + v[:, 2]) / 2 - v[:, 1]
        changes[name] = v[:, 1] + t * (beta + t * gamma)
    return dataclasses.replace(op, dims=(), **changes)


def op_time_sum_s(op: Op, c: Ceilings, pieces: Pieces, timing: OpTiming | None = None) -> float:
    """Sum over every context of the pieces of one occurrence's time; ``op`` built at :func:`sample_contexts`
    (``timing``: its :func:`time_op` under ``c``, when already known)."""
    t = time_op(op, c) if timing is None else timing
    if np.ndim(t.time_s) == 0:
        return float(t.time_s) * context_count(pieces)
    shape = (len(pieces) * SAMPLES_PER_PIECE,)
    d = np.broadcast_to(np.asarray(t.compute_s) - np.asarray(t.memory_s), shape)
    parts = _split(pieces, d)
    if len(parts) == len(pieces):  # no root inside: one branch per piece, the samples already time it
        return piece_sums(np.broadcast_to(t.time_s, shape), pieces)
    timed = time_op(_interpolated(op, pieces, parts), c)
    part_pieces = tuple((a, b) for _, a, b in parts)
    return piece_sums(np.broadcast_to(timed.time_s, (len(parts) * SAMPLES_PER_PIECE,)), part_pieces)


def varies_with_context(op: Op) -> bool:
    return bool(_array_fields(op))


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextSums:
    """A decode pass summed over every context of the pieces, and the pass at the first and the last context."""

    steps: int
    total: PassTotals  # every field summed over the contexts (numbers)
    first: PassTotals
    last: PassTotals


_TOTAL_FIELDS = tuple(f.name for f in dataclasses.fields(PassTotals))
# the fields that depend on the ceilings; the rest (FLOPs and bytes) are the ops' own work, the same under any ceilings
_TIME_FIELDS = ("time_s", "compute_s", "memory_s", "comm_s", "overhead_s")
_WORK_FIELDS = tuple(name for name in _TOTAL_FIELDS if name not in _TIME_FIELDS)


def _value_at(value: Number, index: int) -> float:
    if type(value) is float:  # the common case, a number: the same at every context
        return value
    return float(np.ravel(value)[index]) if np.ndim(value) else float(value)


@dataclass(frozen=True, slots=True)
class _WorkSums:
    """What :func:`context_sums` finds the same under every ceilings for one list of ops and pieces: the work fields
    (FLOPs, bytes) summed over the contexts and at the first and last context, and which ops vary with the context.
    The band times one list of ops under 2 x (engines) ceilings (band.py); these are worked out once for all."""

    ops: tuple[Op, ...]  # held so that the ids of the memo's key are not reused while the entry lives
    sums: dict[str, float]
    first: dict[str, float]
    last: dict[str, float]
    varying: tuple[bool, ...]


_WORK_MEMO: dict[tuple, _WorkSums] = {}
_WORK_MEMO_SIZE = 16
_WORK_MEMO_LOCK = threading.Lock()  # a worker thread may time ops too: evicting and adding are one step


def _work_sums(ops: list[Op], pieces: Pieces) -> _WorkSums:
    """:class:`_WorkSums` of ``ops`` (the same op objects in the same order) over ``pieces``, memoised: each field is
    summed over the ops in their order from 0.0, as :func:`estimate.pass_totals` does, so the figures are the same to
    the last bit."""
    key = (pieces, *map(id, ops))
    found = _WORK_MEMO.get(key)
    if found is not None:
        return found
    totals = {name: 0.0 for name in _WORK_FIELDS}
    for op in ops:
        n = op.count
        for name in _WORK_FIELDS:
            totals[name] = totals[name] + n * getattr(op, name)
    work = _WorkSums(ops=tuple(ops), sums={name: piece_sums(v, pieces) for name, v in totals.items()},
                     first={name: _value_at(v, 0) for name, v in totals.items()},
                     last={name: _value_at(v, -1) for name, v in totals.items()},
                     varying=tuple(varies_with_context(op) for op in ops))
    with _WORK_MEMO_LOCK:
        while len(_WORK_MEMO) >= _WORK_MEMO_SIZE:
            del _WORK_MEMO[next(iter(_WORK_MEMO))]  # the oldest entry
        _WORK_MEMO[key] = work
    return work


def context_sums(ops: list[Op], c: Ceilings, pieces: Pieces) -> ContextSums:
    """Every :class:`PassTotals` field of the decode pass ``ops`` (built at :func:`sample_contexts`) summed over the
    contexts. Work, compute, memory and fixed terms are polynomial per piece; the time adds, for each op that varies
    with the context, its exact piecewise sum (:func:`op_time_sum_s`) in place of the samples' polynomial.

    The work terms (FLOPs, bytes) do not depend on ``c``: they are summed once per list of ops (:func:`_work_sums`)
    and shared by every ceilings the ops are timed under; each op is timed once (:func:`estimate.time_op`) and its
    time terms summed in the ops' order, as :func:`estimate.pass_totals` sums them."""
    work = _work_sums(ops, pieces)
    time_s = compute_s = memory_s = comm_s = overhead_s = 0.0
    timings = []
    for op in ops:
        t = time_op(op, c)
        timings.append(t)
        n = op.count
        time_s = time_s + n * t.time_s
        compute_s = compute_s + n * t.compute_s
        memory_s = memory_s + n * t.memory_s
        comm_s = comm_s + n * t.comm_s
        overhead_s = overhead_s + n * t.overhead_s
    at_samples = {"time_s": time_s, "compute_s": compute_s, "memory_s": memory_s, "comm_s": comm_s,
                  "overhead_s": overhead_s}
    sums = {name: piece_sums(v, pieces) for name, v in at_samples.items()}
    shape = (len(pieces) * SAMPLES_PER_PIECE,)
    for op, timing, varying in zip(ops, timings, work.varying, strict=True):
        if varying:
            sampled = np.broadcast_to(timing.time_s, shape)
            sums["time_s"] += op.count * (op_time_sum_s(op, c, pieces, timing) - piece_sums(sampled, pieces))
    sums.update(work.sums)
    first = {name: _value_at(v, 0) for name, v in at_samples.items()} | work.first
    last = {name: _value_at(v, -1) for name, v in at_samples.items()} | work.last
    return ContextSums(steps=context_count(pieces), total=PassTotals(**sums), first=PassTotals(**first),
                       last=PassTotals(**last))
