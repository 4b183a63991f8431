"""The languages VoiceDesk reads text in: code → name. Kept apart from the text front ends so that the command
line can offer them without loading those at every start."""

from __future__ import annotations

LANGUAGES: dict[str, str] = {
    "en": "English", "en-gb": "British English", "ja": "Japanese", "zh": "Mandarin Chinese",
}
