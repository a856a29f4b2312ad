"""Live GPU counters on the roofline: a worker samples them, the screen adds each sample as a moving point.

A mixin of :class:`~roofline.tui.explorer.screen.ExplorerScreen`; the sampling itself is :mod:`roofline.tui.probe.live`.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static, TabbedContent

from roofline.tui.views.formatting import si

LIVE_GPU_INDEX = 0  # the live point shows one device; with TP every rank runs the same kernels


class LiveCounters:
    live_trail = None  # probe.live.Trail: the running workload's last points while live counters are on

    def action_toggle_live(self) -> None:
        """Switch live counters on (a worker samples them) or off (the worker stops, the status line goes)."""
        status = self._w("#live-status", Static)
        if status.has_class("-on"):
            for worker in self.app.workers:
                if worker.group == "live" and not worker.is_finished:
                    worker.cancel()
            self.live_trail = None
            status.update("")
            status.remove_class("-on")
            self.draw_view("roofline")
            return
        from roofline.tui.probe.live import Trail

        self._w("#views", TabbedContent).active = "roofline"  # the live point is drawn on the roofline
        self.live_trail = Trail()
        status.add_class("-on")
        status.update(f"live: looking for counters on GPU {LIVE_GPU_INDEX} (dcgmi dmon, then NVML GPM)...")
        self.run_worker(self._sample_live, thread=True, exclusive=True, group="live", exit_on_error=False)

    def _sample_live(self) -> None:
        """Thread worker: open a counter source, then post one sample a second until cancelled."""
        from textual.worker import get_current_worker

        from roofline.tui.probe.live import Unavailable, open_live_source

        worker = get_current_worker()
        opened = open_live_source(LIVE_GPU_INDEX)
        if isinstance(opened, Unavailable):
            self.app.call_from_thread(self._live_unavailable, opened.reason)
            return
        with opened as source:
            while not worker.is_cancelled:
                sample = source.read(timeout_s=0.5)
                if worker.is_cancelled:
                    return
                if sample is not None:
                    self.app.call_from_thread(self._add_live_sample, sample, source.name)
                elif source.failure is not None:
                    self.app.call_from_thread(self._live_unavailable, source.failure)
                    return

    def _live_unavailable(self, reason: str) -> None:
        self.live_trail = None
        self._w("#live-status", Static).update(Text(f"live counters unavailable: {reason} (l to close)"))

    def _add_live_sample(self, sample, source_name: str) -> None:
        """One probe.live.ActivitySample: a new point on the roofline at the current device's spec ceilings."""
        from roofline.tui.probe.live import sample_to_point

        r = self.results
        if self.live_trail is None or r is None:
            return  # switched off meanwhile
        hw = r.scenario.hardware
        point = sample_to_point(sample, spec_mem_bw_bytes_per_s=hw.mem_bw_bytes_per_s,
                                spec_peak_flops_per_s=r.spec.matmul_flops_per_s)
        self.live_trail.add(point)
        ai = point.arithmetic_intensity_flop_per_byte
        self._w("#live-status", Static).update(Text(
            f"live GPU {sample.gpu_index} via {source_name}: DRAM {sample.dram_active:.0%} x "
            f"{si(hw.mem_bw_bytes_per_s, 'B/s')} = {si(point.achieved_bytes_per_s, 'B/s')}, tensor "
            f"{sample.tensor_active:.0%} x {si(r.spec.matmul_flops_per_s, 'FLOP/s')} = "
            f"{si(point.achieved_flops_per_s, 'FLOP/s')}, {'-' if ai is None else f'{ai:,.1f}'} FLOP/B "
            f"(whole-device averages; l stops)"))
        if self._w("#views", TabbedContent).active == "roofline":
            self.draw_view("roofline")
