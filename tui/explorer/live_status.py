"""Live GPU counters on the roofline: a worker samples them, this line says what they read, and each sample goes up
as :class:`~roofline.tui.messages.LivePoints` (the screen draws them on the roofline). The sampling itself is
:mod:`roofline.tui.probe.live`."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from roofline.tui.messages import LivePoints
from roofline.tui.views.chart_data import live_points_log10
from roofline.tui.views.formatting import si
from roofline.tui.views.state import ExplorerState

LIVE_GPU_INDEX = 0  # the live point shows one device; with TP every rank runs the same kernels


class LiveStatus(Static):
    """The live counters' status line under the roofline; ``trail`` holds the last points while they are on."""

    def __init__(self) -> None:
        super().__init__(id="live-status", markup=False)
        self.trail = None  # probe.live.Trail while live counters are on
        self.state: ExplorerState | None = None  # the scenario a sample is placed against (set by the screen)

    @property
    def on(self) -> bool:
        return self.has_class("-on")

    def toggle(self) -> None:
        """Switch live counters on (a worker samples them) or off (the worker stops, the line goes)."""
        if self.on:
            self.workers.cancel_group(self, "live")
            self.trail = None
            self.update("")
            self.remove_class("-on")
            self.post_message(LivePoints(()))
            return
        from roofline.tui.probe.live import Trail

        self.trail = Trail()
        self.add_class("-on")
        self.update(f"live: looking for counters on GPU {LIVE_GPU_INDEX} (dcgmi dmon, then NVML GPM)...")
        self.run_worker(self._sample, thread=True, exclusive=True, group="live", exit_on_error=False)

    def _sample(self) -> None:
        """Thread worker: open a counter source, then hand one sample a second to the widget until cancelled."""
        from textual.worker import get_current_worker

        from roofline.tui.probe.live import Unavailable, open_live_source

        worker = get_current_worker()
        opened = open_live_source(LIVE_GPU_INDEX)
        if isinstance(opened, Unavailable):
            self.app.call_from_thread(self._unavailable, opened.reason)
            return
        with opened as source:
            while not worker.is_cancelled:
                sample = source.read(timeout_s=0.5)
                if worker.is_cancelled:
                    return
                if sample is not None:
                    self.app.call_from_thread(self._add_sample, sample, source.name)
                elif source.failure is not None:
                    self.app.call_from_thread(self._unavailable, source.failure)
                    return

    def _unavailable(self, reason: str) -> None:
        self.trail = None
        self.update(Text(f"live counters unavailable: {reason} (l to close)"))

    def _add_sample(self, sample, source_name: str) -> None:
        """One probe.live.ActivitySample: a new point at the current device's spec ceilings."""
        from roofline.tui.probe.live import sample_to_point

        if self.trail is None or self.state is None:
            return  # switched off meanwhile
        r = self.state.results
        hw = r.scenario.hardware
        point = sample_to_point(sample, spec_mem_bw_bytes_per_s=hw.mem_bw_bytes_per_s,
                                spec_peak_flops_per_s=r.spec.matmul_flops_per_s)
        self.trail.add(point)
        ai = point.arithmetic_intensity_flop_per_byte
        self.update(Text(
            f"live GPU {sample.gpu_index} via {source_name}: DRAM {sample.dram_active:.0%} x "
            f"{si(hw.mem_bw_bytes_per_s, 'B/s')} = {si(point.achieved_bytes_per_s, 'B/s')}, tensor "
            f"{sample.tensor_active:.0%} x {si(r.spec.matmul_flops_per_s, 'FLOP/s')} = "
            f"{si(point.achieved_flops_per_s, 'FLOP/s')}, {'-' if ai is None else f'{ai:,.1f}'} FLOP/B "
            f"(whole-device averages; l stops)"))
        self.post_message(LivePoints(live_points_log10(self.trail)))
