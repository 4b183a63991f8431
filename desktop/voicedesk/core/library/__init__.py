"""The user's saved voices and take history, stored with atomic writes so a crash never corrupts them."""

from voicedesk.core.library.takes import Take, TakeHistory
from voicedesk.core.library.voicefile import SavedVoice
from voicedesk.core.library.voices import VoiceLibrary

__all__ = ["SavedVoice", "Take", "TakeHistory", "VoiceLibrary"]
