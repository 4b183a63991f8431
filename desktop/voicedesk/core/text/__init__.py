"""Language front ends: text → Kokoro-82M phoneme chunks (English, Japanese, Mandarin Chinese).

    chunks = phonemize("Dr. Smith paid $3.50.", language="en")
    chunks[0].phonemes, chunks[0].notices

Dictionaries and ONNX sessions load on first use, not at import.
"""

from voicedesk.core.languages import LANGUAGES
from voicedesk.core.text.phonemize import MAX_PHONEMES, PhonemeChunk, TextError, phonemize
from voicedesk.core.text.vocab import kokoro_vocab, phoneme_ids

__all__ = [
    "LANGUAGES",
    "MAX_PHONEMES",
    "PhonemeChunk",
    "TextError",
    "kokoro_vocab",
    "phoneme_ids",
    "phonemize",
]
