"""One engine step of continuous batching as a list of ops (see :mod:`.serving` for the model).

A mixed step runs, in one forward pass per device:

- every token of the step (decode tokens, speculative tokens to verify, prefill tokens) through the token-wise ops
  (embedding, norms, projections, MLP or MoE experts, all-reduces): ``build_ops(decode, batch=T)`` with T the step's
  token count, so weights are read once per step and MoE touches E*(1-(1-k/E)^T) experts;
- decode attention for D requests, each with q query tokens (q = 1, or k + 1 when verifying k speculative tokens) at
  the context ``context_tokens``: FLOPs for D*q queries, KV read once per request (the q queries of one request
  share one pass over its KV: bytes of D requests);
- prefill attention for ``prefill_prompts`` prompts' worth of chunks (a fraction of one prompt per step is fine): the
  causal pairs of the prompt, as :func:`ops.build_ops` counts them for a whole prompt. With a cached shared prefix of
  S tokens hit with probability h, the hit share computes only tokens S+1..P: pairs(P) - pairs(S) and the prefix's
  KV is read instead (the KV bytes of S tokens per hit request);
- where the decode and prefill attention share a name (GQA, fused or not) they are one kernel (varlen
  FlashAttention runs mixed batches in one launch: one fixed cost); MLA runs its decompressed prefill path
  (``kv_b_proj (decompress)`` + MHA) beside the absorbed decode path, as engines do;
- the final norm, LM head and logits all-gather for the positions that yield a token: D*q decode positions plus one
  per completed prompt.

Not modelled: chunks of one prompt re-reading the KV of its earlier chunks (small against the chunk's own work at
the default budget), sampling, the scheduler's CPU time.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ops import Number, Op, build_ops
from ..scenario import Scenario

HEAD_OPS = frozenset({"final norm", "lm_head", "all-gather (logits)"})
DECODE_ONLY_PREFIXES = ("attention", "q absorb", "v absorb")
PREFILL_ONLY_PREFIXES = ("attention", "kv_b_proj")
_WORK_FIELDS = ("flops", "activation_bytes", "kv_read_bytes", "kv_write_bytes", "comm_bytes")


def _is(op: Op, prefixes: tuple[str, ...]) -> bool:
    return op.name.startswith(prefixes)


def _add_work(a: Op, b: Op) -> Op:
    """One kernel doing both ops' work (weights read once: the larger of the two weight terms)."""
    work = {f: getattr(a, f) + getattr(b, f) for f in _WORK_FIELDS}
    return replace(a, weight_bytes=np.maximum(a.weight_bytes, b.weight_bytes), dims=(), **work)


def _prefill_attention(scenario: Scenario, prompts: Number, prompt_tokens: float, prefix_tokens: float,
                       prefix_hit_rate: float) -> list[Op]:
    """Prefill-only ops (attention, MLA decompression) of ``prompts`` prompts; a hit share skips the prefix."""
    full = [op for op in build_ops(scenario, "prefill", batch=prompts, prompt=prompt_tokens)
            if _is(op, PREFILL_ONLY_PREFIXES)]
    hit = prefix_hit_rate * min(prefix_tokens, prompt_tokens)
    if hit <= 0:
        return full
    cached = {op.name: op for op in build_ops(scenario, "prefill", batch=np.multiply(prompts, prefix_hit_rate),
                                              prompt=min(prefix_tokens, prompt_tokens))
              if _is(op, PREFILL_ONLY_PREFIXES)}
    out = []
    for op in full:
        skip = cached.get(op.name)
        if skip is None:
            out.append(op)
            continue
        # computed pairs: pairs(P) - h*pairs(S); tokens P - h*S; the prefix's KV is read, not written
        out.append(replace(op, flops=op.flops - skip.flops,
                           activation_bytes=op.activation_bytes - skip.activation_bytes,
                           kv_write_bytes=op.kv_write_bytes - skip.kv_write_bytes,
                           kv_read_bytes=op.kv_read_bytes + skip.kv_write_bytes, dims=()))
    return out


def mixed_step_ops(scenario: Scenario, *, decode_requests: Number, context_tokens: float, prefill_prompts: Number,
                   prompt_tokens: float, prefix_tokens: float = 0.0, prefix_hit_rate: float = 0.0,
                   query_tokens_per_request: int = 1) -> list[Op]:
    """Every op of one continuous-batching step, per device (arrays broadcast over a sweep).

    ``decode_requests`` D running requests each decode ``query_tokens_per_request`` q tokens at ``context_tokens``;
    ``prefill_prompts`` r prompts' worth of prefill (P = ``prompt_tokens``) ride in the same pass. Token count
    T = D*q + r*(P - h*S). With r = 0 everywhere and q = 1 this is exactly ``build_ops(decode, batch=D)``'s list.
    """
    q = query_tokens_per_request
    d = np.asarray(decode_requests, dtype=float) if np.ndim(decode_requests) else float(decode_requests)
    r = np.asarray(prefill_prompts, dtype=float) if np.ndim(prefill_prompts) else float(prefill_prompts)
    has_prefill = bool(np.any(np.asarray(r) > 0))
    computed_per_prompt = prompt_tokens - prefix_hit_rate * min(prefix_tokens, prompt_tokens)
    decode_tokens = d * q
    tokens = decode_tokens + r * computed_per_prompt if has_prefill else decode_tokens
    decode_ops = build_ops(scenario, "decode", batch=decode_tokens, context=context_tokens)
    token_ops = build_ops(scenario, "decode", batch=tokens, context=context_tokens) if has_prefill else decode_ops
    attention = [op for op in decode_ops if _is(op, DECODE_ONLY_PREFIXES)]
    if q > 1:  # the q queries of one request read its KV once
        attention = [replace(op, kv_read_bytes=op.kv_read_bytes / q) for op in attention]
    if has_prefill:
        by_name = {op.name: i for i, op in enumerate(attention)}
        for op in _prefill_attention(scenario, r, prompt_tokens, prefix_tokens, prefix_hit_rate):
            if op.name in by_name:
                i = by_name[op.name]
                attention[i] = _add_work(attention[i], op)
            else:
                attention.append(op)
    head_rows = decode_tokens + r if has_prefill else decode_tokens
    head = build_ops(scenario, "decode", batch=head_rows, context=context_tokens) if has_prefill else decode_ops
    head_by_name = {op.name: op for op in head if op.name in HEAD_OPS}
    out: list[Op] = []
    attention_placed = False
    for op in token_ops:
        if op.name in HEAD_OPS:
            out.append(head_by_name[op.name])
        elif _is(op, DECODE_ONLY_PREFIXES):
            if not attention_placed:  # the attention block where the decode pass has it
                out.extend(attention)
                attention_placed = True
        else:
            out.append(op)
    if not attention_placed:
        out.extend(attention)
    return out
