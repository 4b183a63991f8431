#!/usr/bin/env bash
# Builds the double-click app: dist/VoiceDesk/ (one folder, Kokoro weights inside), then smoke-tests it.
#   bash packaging/build.sh              set up .venv if needed, convert weights, build, strip, self-test
#   bash packaging/build.sh --no-test    skip the frozen self-test
# Linux. Windows: packaging/build.ps1. The CUDA build is the same script run in a .venv holding a CUDA
# torch wheel (docs/packaging.md).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
run_test=1
[ "${1:-}" = "--no-test" ] && run_test=0

bash packaging/bootstrap.sh --dev   # PyInstaller is in the dev extra
py="$root/.venv/bin/python"

echo "== converting Kokoro weights into models/ (skipped when up to date)"
"$py" packaging/prepare_models.py --out "$root/models"
echo "== Kokoro's stock voices and their profile for clone reports into models/ (skipped when there)"
"$py" -m voicedesk voices add-stock --if-missing \
  || echo "Warning: the stock voices were not all added and profiled; the bundle may have only the five Japanese-trained ones." >&2

echo "== PyInstaller"
start=$(date +%s)
"$py" -m PyInstaller --noconfirm --log-level WARN \
  --distpath "$root/dist" --workpath "$root/build/pyinstaller" packaging/voicedesk.spec
app="$root/dist/VoiceDesk"

# libtorch carries symbol tables it never needs at run time; stripping only these two is safe
# (strip=True in the spec would also strip numpy's OpenBLAS, which then fails to load).
if command -v strip >/dev/null; then
  for lib in "$app"/_internal/torch/lib/libtorch_cpu.so "$app"/_internal/torch/lib/libtorch_python.so; do
    [ -f "$lib" ] && strip --strip-unneeded "$lib"
  done
fi

# Where a user drops additional models (the converted Kokoro weights live inside _internal/models).
mkdir -p "$app/models"
cp packaging/models-README.txt "$app/models/README.txt"
cp packaging/voicedesk.desktop packaging/install-desktop-entry.sh "$app/"
echo "built $app in $(( $(date +%s) - start )) s; size $(du -sh "$app" | cut -f1)"

if [ "$run_test" = 1 ]; then
  bash packaging/smoke-test.sh "$app"
fi
