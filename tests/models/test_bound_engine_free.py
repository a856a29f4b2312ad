"""``bound`` is the physics of the chip: the same under every engine profile.

Engine behaviour (prefill micro-batches, chunking, kernel overheads, GEMM shares, runtime modes) lives in ``expected``
only. For each preset pair below (a dense GQA model on unified memory with a long prompt, a GGUF case, an MoE, an MLA
+ MoE model under TP, a hybrid Mamba model, a sliding-window model), every op of prefill and decode (FLOPs and every
kind of bytes), the ``bound`` ceilings, the ``bound`` figures and the memory footprint are compared under every
engine id the presets know.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline.models.engines import engine_ids
from roofline.models.inference import estimate, generation_ops
from roofline.models.memory import memory_footprint
from roofline.models.scenario import Batching, Parallelism, Scenario, released_precisions
from roofline.presets.loader import load_hardware, load_model

# (hardware, model, weights or None for the released ones, tp, batch, prompt, output)
PAIRS = (
    ("m2-ultra", "llama-3.1-8b", "bf16", 1, 1, 4096, 128),
    ("rtx-4090", "llama-2-7b", "q4_0", 1, 1, 8192, 64),
    ("h100-sxm", "mixtral-8x7b", "bf16", 2, 8, 16384, 256),
    ("h200", "deepseek-v3", None, 8, 4, 32768, 512),
    ("mi300x", "llama-3.1-70b", "fp8", 2, 16, 2048, 1024),
    ("a100-sxm4-80gb", "jamba-v0.1", "bf16", 2, 2, 8192, 128),
    ("rtx-5090", "gemma-2-9b", "q4_k_m", 1, 1, 6000, 200),
)


def _scenario(pair: tuple, engine: str) -> Scenario:
    hardware, model_id, weights, tp, batch, prompt, output = pair
    model = load_model(model_id)
    return Scenario(hardware=load_hardware(hardware), model=model,
                    precisions=released_precisions(model, weights=weights, kv="bf16"),
                    batching=Batching(batch_size=batch, prompt_tokens=prompt, output_tokens=output),
                    parallelism=Parallelism(tp=tp), engine=engine)


def _bound_figures(scenario: Scenario):
    e = estimate(scenario, "bound")
    return dataclasses.replace(e, ceilings=dataclasses.replace(e.ceilings, engine=""))


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{p[0]}-{p[1]}")
def test_bound_is_identical_under_every_engine(pair):
    engines = engine_ids()
    assert len(engines) >= 10
    reference = _scenario(pair, "generic")
    ops = generation_ops(reference)
    bound = _bound_figures(reference)
    memory = memory_footprint(reference)
    for engine in engines:
        s = _scenario(pair, engine)
        other = generation_ops(s)
        assert other.prefill == ops.prefill, engine
        for a, b in zip(other.decode_steps, ops.decode_steps, strict=True):
            assert a.name == b.name
            for name in ("flops", "weight_bytes", "activation_bytes", "kv_read_bytes", "kv_write_bytes",
                         "comm_bytes"):
                assert (getattr(a, name) == getattr(b, name)).all() if hasattr(getattr(a, name), "all") else \
                    getattr(a, name) == getattr(b, name), (engine, a.name, name)
        assert _bound_figures(s) == bound, engine
        assert memory_footprint(s) == memory, engine


def test_the_reported_example_streams_the_weights_once():
    """Llama-3.1-8B bf16, a 4096-token prompt on an M2 Ultra: the prefill pass reads 8.03e9 parameters x 2 B once
    (about 15.0 GB with the embedding rows of the 4096 tokens), under ``llamacpp`` as under ``generic``; llama.cpp's
    8 micro-batches of 512 stream them 8 times in ``expected``'s memory time only."""
    pair = PAIRS[0]
    generic = estimate(_scenario(pair, "generic"), "bound").prefill.weight_bytes
    llamacpp = estimate(_scenario(pair, "llamacpp"), "bound").prefill.weight_bytes
    assert generic == llamacpp == pytest.approx(15.0e9, rel=0.01)
    slow = estimate(_scenario(pair, "llamacpp"), "expected").prefill
    fast = estimate(_scenario(pair, "generic"), "expected").prefill
    assert slow.weight_bytes == fast.weight_bytes == generic
    assert slow.memory_s > 2 * fast.memory_s  # 7 more weight reads (105 GB) beside 46 GB of activations


_HARDWARE = ("h100-sxm", "mi300x", "m2-ultra", "rtx-4090", "tpu-v5e", "gaudi3", "a100-sxm4-80gb")
_MODELS = ("llama-3.1-8b", "mixtral-8x7b", "qwen3-8b", "gemma-2-9b", "nemotron-h-8b")


@settings(max_examples=25, deadline=None)
@given(hardware=st.sampled_from(_HARDWARE), model=st.sampled_from(_MODELS), engine=st.sampled_from(engine_ids()),
       batch=st.integers(1, 64), prompt=st.integers(1, 20000), output=st.integers(1, 512))
def test_bound_never_moves_with_the_engine(hardware, model, engine, batch, prompt, output):
    """Any preset pair, any batch and lengths: ``bound`` under an engine is ``bound`` under generic."""
    pair = (hardware, model, "bf16", 1, batch, prompt, output)
    assert _bound_figures(_scenario(pair, engine)) == _bound_figures(_scenario(pair, "generic"))
