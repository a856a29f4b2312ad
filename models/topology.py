"""Links between the devices of a tensor-parallel group, and the ring all-reduce over them.

A ring all-reduce of M bytes over n devices sends 2*(n-1)/n * M bytes per device, one ring step after another,
so it runs at the slowest link on the ring (Patarasuk and Yuan, JPDC 2009: bandwidth-optimal ring all-reduce;
NCCL's ring algorithm). Topologies, per TP group:

- ``nvswitch``: every pair at the preset's NVLink figure (an NVSwitch box: DGX/HGX A100, H100, B200);
- ``nvlink-bridge``: cards joined in pairs by an NVLink bridge (A100 PCIe, H100 PCIe/NVL, RTX 3090): TP 2 runs on
  the bridge; a larger ring crosses from pair to pair over PCIe through the host, so it runs at PCIe;
- ``pcie-switch``: every card under one PCIe switch (peer-to-peer, NCCL's PXB/PIX path);
- ``pcie-host``: peer-to-peer through the CPU's root complex (PHB/NODE) - the default for PCIe-only presets;
- ``pcie-sys``: across CPU sockets (SYS: UPI/Infinity Fabric between sockets);
- ``xgmi``: AMD Infinity Fabric, fully connected (MI300X: 7 links per GPU), at the preset's aggregate figure;
- ``fabric``: the preset's one interconnect figure for any pair (TPU ICI, Gaudi RoCE, anything else).

Bandwidths are per direction; the ``expected`` estimate applies its achieved link fraction to them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from .errors import ModelInputError
from .hardware import Hardware

# Small-message all-reduce latency, as the estimate used before topologies (estimate.py): vLLM/SGLang custom
# all-reduce on H100 NVLink 4-12 us at TP 2-8 (sgl-project/sglang#2904) -> 8 us; NCCL over PCIe on 8x RTX 4090
# spread over two root complexes, about 42 us (NVIDIA/nccl#1530) -> 40 us.
NVLINK_LATENCY_S = 8e-6
PCIE_HOST_LATENCY_S = 40e-6
# NCCL inside a CUDA graph, 4 V100 behind one PLX switch (PXB): 19.4-22.3 us for 4-16 KB messages
# (haohervchb/sglang-V100#2) -> 20 us.
PCIE_SWITCH_LATENCY_S = 20e-6
# Across sockets: NCCL over PCIe on 8x RTX 4090 whose bus ids span both sockets (0x16-0x5a, 0x98-0xd8), 42.1 us
# at 8 bytes (NVIDIA/nccl#1530).
PCIE_SYS_LATENCY_S = 42e-6

# PCIe x16 bandwidth per direction by generation (PCI-SIG: 8, 16, 32 GT/s with 128b/130b): 15.75, 31.5, 63 GB/s;
# the presets round to 16/32/64 (their bidirectional 32/64/128 GB/s), so the same rounding here.
PCIE_X16_BW_PER_DIRECTION_BYTES_PER_S: dict[int, float] = {2: 8e9, 3: 16e9, 4: 32e9, 5: 64e9, 6: 128e9}
# Host-memory relay between sockets: no public nccl-tests figure with the same cards on one socket and across
# two was found, so a cross-socket ring keeps the PCIe figure and differs only in latency.

TOPOLOGIES = ("nvswitch", "nvlink-bridge", "pcie-switch", "pcie-host", "pcie-sys", "xgmi", "fabric")


@dataclass(frozen=True, slots=True, kw_only=True)
class Link:
    """One path between two devices: bandwidth per direction (spec), small-message latency, what it is."""

    kind: str
    bw_unidirectional_bytes_per_s: float
    latency_s: float
    source: str


def pcie_generation(hw: Hardware) -> int:
    """The host PCIe generation: named in the interconnect string ("PCIe 4.0 x16"), else Gen 5 for parts from 2023
    on and Gen 4 before (H100 NVL and RTX 3090 name only their bridge)."""
    match = re.search(r"pcie\s*(\d)", hw.interconnect.lower())
    if match:
        return int(match.group(1))
    return 5 if hw.year >= 2023 else 4


def default_topology(hw: Hardware) -> str:
    """The topology a preset's interconnect string implies: an NVLink bridge -> ``nvlink-bridge``; NVLink otherwise
    -> ``nvswitch``; Infinity Fabric / xGMI -> ``xgmi``; PCIe only -> ``pcie-host``; anything else -> ``fabric``."""
    kind = hw.interconnect.lower()
    if "nvlink" in kind:
        return "nvlink-bridge" if "bridge" in kind else "nvswitch"
    if "infinity" in kind or "xgmi" in kind:
        return "xgmi"
    if "pcie" in kind:
        return "pcie-host"
    return "fabric"


def _primary_link(hw: Hardware, kind: str, default_latency_s: float) -> Link:
    latency = hw.interconnect_latency_s if hw.interconnect_latency_s is not None else default_latency_s
    return Link(kind=kind, bw_unidirectional_bytes_per_s=hw.interconnect_bw_unidirectional_bytes_per_s,
                latency_s=latency, source=f"{hw.id} preset: {hw.interconnect or 'interconnect'}")


def _pcie_link(hw: Hardware, kind: str, latency_s: float) -> Link:
    gen = pcie_generation(hw)
    bw = PCIE_X16_BW_PER_DIRECTION_BYTES_PER_S.get(gen, PCIE_X16_BW_PER_DIRECTION_BYTES_PER_S[4])
    return Link(kind=kind, bw_unidirectional_bytes_per_s=bw, latency_s=latency_s,
                source=f"PCIe {gen}.0 x16 (PCI-SIG), {kind} latency (see topology.py)")


def _pcie_only(hw: Hardware) -> bool:
    kind = hw.interconnect.lower()
    return "pcie" in kind and not any(link in kind for link in ("nvlink", "infinity", "xgmi", "ici"))


def ring_links(hw: Hardware, tp: int, topology: str | None = None) -> tuple[Link, ...]:
    """The links of a ring over ``tp`` devices under ``topology`` (default: :func:`default_topology`), one per ring
    step (device i to i+1 mod tp); empty for one device."""
    topo = default_topology(hw) if topology is None else topology
    if topo not in TOPOLOGIES:
        raise ModelInputError("topology", f"unknown topology {topo!r} (known: {', '.join(TOPOLOGIES)})")
    if tp <= 1:
        return ()
    if topo in ("nvswitch", "xgmi"):
        return (_primary_link(hw, topo, NVLINK_LATENCY_S),) * tp
    if topo == "fabric":
        # the figures the estimate used before topologies: PCIe-only presets get the PCIe latency
        return (_primary_link(hw, topo, PCIE_HOST_LATENCY_S if _pcie_only(hw) else NVLINK_LATENCY_S),) * tp
    if topo == "nvlink-bridge":
        bridge = _primary_link(hw, "nvlink-bridge", NVLINK_LATENCY_S)
        if tp == 2:
            return (bridge, bridge)
        # pairs (0,1), (2,3), ...: even steps on a bridge, odd steps (and an odd tail) from pair to pair over PCIe
        cross = _pcie_link(hw, "pcie-host", PCIE_HOST_LATENCY_S)
        return tuple(bridge if i % 2 == 0 and i + 1 < tp else cross for i in range(tp))
    if topo == "pcie-host" and _pcie_only(hw):
        # a PCIe-only preset's own figure and latency (the numbers the estimate used before topologies)
        return (_primary_link(hw, "pcie-host", PCIE_HOST_LATENCY_S),) * tp
    latency = {"pcie-switch": PCIE_SWITCH_LATENCY_S, "pcie-host": PCIE_HOST_LATENCY_S,
               "pcie-sys": PCIE_SYS_LATENCY_S}[topo]
    return (_pcie_link(hw, topo, latency),) * tp


def ring_bottleneck(hw: Hardware, tp: int, topology: str | None = None) -> Link:
    """The slowest link on the ring (lowest bandwidth; of equal ones, the highest latency): a ring all-reduce runs
    every step at its pace. ``tp`` = 1: the preset's own link (no collective runs)."""
    links = ring_links(hw, tp, topology)
    if not links:
        return _primary_link(hw, default_topology(hw), PCIE_HOST_LATENCY_S if _pcie_only(hw) else NVLINK_LATENCY_S)
    return min(links, key=lambda link: (link.bw_unidirectional_bytes_per_s, -link.latency_s))


def ring_all_reduce_s(message_bytes: float, tp: int, link: Link, bw_fraction: float = 1.0) -> float:
    """2*(tp-1)/tp * M / (link bandwidth * achieved fraction) + the link's latency; 0 for one device."""
    if tp <= 1:
        return 0.0
    return 2.0 * (tp - 1) / tp * message_bytes / (link.bw_unidirectional_bytes_per_s * bw_fraction) + link.latency_s


# ---- beyond one node: the scale-up domain (a node, an NVL72 rack) and the scale-out fabric between them ----------
# A node is ``Hardware.devices_per_node`` devices on the preset's ``interconnect`` (NVLink/NVSwitch, xGMI); nodes join
# over one NIC per device (``Hardware.scale_out``). Bandwidths are per device and per direction, as a NIC's line rate
# is quoted (400 Gb/s = 50 GB/s each way).
#
# Small-message latency of one network hop: NCCL's own tuning model charges 14 us per network hop to its Simple
# protocol (hwLat[NCCL_HW_NET], Ring/Simple, NVIDIA/nccl src/graph/tuning.cc), against 3.4 us over NVLink; the
# scale-out fabrics below use it unless a preset states its own (``scale_out_latency_us``).
SCALE_OUT_LATENCY_S = 14e-6


@dataclass(frozen=True, slots=True, kw_only=True)
class Fabric:
    """A scale-out fabric by name (``--fabric``): its line rate per device and direction, latency, source."""

    name: str
    label: str
    bw_unidirectional_bytes_per_s: float
    latency_s: float
    source: str


_IBTA = "InfiniBand Trade Association roadmap (4x port: HDR 200, NDR 400, XDR 800 Gb/s)"
_IEEE = "IEEE 802.3 Ethernet port speeds (RoCE v2 runs RDMA over them)"
FABRICS: dict[str, Fabric] = {fabric.name: fabric for fabric in (
    Fabric(name="ib-hdr", label="InfiniBand HDR 200 Gb/s", bw_unidirectional_bytes_per_s=25e9,
           latency_s=SCALE_OUT_LATENCY_S, source=_IBTA),
    Fabric(name="ib-ndr", label="InfiniBand NDR 400 Gb/s", bw_unidirectional_bytes_per_s=50e9,
           latency_s=SCALE_OUT_LATENCY_S, source=_IBTA),
    Fabric(name="ib-xdr", label="InfiniBand XDR 800 Gb/s", bw_unidirectional_bytes_per_s=100e9,
           latency_s=SCALE_OUT_LATENCY_S, source=_IBTA),
    Fabric(name="roce-200", label="RoCE 200 GbE", bw_unidirectional_bytes_per_s=25e9,
           latency_s=SCALE_OUT_LATENCY_S, source=_IEEE),
    Fabric(name="roce-400", label="RoCE 400 GbE", bw_unidirectional_bytes_per_s=50e9,
           latency_s=SCALE_OUT_LATENCY_S, source=_IEEE),
    Fabric(name="roce-800", label="RoCE 800 GbE", bw_unidirectional_bytes_per_s=100e9,
           latency_s=SCALE_OUT_LATENCY_S, source=_IEEE),
)}


@dataclass(frozen=True, slots=True, kw_only=True)
class Cluster:
    """Where a group of devices runs: ``devices_per_node`` on the scale-up link, nodes joined by ``scale_out``
    (None: the preset names no fabric, so a group cannot leave one node)."""

    hardware_id: str
    devices_per_node: int
    scale_up: Link
    scale_out: Link | None

    def nodes_for(self, devices: int) -> int:
        """Nodes a group of ``devices`` spans: ceil(devices / devices per node)."""
        return max(1, math.ceil(devices / self.devices_per_node))

    def link_for_group(self, devices: int) -> Link:
        """The slowest link a group of ``devices`` uses: the scale-up link inside one node, else the scale-out NIC.
        ModelInputError when the group spans nodes and the preset has no scale-out fabric."""
        if devices <= self.devices_per_node:
            return self.scale_up
        if self.scale_out is None:
            raise ModelInputError("fabric", f"{devices} {self.hardware_id} devices span "
                                  f"{self.nodes_for(devices)} nodes of {self.devices_per_node}, and the preset names "
                                  "no scale-out fabric (give --fabric, e.g. ib-ndr)")
        return self.scale_out


def scale_up_link(hw: Hardware) -> Link:
    """The link between two devices of one node (the preset's interconnect, per direction)."""
    return _primary_link(hw, default_topology(hw), PCIE_HOST_LATENCY_S if _pcie_only(hw) else NVLINK_LATENCY_S)


def scale_out_link(hw: Hardware, fabric: str | None = None) -> Link | None:
    """The NIC of one device between nodes: the named :data:`FABRICS` entry (``--fabric``), else the preset's
    ``scale_out`` figures; None when neither names one."""
    if fabric is not None:
        if fabric not in FABRICS:
            raise ModelInputError("fabric", f"unknown fabric {fabric!r} (known: {', '.join(FABRICS)})")
        f = FABRICS[fabric]
        return Link(kind=f.name, bw_unidirectional_bytes_per_s=f.bw_unidirectional_bytes_per_s,
                    latency_s=f.latency_s, source=f"{f.label}: {f.source}")
    if hw.scale_out_bw_unidirectional_bytes_per_s <= 0:
        return None
    latency = hw.scale_out_latency_s if hw.scale_out_latency_s is not None else SCALE_OUT_LATENCY_S
    return Link(kind="scale-out", bw_unidirectional_bytes_per_s=hw.scale_out_bw_unidirectional_bytes_per_s,
                latency_s=latency, source=f"{hw.id} preset: {hw.scale_out} ({hw.fabric_source})")


MAX_DEVICES_PER_NODE = 1024


def cluster_for(hw: Hardware, *, fabric: str | None = None, devices_per_node: int | None = None) -> Cluster:
    """The node and fabric of ``hw``: the preset's device count per node and NIC, or the overrides
    (``--fabric``; ``devices_per_node`` for another scale-up domain size)."""
    per_node = hw.devices_per_node if devices_per_node is None else devices_per_node
    if isinstance(per_node, bool) or not isinstance(per_node, int) or not 1 <= per_node <= MAX_DEVICES_PER_NODE:
        raise ModelInputError("devices_per_node", f"must be a whole number from 1 to {MAX_DEVICES_PER_NODE}, "
                              f"got {per_node!r}")
    return Cluster(hardware_id=hw.id, devices_per_node=per_node, scale_up=scale_up_link(hw),
                   scale_out=scale_out_link(hw, fabric))
