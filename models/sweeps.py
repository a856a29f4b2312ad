"""Decode over a range of batch sizes or contexts, as numpy arrays (one vectorised call each).

Batch sweep: mean decode step over every context of the generation (P+1 .. P+G-1) for each
batch in ``batches`` (exact, in closed form whatever G, see :func:`mean_decode_step_s`) -> per-sequence and aggregate
tokens/s; the memory limit is the largest batch that fits. Context sweep: the decode step at
each context for the scenario's batch, with the share of the step spent moving KV-cache bytes
(KV bytes / bandwidth over step time).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .estimate import scenario_ceilings
from .inference import compute_bound_batch, decode_step_totals, mean_decode_step_s
from .memory import memory_footprint
from .scenario import Scenario


def powers_of_two(limit: int) -> np.ndarray:
    """1, 2, 4, ... up to and including the first power of two >= ``limit``."""
    top = max(0, int(np.ceil(np.log2(max(limit, 1)))))
    return 2.0 ** np.arange(top + 1)


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchSweep:
    batches: np.ndarray
    step_time_s: np.ndarray
    tokens_per_s_per_seq: np.ndarray
    tokens_per_s: np.ndarray
    max_batch_that_fits: int
    compute_bound_batch: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextSweep:
    contexts: np.ndarray
    step_time_s: np.ndarray
    tokens_per_s_per_seq: np.ndarray
    tokens_per_s: np.ndarray
    kv_time_share: np.ndarray


_NOT_GIVEN = object()


def batch_sweep(scenario: Scenario, batches: np.ndarray, estimate_name: str = "bound", *,
                max_batch_that_fits: int | None = None, crossover_batch: int | None | object = _NOT_GIVEN
                ) -> BatchSweep:
    """``max_batch_that_fits`` and ``crossover_batch`` (the compute-bound batch, None for never): pass them when
    already known (the explorer has both for the scenario on screen), else they are computed here."""
    c = scenario_ceilings(scenario, estimate_name)
    step = mean_decode_step_s(scenario, c, batches)
    return BatchSweep(
        batches=batches,
        step_time_s=step,
        tokens_per_s_per_seq=1.0 / step,
        tokens_per_s=batches / step,
        max_batch_that_fits=(memory_footprint(scenario).max_batch if max_batch_that_fits is None
                             else max_batch_that_fits),
        compute_bound_batch=(compute_bound_batch(scenario, estimate_name=estimate_name)
                             if crossover_batch is _NOT_GIVEN else crossover_batch),
    )


def context_sweep(scenario: Scenario, contexts: np.ndarray, estimate_name: str = "bound") -> ContextSweep:
    c = scenario_ceilings(scenario, estimate_name)
    batch = scenario.batching.batch_size
    t = decode_step_totals(scenario, c, batch=batch, context=contexts)
    step = np.broadcast_to(t.time_s, contexts.shape)
    kv_s = (t.kv_read_bytes + t.kv_write_bytes) / c.mem_bw_bytes_per_s
    return ContextSweep(
        contexts=contexts,
        step_time_s=step,
        tokens_per_s_per_seq=1.0 / step,
        tokens_per_s=batch / step,
        kv_time_share=np.broadcast_to(kv_s / step, contexts.shape),
    )
