#!/usr/bin/env bash
# System packages the tests need: PortAudio + PulseAudio (virtual microphone and speaker), Xvfb and
# the xcb libraries Qt's window plugin needs, the development voices (espeak-ng, MBROLA, sox), and
# binutils (PyInstaller reads and strips the bundled libraries with objdump and strip).
# MBROLA voices live in Debian's contrib/non-free components: a private apt source list adds them
# without touching /etc/apt.
set -euo pipefail
need=(libportaudio2 pulseaudio pulseaudio-utils libasound2-plugins xvfb xauth imagemagick
      libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxcb-xinerama0 libxcb-xkb1
      libxkbcommon-x11-0 libxcb-cursor0 libxcb-shape0 libegl1 libgl1 libfontconfig1 libdbus-1-3
      espeak-ng sox mbrola mbrola-us1 mbrola-us2 mbrola-en1 binutils)
missing=()
for p in "${need[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
[ "${#missing[@]}" -eq 0 ] && exit 0
sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
d=$(mktemp -d); chmod 755 "$d"; mkdir -p "$d/parts" "$d/lists/partial"
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  sed 's/^Components: main$/Components: main contrib non-free/' /etc/apt/sources.list.d/debian.sources > "$d/parts/extra.sources"
  o=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$d/parts" -o "Dir::State::Lists=$d/lists")
else
  o=()
fi
$sudo apt-get "${o[@]}" update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get "${o[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
rm -rf "$d"
