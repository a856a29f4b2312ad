"""Topology beyond one node: devices per node, the scale-out NIC, overrides, and the preset fields behind them."""

from __future__ import annotations

from pathlib import Path

import pytest

from roofline.models.errors import ModelInputError
from roofline.models.topology import FABRICS, SCALE_OUT_LATENCY_S, cluster_for, scale_out_link
from roofline.presets import load_hardware
from roofline.presets.loader import PresetFileError, load_preset_file

CORPUS = Path(__file__).parents[1] / "corpus" / "hardware"


@pytest.mark.parametrize(("hw_id", "per_node", "nic_bytes_per_s"), [
    ("h100-sxm", 8, 50e9), ("h200", 8, 50e9), ("b200", 8, 50e9), ("b300", 8, 100e9),
    ("gb200", 72, 50e9), ("gb300", 72, 100e9), ("mi300x", 8, 50e9), ("mi325x", 8, 50e9), ("mi355x", 8, 50e9),
])
def test_presets_name_their_node_and_nic(hw_id, per_node, nic_bytes_per_s):
    """DGX H100/H200/B200: 8 GPUs, one 400 Gb/s ConnectX-7 each = 400/8 = 50 GB/s one way; DGX B300 and GB300:
    ConnectX-8 at 800 Gb/s = 100 GB/s; NVL72 racks: 72 GPUs in one NVLink domain; AMD platforms: 8 on xGMI, a
    400 GbE NIC each."""
    hw = load_hardware(hw_id)
    assert hw.devices_per_node == per_node
    assert hw.scale_out_bw_unidirectional_bytes_per_s == nic_bytes_per_s
    assert hw.fabric_source.startswith(("NVIDIA", "AMD"))


def test_group_inside_a_node_uses_nvlink_and_beyond_it_the_nic():
    """H200: NVLink 4 is 900 GB/s both ways, 450 GB/s one way; a group of 8 stays in the node, 16 span two nodes
    (ceil(16/8)) and run at the NIC's 50 GB/s with NCCL's 14 us network hop."""
    cluster = cluster_for(load_hardware("h200"))
    assert cluster.nodes_for(8) == 1 and cluster.nodes_for(16) == 2 and cluster.nodes_for(17) == 3
    assert cluster.link_for_group(8).bw_unidirectional_bytes_per_s == 450e9
    wide = cluster.link_for_group(16)
    assert wide.bw_unidirectional_bytes_per_s == 50e9 and wide.latency_s == SCALE_OUT_LATENCY_S


def test_nvl72_keeps_72_gpus_on_nvlink():
    """GB200 NVL72: 1.8 TB/s per GPU both ways = 900 GB/s one way, for any group up to 72 GPUs."""
    cluster = cluster_for(load_hardware("gb200"))
    assert cluster.link_for_group(72).bw_unidirectional_bytes_per_s == 900e9
    assert cluster.link_for_group(73).bw_unidirectional_bytes_per_s == 50e9


def test_fabric_and_node_overrides():
    """--fabric ib-xdr: 800 Gb/s = 100 GB/s one way; a node of 4 (devices_per_node=4) sends a group of 8 out."""
    hw = load_hardware("h200")
    assert scale_out_link(hw, "ib-xdr").bw_unidirectional_bytes_per_s == 100e9
    assert FABRICS["roce-400"].bw_unidirectional_bytes_per_s == 50e9
    cluster = cluster_for(hw, devices_per_node=4)
    assert cluster.link_for_group(8).bw_unidirectional_bytes_per_s == 50e9
    with pytest.raises(ModelInputError, match="unknown fabric 'ib-qdr'"):
        scale_out_link(hw, "ib-qdr")
    with pytest.raises(ModelInputError, match="from 1 to 1024"):
        cluster_for(hw, devices_per_node=0)


def test_card_without_fabric_refuses_a_multi_node_group():
    """An RTX 4090 preset names no NIC: a group beyond its node is refused with a one-line reason."""
    cluster = cluster_for(load_hardware("rtx-4090"))
    with pytest.raises(ModelInputError, match="no scale-out fabric"):
        cluster.link_for_group(2)


@pytest.mark.parametrize(("name", "key", "fragment"), [
    ("hw-devices-per-node-0", "devices_per_node", "from 1 to 1024, got 0"),
    ("hw-scale-out-no-figure", "scale_out", "go together"),
    ("hw-scale-out-bw-string", "scale_out_unidirectional_gb_per_s", "must be a number"),
    ("hw-fabric-no-source", "devices_per_node", "needs fabric_source"),
])
def test_broken_fabric_fields_are_refused_in_one_line(name, key, fragment):
    with pytest.raises(PresetFileError) as err:
        load_preset_file(CORPUS / f"{name}.toml", "hardware")
    message = str(err.value)
    assert f": {key}: " in message and fragment in message and "\n" not in message
