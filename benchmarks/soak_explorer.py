"""Soak the explorer: tens of thousands of random keys, pastes, palette sessions and resizes (seeded).

    python benchmarks/soak_explorer.py [--keys 20000] [--seed 22]

The suite's fuzz (tests/explorer/test_fuzz_app.py) sends 600; this runs the same mix for as long as asked and
reports keys sent, crashes (each with the last 40 events; the explorer is restarted after one), resizes and the
process's peak RSS. A crash exits 1. Writes only inside a temporary folder (the palette's 'save scenario').
"""

from __future__ import annotations

import argparse
import asyncio
import random
import resource
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from roofline.presets import load_catalog  # noqa: E402
from roofline.tui.inputs.form import ScenarioForm  # noqa: E402
from tests.explorer.test_fuzz_app import BURST, RESIZE_EVERY, FuzzApp, send_event  # noqa: E402


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


async def soak(total_keys: int, seed: int, report_every: int) -> dict:
    rng = random.Random(seed)
    catalog = load_catalog(user_dir=Path(tempfile.mkdtemp(prefix="soak-presets-")))
    sent = resizes = 0
    crashes: list[str] = []
    start = time.perf_counter()
    while sent < total_keys:
        app = FuzzApp(ScenarioForm(), catalog=catalog)  # the explorer without the palette's Quit
        log: list[str] = []
        try:
            async with app.run_test(size=(160, 50)) as pilot:
                await pilot.pause()
                next_resize = sent + rng.randint(RESIZE_EVERY - 10, RESIZE_EVERY + 10)
                while sent < total_keys:
                    for _ in range(BURST):
                        send_event(app, rng, log)
                        sent += 1
                    del log[:-200]
                    await pilot.pause()
                    if not app.is_running:
                        raise RuntimeError(f"the explorer stopped (return code {app.return_code})")
                    if sent >= next_resize:
                        size = (rng.randint(20, 300), rng.randint(10, 100))
                        log.append(f"<resize {size[0]}x{size[1]}>")
                        await pilot.resize_terminal(*size)
                        resizes += 1
                        next_resize = sent + rng.randint(RESIZE_EVERY - 10, RESIZE_EVERY + 10)
                    if sent % report_every < BURST:
                        print(f"  {sent} keys, {resizes} resizes, {time.perf_counter() - start:.0f} s, "
                              f"peak RSS {peak_rss_mib():.0f} MiB", flush=True)
        except Exception as err:  # noqa: BLE001 - a soak counts crashes and goes on
            crashes.append(f"{type(err).__name__}: {err}\n  last events: {log[-40:]}\n"
                           + "".join(traceback.format_exception(err)[-6:]))
            print(f"CRASH after {sent} keys: {crashes[-1]}", flush=True)
    return {"keys": sent, "resizes": resizes, "crashes": crashes, "seconds": time.perf_counter() - start,
            "peak_rss_mib": peak_rss_mib()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--report-every", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="soak-cwd-") as folder:
        import os

        os.chdir(folder)
        result = asyncio.run(soak(args.keys, args.seed, args.report_every))
        written = sorted(p.name for p in Path(folder).rglob("*") if p.is_file())
    print(f"soak: {result['keys']} keys (pastes and palette included), {result['resizes']} resizes, "
          f"{len(result['crashes'])} crashes, {result['seconds']:.0f} s, peak RSS {result['peak_rss_mib']:.0f} MiB, "
          f"files written: {len(written)} ({', '.join(written[:5])})")
    return 1 if result["crashes"] else 0


if __name__ == "__main__":
    sys.exit(main())
