"""The scenario's engine and TP topology reach every number: estimate, gap, sweeps, serving and the report."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from roofline.models.estimate import DEFAULT_LINK_BW_FRACTION, ceilings
from roofline.models.gap import decode_gap
from roofline.models.inference import estimate
from roofline.models.report import scenario_report
from roofline.models.serving import frontier
from roofline.models.serving.inputs import ServingMix
from roofline.models.sweeps import batch_sweep
from roofline.tui.views.report_text import render_markdown, render_text
from tests.conftest import scenario


def test_default_engine_reproduces_the_ceilings_before_engines():
    s = scenario("h100-sxm", "llama-3.1-8b", weights="int4")
    e = estimate(s, "expected")
    before = ceilings(s.hardware, "bf16", "expected")
    assert e.ceilings.mem_bw_bytes_per_s == before.mem_bw_bytes_per_s
    assert e.ceilings.weight_stream_efficiency == before.weight_stream_efficiency
    assert e.ceilings.kernel_overhead_s == before.kernel_overhead_s


def test_report_states_engine_and_topology_and_uses_the_ring():
    """A100 PCIe: NVLink bridges join pairs (600 GB/s bidirectional, 300 one way). TP 2 runs on the bridge; TP 4
    crosses pairs over PCIe 4.0 x16 through the host, 32 GB/s one way (topology.py), so expected's link is
    32e9 * 0.8 = 25.6 GB/s and the ring's latency is the host path's."""
    tp4 = scenario_report(scenario("a100-pcie-80gb", "llama-3.1-8b", tp=4), include_ops=False)
    assert tp4["engine"]["id"] == "generic" and tp4["engine"]["default"] is True
    topo = tp4["topology"]
    assert topo["id"] == "nvlink-bridge" and topo["derived_from_preset"] and topo["ring_link"] == "pcie-host"
    assert topo["ring_link_bw_bytes_per_s"] == 32e9
    assert tp4["expected"]["ceilings"]["link_bw_bytes_per_s"] == pytest.approx(32e9 * DEFAULT_LINK_BW_FRACTION)
    tp2 = scenario_report(scenario("a100-pcie-80gb", "llama-3.1-8b", tp=2), include_ops=False)
    assert tp2["topology"]["ring_link"] == "nvlink-bridge"
    assert tp2["expected"]["ceilings"]["link_bw_bytes_per_s"] == pytest.approx(300e9 * DEFAULT_LINK_BW_FRACTION)
    # the ring row names the slowest link; the bound keeps the preset's figure (spec, no topology)
    names = {a["name"] for a in tp4["assumptions"]}
    assert "link_bw (pcie-host)" in names
    assert tp4["bound"]["ceilings"]["link_bw_bytes_per_s"] == tp2["bound"]["ceilings"]["link_bw_bytes_per_s"]
    text = render_text(tp4, show_ops=False)
    assert "engine generic (the default)" in text and "topology nvlink-bridge" in text and "pcie-host" in text
    assert "engine generic" in render_markdown(tp4)


def test_single_device_report_says_no_collectives():
    r = scenario_report(scenario("h100-sxm", "llama-3.1-8b"), include_ops=False)
    assert r["topology"]["ring_link"] is None and "no collectives" in render_text(r, show_ops=False)


def test_engine_changes_expected_never_bound_and_names_its_sources():
    """vLLM runs int4 through Marlin (efficiency 1.0 against generic's 0.617): its expected decode is faster, its
    bound identical, and the assumption row cites the Marlin README."""
    generic = scenario("h100-sxm", "llama-3.1-8b", weights="int4")
    vllm = dataclasses.replace(generic, engine="vllm")
    rg, rv = (scenario_report(s, include_ops=False) for s in (generic, vllm))
    assert rv["expected"]["decode"]["step_time_s"] < rg["expected"]["decode"]["step_time_s"]
    assert rv["bound"]["decode"]["step_time_s"] == rg["bound"]["decode"]["step_time_s"]
    row = next(a for a in rv["assumptions"] if a["name"] == "weight_only_stream_efficiency (int4)")
    assert row["value"] == 1.0 and "marlin" in row["source"].lower()
    assert rv["engine"]["id"] == "vllm" and not rv["engine"]["default"]


def test_gap_sweeps_and_serving_follow_the_engine():
    """TensorRT-LLM 0.5 reads the KV cache once per query head (GQA group 4 on Llama-3.1-8B): the gap shows that
    term and the batch sweep slows down with it; generic shows no such term."""
    base = scenario("h100-sxm", "llama-3.1-8b", prompt=8192, output=64)
    old = dataclasses.replace(base, engine="trtllm-0.5")
    _, terms_old, step_old = decode_gap(old)
    _, terms_base, step_base = decode_gap(base)
    kv_term = next(t for t in terms_old if t.label == "KV reads per query head")
    assert kv_term.seconds > 0 and not any(t.label == "KV reads per query head" for t in terms_base)
    assert step_old - step_base == pytest.approx(kv_term.seconds, rel=1e-9)
    batches = np.array([1.0, 8.0])
    swept_old, swept_base = (batch_sweep(s, batches, "expected").step_time_s for s in (old, base))
    assert np.all(swept_old > swept_base)
    # serving: vLLM's Marlin int4 (1.0 against generic's 0.617) streams the weights faster at every concurrency
    int4 = scenario("h100-sxm", "llama-3.1-8b", weights="int4")
    mix = ServingMix(prompt_tokens=1024, output_tokens=256)
    itl_vllm = frontier(dataclasses.replace(int4, engine="vllm"), mix, [1, 16]).points
    itl_generic = frontier(int4, mix, [1, 16]).points
    assert all(a.itl_s < b.itl_s for a, b in zip(itl_vllm, itl_generic, strict=True))
