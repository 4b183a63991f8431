#!/usr/bin/env bash
# The one command: sets VoiceDesk up on first run, then starts it.
#   bash run.sh                 opens the window
#   bash run.sh say --voice jf_alpha --text "Hello." -o hello.wav
#   bash run.sh doctor          GPU / CUDA / cuDNN report
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$root/packaging/bootstrap.sh"
vd="$root/.venv/bin/voicedesk"
if [ "$#" -eq 0 ] || [ "$1" = "gui" ]; then
  "$vd" doctor --summary || true
fi
exec "$vd" "$@"
