"""British English → Kokoro phonemes: the English front end reading with misaki's British lexicons and
British unknown-word net, as Kokoro's British voices (bf_*, bm_*) were trained."""

from __future__ import annotations

from voicedesk.core.text import english

MAX_CHARS = english.MAX_CHARS


def phonemize(text: str) -> tuple[str, list[str]]:
    """Phonemes for one sentence (or piece of one), and notices for what could not be read."""
    return english.phonemize(text, british=True)
