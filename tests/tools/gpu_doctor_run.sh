#!/usr/bin/env bash
# On a GPU machine, from the repository root: the doctor's report, its self-test, the engine benchmark
# (bundle made here first: `python tests/tools/gpu_bench_bundle.py pack .gpubench`) and the fault drills.
# Results go to $OUT (default /tmp/out). QUICK=1 makes one timed run per variant.
export PYTHONPATH=$PWD/desktop:$PWD/.gpubench/site VOICEDESK_HOME=/tmp/vdh PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
runs=(); [ -n "$QUICK" ] && runs=(--warmup 0 --repeats 1)
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv
  python3 -c "import torch,transformers,numpy;print('torch',torch.__version__,torch.version.cuda,torch.backends.cudnn.version(),'transformers',transformers.__version__,'numpy',numpy.__version__)"; } > "$OUT/env.txt" 2>&1
{ python3 -m voicedesk doctor --summary; CUDA_VISIBLE_DEVICES= python3 -m voicedesk doctor --summary; } > "$OUT/summary.txt" 2>&1
python3 -m voicedesk doctor > "$OUT/doctor.txt" 2>&1
timeout 120 python3 -m voicedesk doctor --json --self-test "${runs[@]}" > "$OUT/doctor-cli.json" 2> "$OUT/doctor-cli.err"
timeout 120 python3 tests/tools/gpu_bench_bundle.py run .gpubench "${runs[@]}" > "$OUT/engine.json" 2> "$OUT/engine.err"
timeout 90 python3 tests/tools/gpu_fault_drills.py > "$OUT/drills.json" 2>&1
cat "$OUT/env.txt" "$OUT/summary.txt"
