#!/usr/bin/env bash
# One short run on a GPU box, for the closing note of the GPU-helpers issue: what detect finds,
# what measure --device cuda sustains, and a few seconds of live counters where DCGM or NVML has them.
# Usage: bash benchmarks/gpu_box_check.sh [OUT_DIR]   (results as JSON and text files in OUT_DIR)
set -u
out=${1:-${OUT:-gpu-box-check}}
mkdir -p "$out"
py=${PYTHON:-.venv/bin/python}
{ nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader,nounits; echo "exit $?"; } \
  > "$out/nvidia-smi.csv" 2>&1
"$py" -m roofline.tui.cli detect --format json > "$out/detect.json" 2> "$out/detect.err"
"$py" -m roofline.tui.cli measure --device cuda --format json > "$out/measure-cuda.json" 2> "$out/measure-cuda.err"
"$py" -m roofline.tui.cli measure --device cpu --format json > "$out/measure-cpu.json" 2> "$out/measure-cpu.err"
if command -v dcgmi >/dev/null 2>&1; then
  timeout 8 dcgmi dmon -e 1005,1004 -d 1000 -i 0 > "$out/dcgmi-dmon.txt" 2>&1
fi
"$py" - "$out/live.txt" <<'PY'
import sys
from roofline.tui.gpu.live import Unavailable, open_live_source
with open(sys.argv[1], "w") as log:
    opened = open_live_source(0)
    if isinstance(opened, Unavailable):
        print(f"unavailable: {opened.reason}", file=log)
    else:
        with opened as source:
            for _ in range(5):
                print(source.read(timeout_s=2.0), file=log)
PY
ls -l "$out"
