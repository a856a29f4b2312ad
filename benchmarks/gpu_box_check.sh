#!/usr/bin/env bash
# One short run on a GPU box, for the closing note of the GPU-helpers issue: what detect finds (NVML and
# nvidia-smi), what measure --device cuda sustains, a saved measured preset in a report, live counters under a
# known load (a bf16 GEMM loop, then a device copy loop), and the explorer opened as `roofline` would open it.
# Usage: bash benchmarks/gpu_box_check.sh [OUT_DIR]   (results as JSON, text and SVG files in OUT_DIR)
# PYTHON picks the interpreter (default .venv/bin/python); it needs the package and, for measure, PyTorch.
set -u
out=${1:-${OUT:-gpu-box-check}}
mkdir -p "$out"
py=${PYTHON:-.venv/bin/python}
here=$(cd "$(dirname "$0")" && pwd)
roofline() { "$py" -m roofline.tui.cli "$@"; }
step() { echo "== $* ($(date +%T))"; }

step nvidia-smi
{ nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader,nounits
  echo "exit $?"; } > "$out/nvidia-smi.csv" 2>&1
cat "$out/nvidia-smi.csv"

step detect
roofline detect --format json > "$out/detect.json" 2> "$out/detect.err"; echo "exit $?"
cat "$out/detect.json"
"$py" - > "$out/detect-no-nvml.json" <<'PY'
import json
from roofline.tui.detect_cli import detection_json
from roofline.tui.gpu.detect import detect_accelerators
print(json.dumps(detection_json(detect_accelerators(use_nvml=False)), indent=2))
PY
echo "without NVML: $(grep -E '"(source|preset)"' "$out/detect-no-nvml.json" | tr -d '\n ')"

step measure cuda
roofline measure --device cuda --format json > "$out/measure-cuda.json" 2> "$out/measure-cuda.err"; echo "exit $?"
cat "$out/measure-cuda.json"; tail -n 3 "$out/measure-cuda.err"

step measure cuda --save, then report on the saved preset
export ROOFLINE_PRESETS="$out/presets"
roofline measure --device cuda --quick --save --id h200-measured > "$out/measure-save.txt" 2>&1; echo "exit $?"
cat "$out/measure-save.txt"
roofline report --hardware h200-measured --model llama-3.1-70b --batch 32 --format json \
  > "$out/report-measured.json" 2> "$out/report-measured.err"; echo "exit $?"
unset ROOFLINE_PRESETS

step measure cpu quick
roofline measure --device cpu --quick --format json > "$out/measure-cpu.json" 2> "$out/measure-cpu.err"; echo "exit $?"

if command -v dcgmi >/dev/null 2>&1; then
  step dcgmi
  timeout 8 dcgmi dmon -e 1005,1004 -d 1000 -i 0 > "$out/dcgmi-dmon.txt" 2>&1
  cat "$out/dcgmi-dmon.txt"
else
  echo "no dcgmi on this box" > "$out/dcgmi-dmon.txt"
fi

# A known load on GPU 0 for the live readings: bf16 GEMMs (tensor-bound), then copies (DRAM-bound).
load() {
  "$py" - "$1" "$2" <<'PY' &
import sys, time, torch
kind, seconds = sys.argv[1], float(sys.argv[2])
end = time.monotonic() + seconds
if kind == "gemm":
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16); b = torch.randn_like(a)
    while time.monotonic() < end:
        for _ in range(20): a @ b
        torch.cuda.synchronize()
else:
    x = torch.empty(2 << 30, dtype=torch.uint8, device="cuda"); y = torch.empty_like(x)
    while time.monotonic() < end:
        for _ in range(20): y.copy_(x)
        torch.cuda.synchronize()
PY
}
live() {
  "$py" - "$1" <<'PY'
import sys, time
from roofline.tui.gpu.live import Unavailable, open_live_source, sample_to_point
H200_BW, H200_BF16 = 4.8e12, 989.4e12
with open(sys.argv[1], "w") as log:
    opened = open_live_source(0)
    if isinstance(opened, Unavailable):
        print(f"unavailable: {opened.reason}", file=log)
    else:
        with opened as source:
            for _ in range(6):
                sample = source.read(timeout_s=2.5)
                point = sample and sample_to_point(sample, spec_mem_bw_bytes_per_s=H200_BW, spec_peak_flops_per_s=H200_BF16)
                print(sample, point, sep="\n  ", file=log)
PY
  cat "$1"
}
step live under a bf16 GEMM loop
load gemm 12; sleep 3; live "$out/live-gemm.txt"; wait
step live under a copy loop
load copy 12; sleep 3; live "$out/live-copy.txt"; wait

step explorer with detection, live under a GEMM loop
load gemm 20; sleep 3
timeout 120 "$py" "$here/gpu_box_explorer.py" "$out" 8; echo "exit $?"
wait
ls -l "$out"
