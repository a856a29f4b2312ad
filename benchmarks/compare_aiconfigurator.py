"""The same serving grid through roofline's ``expected`` and NVIDIA's aiconfigurator, ratios per metric.

aiconfigurator (pip ``aiconfigurator``, measured per-kernel databases per GPU and engine; runs offline) is a peer to
learn mechanisms from: never a runtime dependency and never a fitting target. It lives in its own virtual
environment (``python3 -m venv /tmp/aic && /tmp/aic/bin/pip install aiconfigurator``); this script calls it there
through a subprocess running this same file with ``--aic-worker`` (``aiconfigurator.cli.api.cli_estimate``,
``mode="agg"``: one aggregated worker, in-flight batching, at the point's concurrency).

The grid (issue 27): Llama-3.1-8B (TP 1), Llama-3.1-70B (TP 4), Mixtral-8x7B (TP 2), Qwen3-235B-A22B (TP 8), bf16;
H100 SXM, H200, B200; vLLM, SGLang, TensorRT-LLM; concurrency 1, 16, 64; ISL/OSL 2048/300, 4000/500, 1000/1000
(one pair per point, in turn, to keep the run short; ``--full`` takes every pair). Points aiconfigurator has no
database for are skipped and counted. Ratios are roofline / aiconfigurator for tok/s per user, tok/s per device,
ITL (its TPOT) and TTFT: the median and the 80th percentile of |ratio - 1| per metric.

Run: ``.venv/bin/python benchmarks/compare_aiconfigurator.py --aic-python /tmp/aic/bin/python``. ``--aic-cache
FILE`` keeps aiconfigurator's answers (they do not change between roofline versions), so a before/after comparison
runs it once; ``--roofline-path DIR`` imports ``roofline`` from DIR first (a package shim over another checkout).
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
from pathlib import Path

MODELS = {  # roofline preset -> (aiconfigurator model path, TP)
    "llama-3.1-8b": ("meta-llama/Meta-Llama-3.1-8B", 1),
    "llama-3.1-70b": ("meta-llama/Meta-Llama-3.1-70B", 4),
    "mixtral-8x7b": ("mistralai/Mixtral-8x7B-v0.1", 2),
    "qwen3-235b-a22b": ("Qwen/Qwen3-235B-A22B", 8),
}
MOE_MODELS = ("mixtral-8x7b", "qwen3-235b-a22b")  # experts split by TP (moe_tp_size = TP, no expert parallelism)
HARDWARE = {"h100-sxm": "h100_sxm", "h200": "h200_sxm", "b200": "b200_sxm"}
ENGINES = ("vllm", "sglang", "trtllm")
CONCURRENCIES = (1, 16, 64)
LENGTHS = ((2048, 300), (4000, 500), (1000, 1000))
METRICS = ("tokens_per_s_per_user", "tokens_per_s_per_device", "itl_s", "ttft_s")


def grid(full: bool) -> list[dict]:
    points = []
    for i, (model, hw, engine, conc) in enumerate(itertools.product(MODELS, HARDWARE, ENGINES, CONCURRENCIES)):
        pairs = LENGTHS if full else (LENGTHS[i % len(LENGTHS)],)
        for isl, osl in pairs:
            points.append({"model": model, "hardware": hw, "engine": engine, "concurrency": conc, "isl": isl,
                           "osl": osl})
    return points


def _key(p: dict) -> str:
    return f"{p['model']}|{p['hardware']}|{p['engine']}|{p['concurrency']}|{p['isl']}|{p['osl']}"


def aic_worker() -> None:
    """Inside aiconfigurator's venv: read points (JSON) on stdin, print their estimates (JSON) on stdout."""
    import contextlib
    import io
    import logging

    logging.disable(logging.WARNING)
    import tempfile

    import aiconfigurator_core
    from aiconfigurator.cli.api import cli_estimate
    from aiconfigurator_core.sdk.utils import DefaultHFModels

    bundled = Path(aiconfigurator_core.__file__).parent / "model_configs"
    local = Path(tempfile.mkdtemp(prefix="aic-models-"))

    def model_ref(path: str) -> str:
        """A model aiconfigurator ships a config for but does not list (Mixtral): a local folder holding it."""
        if path in DefaultHFModels:
            return path
        folder = local / path.replace("/", "--")
        folder.mkdir(exist_ok=True)
        (folder / "config.json").write_text((bundled / f"{path.replace('/', '--')}_config.json").read_text())
        return str(folder)

    out = {}
    for p in json.load(sys.stdin):
        model_path, tp = MODELS[p["model"]]
        moe = {"moe_tp_size": tp, "moe_ep_size": 1} if p["model"] in MOE_MODELS else {}
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                r = cli_estimate(model_ref(model_path), HARDWARE[p["hardware"]], mode="agg",
                                 backend_name=p["engine"], isl=p["isl"], osl=p["osl"], batch_size=p["concurrency"],
                                 tp_size=tp, **moe)
            raw = r.raw
            out[_key(p)] = {"tokens_per_s_per_user": float(raw["tokens/s/user"]),
                            "tokens_per_s_per_device": float(raw["tokens/s/gpu"]),
                            "itl_s": float(raw["tpot"]) / 1e3, "ttft_s": float(raw["ttft"]) / 1e3}
        except Exception as err:  # a point without a database: recorded, skipped
            out[_key(p)] = {"error": f"{type(err).__name__}: {str(err)[:200]}"}
    json.dump(out, sys.stdout)


def aic_results(points: list[dict], python: str, cache: Path | None) -> dict:
    known = json.loads(cache.read_text()) if cache is not None and cache.is_file() else {}
    missing = [p for p in points if _key(p) not in known]
    if missing:
        run = subprocess.run([python, __file__, "--aic-worker"], input=json.dumps(missing), capture_output=True,
                             text=True, timeout=3600, check=True)
        known.update(json.loads(run.stdout))
        if cache is not None:
            cache.write_text(json.dumps(known, indent=1))
    return known


def roofline_results(points: list[dict]) -> dict:
    from dataclasses import replace

    from roofline.models.scenario import Parallelism, Scenario
    from roofline.models.serving import ServingMix, frontier
    from roofline.presets import load_hardware, load_model

    out = {}
    for p in points:
        model = load_model(p["model"])
        s = Scenario(hardware=load_hardware(p["hardware"]), model=model,
                     parallelism=Parallelism(tp=MODELS[p["model"]][1]))
        s = replace(s, engine=p["engine"])
        point = frontier(s, ServingMix(prompt_tokens=p["isl"], output_tokens=p["osl"]), [p["concurrency"]]).points[0]
        out[_key(p)] = {"tokens_per_s_per_user": point.tokens_per_s_per_user,
                        "tokens_per_s_per_device": point.tokens_per_s_per_device, "itl_s": point.itl_s,
                        "ttft_s": point.ttft_s, "fits": point.fits}
    return out


def summary(points: list[dict], ours: dict, theirs: dict) -> dict:
    import numpy as np

    ratios = {m: [] for m in METRICS}
    skipped = 0
    for p in points:
        a, b = ours[_key(p)], theirs.get(_key(p), {"error": "missing"})
        if "error" in b or not a["fits"]:
            skipped += 1
            continue
        for m in METRICS:
            if b[m] > 0:
                ratios[m].append(a[m] / b[m])
    return {"points": len(points), "compared": len(points) - skipped, "skipped": skipped,
            **{m: {"median_ratio": float(np.median(r)), "p80_abs_ratio_minus_1": float(np.percentile(
                np.abs(np.asarray(r) - 1.0), 80))} for m, r in ratios.items() if r}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aic-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--aic-python", default="/tmp/aic/bin/python", help="python of aiconfigurator's venv")
    parser.add_argument("--aic-cache", type=Path, help="JSON file keeping aiconfigurator's answers")
    parser.add_argument("--roofline-path", help="import roofline from this folder first")
    parser.add_argument("--full", action="store_true", help="every ISL/OSL pair at every point")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args()
    if args.aic_worker:
        aic_worker()
        return
    if args.roofline_path:
        sys.path.insert(0, args.roofline_path)
        sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
    points = grid(args.full)
    result = summary(points, roofline_results(points), aic_results(points, args.aic_python, args.aic_cache))
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{result['compared']} of {result['points']} points compared ({result['skipped']} skipped: no "
          "aiconfigurator database, or the point does not fit roofline's KV blocks)")
    for m in METRICS:
        if m in result:
            r = result[m]
            print(f"{m:26} median ratio {r['median_ratio']:.2f}  p80 |ratio - 1| {r['p80_abs_ratio_minus_1']:.2f}")


if __name__ == "__main__":
    main()
