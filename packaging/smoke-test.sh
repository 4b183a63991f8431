#!/usr/bin/env bash
# Runs the frozen app's headless self-test and fails on a non-zero exit or any import/library error
# in its output (a frozen app can log a failed optional import and still exit 0).
#   bash packaging/smoke-test.sh [dist/VoiceDesk]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
app="${1:-$root/dist/VoiceDesk}"
exe="$app/VoiceDesk"
[ -x "$exe" ] || { echo "no executable at $exe: run bash packaging/build.sh first" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
log="$work/self-test.log"
# A fresh user folder and no converted-weights cache: the weights must come from the bundle.
# No network either: anything that tries a hub download fails instead of hiding a missing file.
set +e
env -u VOICEDESK_CACHE VOICEDESK_HOME="$work/home" QT_QPA_PLATFORM=offscreen \
  HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
  "$exe" --self-test --out "$work/out" --report "$work/report.json" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -ne 0 ]; then
  echo "FAIL: frozen self-test exited $rc" >&2
  exit 1
fi
if grep -E "ImportError|ModuleNotFoundError|cannot open shared object|No module named|Traceback" "$log" >&2; then
  echo "FAIL: import or library errors in the frozen self-test output (above)" >&2
  exit 1
fi
# Kokoro's stock voices travel in the bundle when the build had them (models/kokoro-voices-v1.0.safetensors).
if [ -f "$root/models/kokoro-voices-v1.0.safetensors" ]; then
  count="$(env -u VOICEDESK_CACHE VOICEDESK_HOME="$work/home" "$exe" voices 2>/dev/null | grep -c $'\tstock\t' || true)"
  if [ "$count" != 54 ]; then
    echo "FAIL: the bundle lists $count stock voices, not Kokoro's 54" >&2
    exit 1
  fi
  echo "OK: the bundle lists Kokoro's 54 stock voices"
  # ... and their judge profile, with which a clone's report names the closest of them.
  if ! grep -q '"closest_stock": "' "$work/report.json"; then
    echo "FAIL: the frozen clone's report names no closest stock voice (models/kokoro-voices-v1.0.judge.safetensors)" >&2
    exit 1
  fi
  echo "OK: the frozen clone's report names the closest stock voice"
fi
echo "OK: frozen self-test passed"
