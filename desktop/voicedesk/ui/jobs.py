"""The model work the window submits to the worker: each a generator run on the worker thread.

These adapt the core's generators to the worker's vocabulary (progress items, then a returned
result). The core's model code is imported inside the generators, so torch loads on the worker
thread, after the window is already on screen. Closing one of these generators (a cancel) closes
the core generator it drives, and nothing is saved until the work is complete.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import Any

from voicedesk.core.engine.config import NEUTRAL_PITCH, Pitch
from voicedesk.core.engine.envelope import EnvelopeMap

LOADING_ENGINE = "Loading voice engine…"


@contextlib.contextmanager
def _closing(iterator: Iterator[Any]) -> Iterator[None]:
    """Close a core generator when the job ends early (cancel or failure), so its cleanup runs now."""
    try:
        yield
    finally:
        close = getattr(iterator, "close", None)
        if close is not None:
            close()


def load_engine(device: str) -> Generator[str, None, Any]:
    yield LOADING_ENGINE
    from voicedesk.core.engine import Engine

    engine = Engine.load(device)
    yield from warm_up(engine)
    return engine


def warm_up(engine: Any) -> Generator[str, None, None]:
    """Do now what would otherwise happen at the first clone or Speak: parsing the pronunciation
    dictionary and starting the speaker encoders each hold the GIL for 0.1–0.5 s, which freezes the
    window (Python threads share one interpreter lock); while loading, nobody is waiting."""
    yield "Loading the English pronunciation dictionaries…"
    from voicedesk.core.text import phonemize

    phonemize("Hello.", "en")
    phonemize("Hello.", "en-gb")  # the British one too (0.3 s, 100 MB): a first British line must not freeze
    yield "Loading the speaker encoders…"
    clone_tools(str(engine.device))
    import voicedesk.core.clone.fit  # noqa: F401 - its imports, too, are better paid for now


def prepare_graphs(engine: Any) -> Generator[int, None, int]:
    """Background work after loading: capture synthesis's CUDA graphs one sentence length at a time
    (seconds each; speech is eager, not slower than before, until a length's graph exists)."""
    captured = 0
    for captured in engine.prepare_graphs_steps():
        yield captured
    return captured


# --- cloning ------------------------------------------------------------------------------------------


@functools.cache
def clone_tools(device: str) -> tuple[Any, Any]:
    """The speaker encoder fitting optimises (GE2E) and the independent judge, built once per device."""
    from voicedesk.core.clone.ge2e import GE2E
    from voicedesk.core.clone.judge import Judge

    return GE2E(device), Judge()


CLOSEST_SHOWN = 3  # stock voices named beside a prompt before it is cloned


def closest_stock_voices(engine: Any, prompt: Any) -> Generator[None, None, list[tuple[str, float]]]:
    """The stock voices the judge hears closest to `prompt` (an intake Prompt), with their similarity: a user may
    find one close enough without cloning. [] without the stock voices' profile (setup builds it)."""
    from voicedesk.core.clone import stock_profile
    from voicedesk.core.clone.fit import CHECK_TEXT
    from voicedesk.core.clone.judge import trim_edges

    profile = stock_profile.current(engine, CHECK_TEXT)
    yield None  # a background job: the encoders' first load comes as a step of its own
    if not profile:
        return []
    _, judge = clone_tools(str(engine.device))
    yield None
    # Edges trimmed first, as the fit does before its report: the same prompt vector, the same percentages.
    return stock_profile.closest(profile, judge.embed(trim_edges(prompt.audio_16k())), CLOSEST_SHOWN)


@dataclass(frozen=True)
class CloneOutcome:
    voice: Any  # the SavedVoice now in the library
    report: Any  # its QualityReport
    seconds: float
    words: Any = None  # the PromptWords the fit used


def clone(engine: Any, prompt: Any, name: str, steps: int | None, transcript: str = "",
          language: str = "en", read: bool = False) -> Generator[Any, None, CloneOutcome]:
    """Fit a voice to `prompt` (an intake Prompt), then save it in the library as `name`.
    `transcript`, if given, is what the prompt says (checked before the fit starts); else the words
    are transcribed when the transcriber is installed. `read`: `transcript` is the line shown while
    recording, dropped with a notice if it cannot be the recording's words (`words.words_of`)."""
    from voicedesk.core.clone import stock_profile
    from voicedesk.core.clone.fit import CHECK_TEXT, FitResult, FitSettings, fit_voice
    from voicedesk.core.clone.saving import saved_voice
    from voicedesk.core.clone.words import prompt_words, within_budget, words_within
    from voicedesk.core.library.voices import VoiceLibrary

    words = prompt_words(prompt, transcript, language, within=words_within(engine.device), read=read)
    stock = engine.fit_basis()
    settings = within_budget(FitSettings(steps=steps) if steps else FitSettings(), words)
    result: FitResult | None = None
    ge2e, judge = clone_tools(str(engine.device))
    audio = prompt.audio_16k()
    fit = fit_voice(engine.model, stock, audio, settings=settings, ge2e=ge2e, judge=judge, prompt_ids=words.ids,
                    said_16k=words.part(audio), graphs=engine.graphs,
                    stock_profile=stock_profile.current(engine, CHECK_TEXT))
    with _closing(fit):
        for item in fit:
            if isinstance(item, FitResult):
                result = item
            else:
                yield item
    if result is None:
        raise RuntimeError("the fit ended without a result")
    saved = VoiceLibrary(reserved_names=stock).save(saved_voice(name, result, prompt, language, words.transcript))
    return CloneOutcome(saved, result.report, result.seconds, words)


def describe_fit_progress(progress: Any) -> str:
    """"Step 12 of 40 · about 30 s left" for the clone panel."""
    left = f"about {max(1, round(progress.eta_seconds))} s left"
    if progress.stage == "preparing":
        return f"Preparing · {left}"
    if progress.stage == "judging":
        return "Judging the result…"
    return f"Step {progress.step} of {progress.total} · {left}"


# --- speaking -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SpeakRequest:
    text: str
    voice: str
    saved_voice: bool  # a voice from the library, not a stock one
    language: str
    speed: float
    seed: int | None

    def settings(self) -> dict[str, Any]:
        return {"language": self.language, "speed": self.speed, "seed": self.seed}


def voice_style(engine: Any, name: str, saved: bool) -> tuple[Any, Pitch, EnvelopeMap | None]:
    """(style, pitch, envelope map) of a stock or saved voice."""
    if not saved:
        return engine.stock_voice(name), NEUTRAL_PITCH, None
    from voicedesk.core.library.voices import VoiceLibrary

    voice = VoiceLibrary().load(name)
    return voice.style, voice.pitch, voice.envelope


def speak(engine: Any, request: SpeakRequest) -> Generator[Any, None, Any]:
    """Yield each sentence chunk as soon as it is spoken; when all are done, keep the take."""
    from voicedesk.core.engine import join_chunks
    from voicedesk.core.library.takes import TakeHistory

    style, pitch, envelope = voice_style(engine, request.voice, request.saved_voice)
    chunks = []
    stream = engine.synthesize(request.text, style, request.language, request.speed, request.seed, pitch, envelope)
    with _closing(stream):
        for chunk in stream:
            chunks.append(chunk)
            yield chunk
    audio = join_chunks(chunks, sample_rate=engine.sample_rate)
    return TakeHistory().add(request.text, request.voice, audio, engine.sample_rate, request.settings())
