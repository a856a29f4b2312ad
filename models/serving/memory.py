"""The KV-cache memory limit as a paged-attention engine allocates it, per device.

vLLM's worker profiles one forward pass, then (``Worker.determine_num_available_blocks``, vllm/worker/worker.py;
the V1 worker keeps the formula, per layer in ``kv_cache_utils``):

    available_kv_cache_memory = total_gpu_memory * gpu_memory_utilization - non_kv_cache_memory
    num_gpu_blocks = int(available_kv_cache_memory // cache_block_size)
    cache_block_size = block_size * (K + V elements per token per layer, per device) * num_layers * dtype_size

with non-KV memory = weights + the profiled activation peak + non-torch memory (CUDA context, NCCL buffers). Here:
weights per device as :func:`memory.memory_footprint` counts them (plus a draft model or MTP layer's), the
activation workspace of one pass over ``max_num_batched_tokens`` tokens plus the profiled logits rows
(:data:`inputs.PROFILE_LOGIT_ROWS`), and :data:`roofline.models.memory.RUNTIME_RESERVE_BYTES_PER_DEVICE` for the rest.

A request holds ceil((P + G + k) / block) blocks at its end (k speculative lookahead slots): the max concurrency
is the number of whole requests the blocks hold, so no running request is ever preempted. With a shared prefix of
S tokens and hit rate h, one copy of ceil(S / block) blocks is shared and each request holds P + G + k - h*S
tokens of its own (in expectation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..memory import (
    LOGITS_BYTES_PER_ELEMENT,
    RUNTIME_RESERVE_BYTES_PER_DEVICE,
    _activation_terms,
    kv_cache_bytes_per_sequence_per_device,
    memory_footprint,
)
from ..scenario import Scenario
from .inputs import PROFILE_LOGIT_ROWS, ServingMix, ServingOptions, draft_scenario


@dataclass(frozen=True, slots=True, kw_only=True)
class KvCachePlan:
    """Bytes per device and the blocks they give; ``max_concurrency`` is 0 when not even one request fits."""

    capacity_bytes: float
    usable_bytes: float  # capacity x gpu_memory_utilization
    weights_bytes: float  # the target's and the draft's
    activation_bytes: float
    runtime_reserve_bytes: float
    kv_available_bytes: float
    block_size_tokens: int
    block_bytes: float
    num_blocks: int
    blocks_per_request: int
    shared_prefix_blocks: int
    max_concurrency: int

    @property
    def fits(self) -> bool:
        return self.max_concurrency >= 1


def _weights_per_device(scenario: Scenario) -> float:
    return memory_footprint(scenario).per_device_weights_bytes


def _draft_weights_per_device(scenario: Scenario, options: ServingOptions) -> float:
    spec = options.speculation
    if spec is None:
        return 0.0
    draft = draft_scenario(scenario, spec)
    weights = _weights_per_device(draft)
    if spec.draft is None:  # MTP shares the target's embedding and LM head: only the layer is new
        m = draft.model
        shared = (m.embedding_params() + m.lm_head_params()) * weights / max(m.params, 1)
        weights -= shared
    return weights


def _kv_bytes(scenario: Scenario, options: ServingOptions, tokens: int) -> float:
    """KV bytes per device of ``tokens`` tokens of one request: the target's, and the draft's where there is one."""
    total = kv_cache_bytes_per_sequence_per_device(scenario, tokens)
    if options.speculation is not None:
        total += kv_cache_bytes_per_sequence_per_device(draft_scenario(scenario, options.speculation), tokens)
    return total


def kv_cache_plan(scenario: Scenario, mix: ServingMix, options: ServingOptions | None = None) -> KvCachePlan:
    """Blocks and the largest number of requests they hold (see the module docstring for the formula)."""
    options = options or ServingOptions()
    block = options.block_size_tokens
    capacity = scenario.hardware.memory_capacity_bytes
    usable = capacity * options.gpu_memory_utilization
    weights = _weights_per_device(scenario) + _draft_weights_per_device(scenario, options)
    per_token, _prompt, vocab, tp, _chunk = _activation_terms(scenario)
    rows = min(options.max_num_seqs or PROFILE_LOGIT_ROWS, PROFILE_LOGIT_ROWS)
    activation = options.max_num_batched_tokens * per_token + rows * vocab / tp * LOGITS_BYTES_PER_ELEMENT
    reserve = RUNTIME_RESERVE_BYTES_PER_DEVICE
    available = max(usable - weights - activation - reserve, 0.0)
    block_bytes = _kv_bytes(scenario, options, block)
    num_blocks = int(available // block_bytes) if block_bytes > 0 else 0
    lookahead = options.speculation.tokens if options.speculation else 0
    own_tokens = mix.prompt_tokens + mix.output_tokens + lookahead - mix.cached_prompt_tokens
    shared = math.ceil(mix.prefix_tokens / block) if mix.cached_prompt_tokens > 0 else 0
    blocks_needed = math.ceil(own_tokens / block)
    # sliding-window layers keep at most their window: the bytes of a request's blocks, in whole blocks
    request_bytes = _kv_bytes(scenario, options, blocks_needed * block)
    per_request = max(math.ceil(request_bytes / block_bytes - 1e-9), 1) if block_bytes > 0 else 1
    max_concurrency = max((num_blocks - shared) // per_request, 0)
    return KvCachePlan(capacity_bytes=capacity, usable_bytes=usable, weights_bytes=weights, activation_bytes=activation,
                       runtime_reserve_bytes=reserve, kv_available_bytes=available, block_size_tokens=block,
                       block_bytes=block_bytes, num_blocks=num_blocks, blocks_per_request=per_request,
                       shared_prefix_blocks=shared, max_concurrency=int(max_concurrency))
