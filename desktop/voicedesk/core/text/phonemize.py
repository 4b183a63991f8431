"""Text → Kokoro phoneme chunks: clean, split into sentences, run the language's front end, and cut
anything too long for the model (510 tokens with the two boundary tokens) into smaller chunks."""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, cast

from voicedesk.core.errors import InputError, ModelError
from voicedesk.core.languages import LANGUAGES
from voicedesk.core.text.cleanup import remove_invisible
from voicedesk.core.text.sentences import halve, split_long, split_sentences
from voicedesk.core.text.vocab import kokoro_vocab

# Front-end module per language: `phonemize(text) -> (phonemes, notices)` and `MAX_CHARS`.
_FRONT_ENDS = {"en": "english", "en-gb": "british", "ja": "japanese", "zh": "chinese"}
MAX_PHONEMES = 400  # per chunk; leaves room under the model's 510 for pauses and boundary tokens
_SILENT = frozenset(';:,.!?—…"()“” ')


class TextError(InputError):
    """The text cannot be spoken (empty, nothing readable, unknown language)."""


@dataclass(frozen=True)
class PhonemeChunk:
    """One piece of the input, spoken in one model call."""

    text: str  # the original words this chunk reads
    phonemes: str  # Kokoro symbols, all in the model's vocabulary, at most MAX_PHONEMES
    language: str
    notices: tuple[str, ...] = ()  # what was skipped or read specially, for the user


Phonemizer = Callable[[str], tuple[str, list[str]]]


class FrontEnd(Protocol):
    """What each language module provides."""

    MAX_CHARS: int  # text is pre-split to this many characters before it is read

    def phonemize(self, text: str) -> tuple[str, list[str]]: ...


def phonemize(text: str, language: str = "en") -> list[PhonemeChunk]:
    """Chunks in reading order; raises TextError when nothing in `text` can be spoken."""
    front_end = _front_end(language)
    if not isinstance(text, str) or not text.strip():
        raise TextError("There is no text to speak; type a sentence or choose a file that contains one.")
    text, pending = remove_invisible(text)
    chunks: list[PhonemeChunk] = []
    for sentence in split_sentences(text):
        for piece in split_long(" ".join(sentence.split()), front_end.MAX_CHARS):
            for piece_text, phonemes, notices in _read(piece, front_end.phonemize, language):
                pending += notices
                if not (set(phonemes) - _SILENT):  # nothing audible: keep its notices for the next chunk
                    continue
                chunks.append(PhonemeChunk(piece_text, phonemes, language, tuple(pending)))
                pending = []
    if not chunks:
        detail = " ".join(dict.fromkeys(pending))
        raise TextError(
            f"Nothing in this text can be spoken in {LANGUAGES[language]}. {detail} "
            "Type words in the chosen language, or choose another language.".replace("  ", " ")
        )
    if pending:
        chunks[-1] = dataclasses.replace(chunks[-1], notices=chunks[-1].notices + tuple(pending))
    return chunks


def _front_end(language: str) -> FrontEnd:
    if language not in _FRONT_ENDS:
        choices = ", ".join(f"{code} ({name})" for code, name in LANGUAGES.items())
        raise TextError(f"Unknown language {language!r}; choose one of: {choices}.")
    return cast(FrontEnd, importlib.import_module(f"voicedesk.core.text.{_FRONT_ENDS[language]}"))


def _read(text: str, g2p: Phonemizer, language: str) -> list[tuple[str, str, list[str]]]:
    try:
        return _bounded(text, g2p)
    except ImportError as err:  # a reader's package is missing from the installation
        raise ModelError(
            f"The {LANGUAGES[language]} text reader cannot load ({err.name or err} is missing); "
            "reinstall VoiceDesk (bash run.sh installs what it needs)."
        ) from err


def _bounded(text: str, g2p: Phonemizer) -> list[tuple[str, str, list[str]]]:
    """(text, phonemes, notices) pieces of `text`, each with at most MAX_PHONEMES symbols: a piece that
    reads too long is cut to the length its phonemes-per-character ratio allows, and read again."""
    phonemes, notices = g2p(text)
    phonemes, dropped = _in_vocab(phonemes)
    notices += dropped
    if len(phonemes) <= MAX_PHONEMES:
        return [(text, phonemes, notices)]
    if len(text) < 2:  # one character reading past the limit: cut its reading, say so
        notices.append(f"Cut the reading of “{text}” short; it was too long to speak in one piece.")
        return [(text, phonemes[:MAX_PHONEMES], notices)]
    # Each piece is read afresh and reports its own notices.
    budget = len(text) * MAX_PHONEMES * 4 // (len(phonemes) * 5)
    pieces = split_long(text, budget) if budget >= 3 else []
    if len(pieces) < 2:
        pieces = list(halve(text))
    return [part for piece in pieces for part in _bounded(piece, g2p)]


def _in_vocab(phonemes: str) -> tuple[str, list[str]]:
    vocab = kokoro_vocab()
    if all(symbol in vocab for symbol in phonemes):
        return phonemes, []
    unknown = sorted({symbol for symbol in phonemes if symbol not in vocab})
    kept = "".join(symbol for symbol in phonemes if symbol in vocab)
    return kept, [f"Left out phoneme symbols the voice model does not know: {' '.join(unknown)}."]
