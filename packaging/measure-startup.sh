#!/usr/bin/env bash
# Start-up time to a visible window: launches VoiceDesk on a private Xvfb display and reports the
# seconds until its main window is mapped and viewable (xwininfo), i.e. on screen for a user.
#   bash packaging/measure-startup.sh [runs] [command...]
# Default command: dist/VoiceDesk/VoiceDesk (the frozen app). Example for the source app:
#   bash packaging/measure-startup.sh 3 .venv/bin/voicedesk
# Needs Xvfb and xwininfo (Debian: xvfb, x11-utils).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs="${1:-3}"
shift || true
cmd=("$@")
[ "${#cmd[@]}" -eq 0 ] && cmd=("$root/dist/VoiceDesk/VoiceDesk")

work="$(mktemp -d)"
xvfb_pid=""
app_pid=""
cleanup() {
  [ -n "$app_pid" ] && kill "$app_pid" 2>/dev/null && wait "$app_pid" 2>/dev/null
  [ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

Xvfb -displayfd 5 -screen 0 1280x1024x24 -nolisten tcp 5>"$work/display" 2>/dev/null &
xvfb_pid=$!
for _ in $(seq 100); do [ -s "$work/display" ] && break; sleep 0.1; done
export DISPLAY=":$(cat "$work/display")"
unset QT_QPA_PLATFORM

for run in $(seq "$runs"); do
  start=$(date +%s.%N)
  VOICEDESK_HOME="$work/home" "${cmd[@]}" >"$work/app.log" 2>&1 &
  app_pid=$!
  until xwininfo -name VoiceDesk 2>/dev/null | grep -q "Map State: IsViewable"; do
    kill -0 "$app_pid" 2>/dev/null || { echo "VoiceDesk exited before showing a window:" >&2; cat "$work/app.log" >&2; exit 1; }
    sleep 0.02
  done
  end=$(date +%s.%N)
  printf 'run %d: window visible after %.2f s\n' "$run" "$(echo "$end - $start" | bc -l)"
  kill "$app_pid"; wait "$app_pid" 2>/dev/null || true
  app_pid=""
done
