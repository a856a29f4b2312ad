"""Map one detected accelerator (its name and memory size) to a hardware preset id.

A small ordered table of rules, not a fuzzy guess: a rule matches when its pattern is found in the device name AND
the reported memory is close to the part's nominal size. Memory is what the runtime reports for ONE device, a bit
below the nominal figure (nvidia-smi: H100 SXM 81559 MiB, A100 80GB 81920 MiB, L4 23034 MiB, T4 15360 MiB, see
github.com/modal-labs/modal-client/pull/2797; H200 143771 MiB; H100 NVL 95830 MiB). Dual-die boards (MI250X, K80)
show each die as its own device, so their rules use the per-die size, as the presets do (``devices_per_package``).

Names are the ones nvidia-smi/NVML print ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "Tesla T4") and
rocm-smi's "Card Series" ("AMD Instinct MI300X OAM", "AMD Instinct MI300X VF").
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

GIB_BYTES = 1024**3
# reported memory / nominal memory accepted as "the same part": T4 and L40S report about 94 % of nominal,
# the rest 97-100 %; the band still separates 40/80 GB, 16/32 GB and 80/94 GB variants.
MEMORY_LOW_FRACTION = 0.90
MEMORY_HIGH_FRACTION = 1.03
PICK_HINT = "pick one with --hardware; see roofline presets hardware"


@dataclass(frozen=True, slots=True)
class PartRule:
    """One known part: name pattern + nominal per-device memory -> preset (or the nearest one, when none fits)."""

    pattern: str  # regular expression, searched case-insensitively in the normalised name
    part: str  # the part in words, for reasons
    memory_gib: float | None  # nominal memory of one runtime device; None: no memory check (a catch-all)
    preset_id: str | None  # None: a known part with no preset of its own
    nearest_id: str | None = None  # for preset_id None: the closest preset
    nearest_note: str = ""  # how the nearest preset differs


def _rule(pattern: str, part: str, memory_gib: float | None, preset_id: str | None, nearest_id: str | None = None,
          nearest_note: str = "") -> PartRule:
    return PartRule(pattern, part, memory_gib, preset_id, nearest_id, nearest_note)


# Order matters: the first rule whose pattern and memory both fit wins, so specific names come before broad ones.
PART_RULES: tuple[PartRule, ...] = (
    # NVIDIA Blackwell
    _rule(r"\bGB200\b", "GB200 (Blackwell GPU)", 186, "gb200"),
    _rule(r"\bB300\b", "B300", 270, "b300"),
    _rule(r"\bB200\b", "B200", 180, "b200"),
    # NVIDIA Hopper
    _rule(r"\bGH200\b", "GH200 96GB HBM3", 96, "gh200"),
    _rule(r"\bGH200\b", "GH200 144GB HBM3e", 144, None, "gh200", "the 96 GB HBM3 version: less memory and bandwidth"),
    _rule(r"\bH200 NVL\b", "H200 NVL", 141, None, "h200",
          "the SXM part: same memory and bandwidth, higher peaks at 700 W vs 600 W"),
    _rule(r"\bH200\b", "H200 SXM 141GB", 141, "h200"),
    _rule(r"\bH100 NVL\b", "H100 NVL", 94, "h100-nvl"),
    _rule(r"\bH100 PCIE\b", "H100 PCIe 80GB", 80, "h100-pcie"),
    _rule(r"\bH100\b.*\b(SXM|HBM3)\b", "H100 SXM5 80GB", 80, "h100-sxm"),
    _rule(r"\bH800 PCIE\b", "H800 PCIe", 80, None, "h100-pcie", "same tensor peaks; NVLink and FP64 cut"),
    _rule(r"\bH800\b", "H800", 80, None, "h100-sxm", "same tensor peaks; NVLink cut to 400 GB/s, FP64 cut"),
    _rule(r"\bH100\b", "H100 (form factor not in the name)", None, None, "h100-sxm",
          "the SXM5 80GB part; h100-pcie and h100-nvl are the others"),
    # NVIDIA Ampere
    _rule(r"\bA100\b.*\bSXM", "A100 SXM4 80GB", 80, "a100-sxm4-80gb"),
    _rule(r"\bA100\b.*\bSXM", "A100 SXM4 40GB", 40, "a100-sxm4-40gb"),
    _rule(r"\bA100\b.*\bPCIE\b", "A100 PCIe 80GB", 80, "a100-pcie-80gb"),
    _rule(r"\bA100\b.*\bPCIE\b", "A100 PCIe 40GB", 40, None, "a100-sxm4-40gb",
          "same memory, bandwidth and peaks; SXM4 power limit 400 W vs 250 W"),
    _rule(r"\bA100\b", "A100 (form factor not in the name)", None, None, "a100-sxm4-80gb",
          "or a100-sxm4-40gb / a100-pcie-80gb"),
    _rule(r"\bA10G\b", "A10G", 24, "a10g"),
    _rule(r"\bA10\b", "A10", 24, "a10"),
    _rule(r"\bRTX 3090 TI\b", "GeForce RTX 3090 Ti", 24, "rtx-3090-ti"),
    _rule(r"\bRTX 3090\b", "GeForce RTX 3090", 24, "rtx-3090"),
    # NVIDIA Ada and Blackwell consumer/workstation
    _rule(r"\bRTX 4090 D\b", "GeForce RTX 4090 D", 24, None, "rtx-4090", "fewer SMs (114 vs 128)"),
    _rule(r"\bRTX 4090\b", "GeForce RTX 4090", 24, "rtx-4090"),
    _rule(r"\bRTX 5090\b", "GeForce RTX 5090", 32, "rtx-5090"),
    _rule(r"\bRTX 6000 ADA\b", "RTX 6000 Ada Generation", 48, "rtx-6000-ada"),
    _rule(r"\bL40S\b", "L40S", 48, "l40s"),
    _rule(r"\bL40\b", "L40", 48, None, "l40s", "same memory and bandwidth; L40S has higher tensor peaks"),
    _rule(r"\bL4\b", "L4", 24, "l4"),
    # NVIDIA Turing, Volta, Pascal, Maxwell, Kepler
    _rule(r"\bT4\b", "T4", 16, "t4"),
    _rule(r"\bV100\b.*\bSXM2\b", "V100 SXM2 32GB", 32, "v100-sxm2"),
    _rule(r"\bV100\b.*\bSXM2\b", "V100 SXM2 16GB", 16, None, "v100-sxm2",
          "the 32 GB part: same compute and bandwidth, twice the memory"),
    _rule(r"\bV100\b", "V100 (PCIe or other)", None, None, "v100-sxm2", "the SXM2 32GB part: higher clocks"),
    _rule(r"\bP100\b.*\bSXM2\b", "P100 SXM2 16GB", 16, "p100-sxm2"),
    _rule(r"\bM40\b", "Tesla M40 12GB", 12, "m40"),
    _rule(r"\bK80\b", "Tesla K80 (one GK210 die)", 12, "k80"),
    _rule(r"\bK40", "Tesla K40", 12, "k40"),
    # AMD Instinct (rocm-smi "Card Series"; MI250X shows each of its two GCDs as a 64 GB device)
    _rule(r"\bMI355X\b", "Instinct MI355X", 288, "mi355x"),
    _rule(r"\bMI325X\b", "Instinct MI325X", 256, "mi325x"),
    _rule(r"\bMI300X\b", "Instinct MI300X", 192, "mi300x"),
    _rule(r"\bMI250X/MI250\b", "Instinct MI250X or MI250 (one GCD; the PCI id is shared)", 64, None, "mi250x",
          "right for an MI250X; an MI250 has 208 of its 220 compute units"),
    _rule(r"\bMI250X\b", "Instinct MI250X (one GCD)", 64, "mi250x"),
    _rule(r"\bMI250\b", "Instinct MI250 (one GCD)", 64, None, "mi250x", "the MI250X: 220 vs 208 compute units"),
    _rule(r"\bMI100\b", "Instinct MI100", 32, "mi100"),
    _rule(r"\bRX 7900 XTX\b", "Radeon RX 7900 XTX", 24, "rx-7900-xtx"),
)


@dataclass(frozen=True, slots=True)
class PresetMatch:
    """The preset for one device type, or None, and why."""

    preset_id: str | None
    reason: str


def normalise_name(name: str) -> str:
    """Upper case, dashes/underscores as spaces, single spaces: 'NVIDIA A100-SXM4-80GB' -> 'NVIDIA A100 SXM4 80GB'."""
    return " ".join(re.sub(r"[-_]", " ", name).upper().split())


def format_gib(memory_bytes: int | None) -> str:
    """'79.6 GiB', or 'memory unknown'."""
    return "memory unknown" if memory_bytes is None else f"{memory_bytes / GIB_BYTES:.1f} GiB"


def memory_fits(rule: PartRule, memory_bytes: int) -> bool:
    """Whether a reported size is this part's nominal size, less the usual reserve (see the fractions above)."""
    if rule.memory_gib is None:
        return True
    memory_gib = memory_bytes / GIB_BYTES
    return MEMORY_LOW_FRACTION * rule.memory_gib <= memory_gib <= MEMORY_HIGH_FRACTION * rule.memory_gib


def _unknown(name: str, memory_bytes: int | None) -> PresetMatch:
    return PresetMatch(None, f"unknown part '{name}' ({format_gib(memory_bytes)}): {PICK_HINT}")


def _pick_rule(name: str, memory_bytes: int | None) -> PartRule | PresetMatch:
    """The first rule that fits, or the PresetMatch that explains why none does."""
    normalised = normalise_name(name)
    named = [rule for rule in PART_RULES if re.search(rule.pattern, normalised, re.IGNORECASE)]
    if not named:
        return _unknown(name, memory_bytes)
    # a catch-all (no memory size) only speaks when no sized rule knows the name
    sized = [rule for rule in named if rule.memory_gib is not None]
    if not sized:
        return named[0]
    if memory_bytes is None:
        if len({rule.preset_id for rule in sized}) == 1 and sized[0].preset_id is not None:
            return sized[0]
        return PresetMatch(None, f"'{name}' did not report its memory size and the name alone fits "
                                 f"{', '.join(rule.part for rule in sized)}: {PICK_HINT}")
    for rule in sized:
        if memory_fits(rule, memory_bytes):
            return rule
    known = ", ".join(f"{rule.part} ({rule.memory_gib:g} GiB)" for rule in sized)
    return PresetMatch(None, f"'{name}' reports {format_gib(memory_bytes)}, which fits none of {known}: {PICK_HINT}")


def match_part(name: str, memory_bytes: int | None, available_ids: Collection[str]) -> PresetMatch:
    """The preset for one device type, by name and memory size; None (with the reason) when there is no sure one.

    ``available_ids`` are the hardware preset ids that exist (``roofline.presets.loader.preset_ids("hardware")``),
    so a rule never returns an id that cannot be opened.
    """
    picked = _pick_rule(name, memory_bytes)
    if isinstance(picked, PresetMatch):
        return picked
    rule = picked
    if rule.preset_id is None:
        nearest = rule.nearest_id if rule.nearest_id in available_ids else None
        if nearest is None:
            return PresetMatch(None, f"no preset for {rule.part} ('{name}'): {PICK_HINT}")
        return PresetMatch(None, f"no preset for {rule.part} ('{name}'); nearest is {nearest} ({rule.nearest_note}):"
                                 f" pass --hardware {nearest} to use it anyway")
    if rule.preset_id not in available_ids:
        return PresetMatch(None, f"'{name}' is {rule.part}, but preset {rule.preset_id} is missing: {PICK_HINT}")
    memory = "memory not reported" if memory_bytes is None else f"{format_gib(memory_bytes)} reported"
    return PresetMatch(rule.preset_id, f"'{name}' ({memory}) is {rule.part}")
