#!/usr/bin/env bash
# Adds VoiceDesk to the desktop's application menu for the current user (no root needed).
# Run it from the unpacked VoiceDesk folder: bash install-desktop-entry.sh
set -euo pipefail
app="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exe="$app/VoiceDesk"
[ -x "$exe" ] || { echo "VoiceDesk executable not found next to this script ($exe)" >&2; exit 1; }
data="${XDG_DATA_HOME:-$HOME/.local/share}"
mkdir -p "$data/applications" "$data/icons/hicolor/256x256/apps" "$data/icons/hicolor/scalable/apps"
cp "$app/_internal/resources/icons/voicedesk-256.png" "$data/icons/hicolor/256x256/apps/voicedesk.png"
cp "$app/_internal/resources/icons/voicedesk.svg" "$data/icons/hicolor/scalable/apps/voicedesk.svg"
# Quote the path for the Exec key (desktop entry spec: double quotes, escape \ " ` $).
quoted="\"$(printf '%s' "$exe" | sed -e 's/[\\"`$]/\\&/g')\""
sed "s|^Exec=.*|Exec=$quoted|" "$app/voicedesk.desktop" > "$data/applications/voicedesk.desktop"
command -v update-desktop-database >/dev/null && update-desktop-database -q "$data/applications" || true
echo "VoiceDesk added to the application menu ($data/applications/voicedesk.desktop)"
