"""An accelerator, in SI units: peaks per dtype, memory, interconnect, measured fractions."""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import ModelInputError

# When a device has no native peak for a dtype, the kernel runs in the next format it does
# have (fp8 math on an A100 runs as bf16; bf16 on a V100 as fp16; on Apple GPUs as fp32).
PEAK_FALLBACK_ORDER: dict[str, tuple[str, ...]] = {
    "fp4": ("fp4", "fp8", "bf16", "fp16", "fp32"),
    "nvfp4": ("fp4", "fp8", "bf16", "fp16", "fp32"),  # NVFP4 runs on the fp4 tensor cores (dtypes.PEAK_DTYPE)
    "fp8": ("fp8", "bf16", "fp16", "fp32"),
    "bf16": ("bf16", "fp16", "fp32"),
    "fp16": ("fp16", "bf16", "fp32"),
    "fp32": ("fp32", "tf32", "bf16", "fp16"),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Hardware:
    """One device type. Peaks are dense (no 2:4 sparsity), per device, in FLOP/s.

    ``achievable_matmul_fraction`` maps a dtype to measured dense-GEMM FLOP/s over spec,
    ``achievable_mem_bw_fraction`` is measured streaming bandwidth over spec; both are
    ``None``/absent where no published measurement exists (the expected estimate then uses
    its documented defaults).
    """

    id: str
    name: str
    vendor: str
    year: int
    category: str = "datacenter"
    memory_type: str = ""
    memory_capacity_bytes: float
    memory_capacity_unit: str = "GiB"
    mem_bw_bytes_per_s: float
    dense_peak_flops_per_s: dict[str, float] = field(default_factory=dict)
    # FP16 tensor rate with FP16 accumulation where it exceeds the FP32-accumulate rate the fp16 peak gives (GeForce
    # parts run FP32 accumulation at half rate); None where both rates are equal or no figure is published. Only
    # stacks that ask cuBLAS for FP16 accumulation reach it (engines.Engine.gemm_fp16_accumulate).
    fp16_accumulate_peak_flops_per_s: float | None = None
    interconnect: str = ""
    interconnect_bw_bytes_per_s: float = 0.0
    interconnect_latency_s: float | None = None
    # The scale-up domain: devices joined by ``interconnect`` (8 in an HGX/DGX or MI300X-class platform node, 72 in a
    # GB200/GB300 NVL72 rack); 1 for a card on its own. Nodes join over ``scale_out``: the NIC of each device
    # ("InfiniBand NDR 400 Gb/s (ConnectX-7)"), its bandwidth per direction and per device, its small-message latency
    # (None: topology.SCALE_OUT_LATENCY_S); ``fabric_source`` names the datasheets (topology.py uses them).
    devices_per_node: int = 1
    scale_out: str = ""
    scale_out_bw_unidirectional_bytes_per_s: float = 0.0
    scale_out_latency_s: float | None = None
    fabric_source: str = ""
    l2_cache_bytes: float | None = None
    # Dual-die boards (K80, MI250X) are one preset, but each die is its own device to the runtime;
    # the figures here are per device (the loader divides package figures by this count).
    devices_per_package: int = 1
    tdp_w: float | None = None
    # on-demand cloud price per device-hour (a package's price / devices_per_package), None where none is published;
    # price_source names the offer, its URL and the date it was read
    price_usd_per_hour: float | None = None
    price_source: str = ""
    # how the price is billed: "on-demand" (the list price of an instance, billed while it runs) or "serverless"
    # (billed per second of work, scale to zero); "" unstated. Only on-demand prices compare for "cheapest"
    price_basis: str = ""
    achievable_mem_bw_fraction: float | None = None
    achievable_matmul_fraction: dict[str, float] = field(default_factory=dict)
    source: str = ""
    notes: str = ""
    sources: dict[str, str] = field(default_factory=dict)

    def matmul_peak(self, dtype: str) -> tuple[str, float]:
        """(dtype actually used, dense peak FLOP/s) for a matmul computing in ``dtype``."""
        for candidate in PEAK_FALLBACK_ORDER.get(dtype, (dtype,)):
            peak = self.dense_peak_flops_per_s.get(candidate)
            if peak:
                return candidate, peak
        raise ModelInputError("hardware", f"{self.id} has no peak for {dtype} or any fallback")

    def vector_peak_flops_per_s(self) -> float:
        """Peak for element-wise work (norms, softmax, activations): the FP32 vector rate."""
        return self.matmul_peak("fp32")[1]

    def ridge_flops_per_byte(self, dtype: str) -> float:
        """Arithmetic intensity where the roofline turns: peak FLOP/s / bandwidth."""
        return self.matmul_peak(dtype)[1] / self.mem_bw_bytes_per_s

    @property
    def interconnect_bw_unidirectional_bytes_per_s(self) -> float:
        """Presets give bidirectional aggregate per device; a ring step sends one way."""
        return self.interconnect_bw_bytes_per_s / 2.0
