"""The speech engine: text (or phonemes) and a voice style in, 24 kHz audio out, one chunk at a time.

    engine = Engine.load(device="auto")
    style = engine.stock_voice("jf_alpha")
    audio = join_chunks(engine.synthesize("Hello there. How are you?", style, language="en"))

Torch is imported when an engine is loaded, not when this module is imported.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from voicedesk.core.engine import voices
from voicedesk.core.engine.config import MAX_PHONEMES, NEUTRAL_PITCH, SAMPLE_RATE, Pitch
from voicedesk.core.engine.envelope import EnvelopeMap
from voicedesk.core.engine.envelope import apply as apply_envelope
from voicedesk.core.engine.voices import Style
from voicedesk.core.errors import InputError, ModelError

if TYPE_CHECKING:
    import torch

    from voicedesk.core.engine.frame_graphs import FrameGraphs
    from voicedesk.core.engine.model import KokoroModel
    from voicedesk.core.text import PhonemeChunk

log = logging.getLogger(__name__)

Audio = npt.NDArray[np.float32]
PAUSE_SECONDS = 0.2  # between sentence chunks
MIN_SPEED, MAX_SPEED = 0.25, 4.0
_EDGE_THRESHOLD = 0.01  # trim quieter lead-in/tail than this (relative to full scale)
_EDGE_KEEP = int(0.03 * SAMPLE_RATE)  # keep this much around the speech when trimming
_FADE = int(0.005 * SAMPLE_RATE)  # fade chunk edges so joins never click
GRAPH_SECONDS = 13.0  # `prepare_graphs` covers sentences up to this long (most; longer ones capture later)
SHORTER_NOTICE = "The GPU ran short of memory, so this part was spoken in two shorter pieces."
CPU_NOTICE = (
    "The GPU ran out of memory, so VoiceDesk switched to the CPU (slower) for the rest of this session; "
    "close other programs that use the GPU and reload the engine to use it again."
)


@dataclass(frozen=True)
class SpeechChunk:
    """One spoken sentence chunk: float32 mono audio at `sample_rate`, in reading order."""

    audio: Audio
    text: str
    phonemes: str
    index: int
    total: int
    notices: tuple[str, ...] = ()
    sample_rate: int = SAMPLE_RATE

    @property
    def seconds(self) -> float:
        return len(self.audio) / self.sample_rate


class Engine:
    """Kokoro-82M on one device; create with `Engine.load()`."""

    sample_rate = SAMPLE_RATE

    def __init__(
        self, model: KokoroModel, device: str, device_reason: str, fp16: bool, graphs: FrameGraphs | None = None
    ) -> None:
        self.model = model
        self.device = device
        self.device_reason = device_reason
        self.fp16 = fp16
        self.graphs = graphs  # synthesis as CUDA graphs (on CUDA, unless switched off)

    @classmethod
    def load(cls, device: str = "auto", fp16: bool = False, graphs: bool | None = None) -> Engine:
        """Load the model on `device` ("auto": CUDA when its check passed, else CPU; "cpu"; "cuda").
        On CUDA, synthesis replays CUDA graphs unless `graphs=False` (default: unless the environment
        sets VOICEDESK_CUDA_GRAPHS=0)."""
        from voicedesk.core.gpu import choose_device

        choice = choose_device(device)
        import torch

        from voicedesk.core.engine.model import load_model

        reason = choice.reason
        if choice.device == "cuda":
            torch.backends.cudnn.enabled = True
            # cuDNN's heuristics, not its autotuner: in a new process the autotuner spent about 2 s on each
            # sentence of a new length (8 sentences: 18-24 s against 1.3-1.8 s, H100; bench-h200.md, run 17),
            # and graphs are captured without it anyway (cuda_capture.py).
            torch.backends.cudnn.benchmark = False
        elif fp16:
            fp16 = False
            reason += "; float16 needs the GPU"
        started = time.perf_counter()
        try:
            model = load_model(choice.device)
        except (OSError, RuntimeError) as exc:
            raise ModelError(
                f"The speech model could not be loaded ({exc}); see the log for details."
            ) from exc
        log.info("engine loaded on %s (%s) in %.1f s", choice.device, reason, time.perf_counter() - started)
        if choice.device == "cpu":
            reason += f"; {_choose_cpu_precision(model)}"
        if graphs is None:
            graphs = os.environ.get("VOICEDESK_CUDA_GRAPHS", "1").strip() != "0"
        frame_graphs = None
        if graphs and choice.device == "cuda":
            from voicedesk.core.engine.frame_graphs import FrameGraphs

            frame_graphs = FrameGraphs(model)
        return cls(model, choice.device, reason, fp16, frame_graphs)

    def speed_note(self) -> str:
        """How speech is computed here, in a few words for the status panel."""
        if self.device == "cpu":
            return "CPU, " + ("vocoder in bfloat16" if self.model.vocoder_bf16 else "float32")
        precision = "float16" if self.fp16 else "float32"
        if self.graphs is None:
            return f"GPU, {precision}, eager (CUDA graphs off)"
        if self.graphs.failure is not None:
            return f"GPU, {precision}, eager: CUDA graphs failed ({self.graphs.failure})"
        return f"GPU, {precision}, CUDA graphs for {self.graphs.captured} sentence lengths"

    def prepare_graphs(self, seconds: float = GRAPH_SECONDS) -> int:
        """Capture the CUDA graphs for sentences up to `seconds` now; returns how many there are (0 where
        synthesis is eager). Until its graph exists, a sentence is spoken eagerly."""
        for _ in self.prepare_graphs_steps(seconds):
            pass
        return self.graphs.captured if self.graphs is not None else 0

    def prepare_graphs_steps(self, seconds: float = GRAPH_SECONDS) -> Iterator[int]:
        """`prepare_graphs` one graph at a time, yielding the count so far: other work may run between
        the steps (the window speaks and clones in them), so each step sets up its own modes."""
        import torch

        from voicedesk.core.engine.masked_frames import samples_per_frame

        frames = int(seconds * SAMPLE_RATE / samples_per_frame(self.model))
        graphs = self.graphs
        if graphs is None:
            return
        steps = graphs.prepare_steps(frames)
        while self.graphs is graphs:  # the engine may have moved to the CPU in between
            with self._precision(), torch.inference_mode():
                captured = next(steps, None)
            if captured is None:
                return
            yield captured

    @staticmethod
    def stock_voices() -> list[str]:
        return voices.stock_voice_names()

    @staticmethod
    def stock_voice(name: str) -> Style:
        return voices.stock_voice(name)

    @staticmethod
    def stock_styles() -> dict[str, Style]:
        """Every stock style, shared, not copied: to read, never to change."""
        return voices.stock_styles()

    @staticmethod
    def fit_basis() -> dict[str, Style]:
        """The stock styles a clone starts from (voices.FIT_BASIS)."""
        return voices.fit_basis()

    # -- model inputs ------------------------------------------------------------------------------------

    def token_ids(self, phonemes: str) -> torch.Tensor:
        """[1, T + 2] token ids (pad token at both ends) on the engine's device."""
        import torch

        from voicedesk.core.text import kokoro_vocab

        vocab = kokoro_vocab()
        unknown = sorted({symbol for symbol in phonemes if symbol not in vocab})
        if unknown:
            raise InputError(f"These phoneme symbols are not in Kokoro's vocabulary: {' '.join(unknown)}.")
        if not phonemes:
            raise InputError("There are no phonemes to speak.")
        if len(phonemes) > MAX_PHONEMES:
            raise InputError(f"A chunk may hold at most {MAX_PHONEMES} phonemes, not {len(phonemes)}.")
        ids = [0, *(vocab[symbol] for symbol in phonemes), 0]
        return torch.tensor([ids], dtype=torch.long, device=self.device)

    def style_tensor(self, style: Style, n_phonemes: int) -> torch.Tensor:
        """The [1, 256] style row for a chunk of `n_phonemes`, on the engine's device."""
        import torch

        row = voices.style_row(voices.as_style(style), n_phonemes)
        return torch.from_numpy(np.ascontiguousarray(row)).to(self.device)

    # -- speaking --------------------------------------------------------------------------------------

    def synthesize(
        self,
        text: str,
        style: Style,
        language: str = "en",
        speed: float = 1.0,
        seed: int | None = None,
        pitch: Pitch = NEUTRAL_PITCH,
        envelope: EnvelopeMap | None = None,
    ) -> Iterator[SpeechChunk]:
        """Yield one chunk per sentence chunk of `text` as soon as it is ready (stop iterating to cancel).
        `pitch` shapes the voice's F0 and `envelope` its spectral envelope (a cloned voice's own; stock
        voices speak as predicted)."""
        from voicedesk.core.text import phonemize

        return self.speak_chunks(phonemize(text, language), style, speed, seed, pitch, envelope)

    def speak_chunks(
        self,
        chunks: Sequence[PhonemeChunk],
        style: Style,
        speed: float = 1.0,
        seed: int | None = None,
        pitch: Pitch = NEUTRAL_PITCH,
        envelope: EnvelopeMap | None = None,
    ) -> Iterator[SpeechChunk]:
        """Like `synthesize`, for text already split and phonemized by `voicedesk.core.text.phonemize`."""
        style = voices.as_style(style)
        pitch = pitch.checked()
        random = _Random(seed)
        for index, chunk in enumerate(chunks):
            audio, notices = self._speak(chunk.phonemes, style, speed, random, pitch, envelope)
            yield SpeechChunk(
                audio, chunk.text, chunk.phonemes, index, len(chunks), (*chunk.notices, *notices)
            )

    def synthesize_phonemes(
        self, phonemes: str, style: Style, speed: float = 1.0, seed: int | None = None, pitch: Pitch = NEUTRAL_PITCH,
        envelope: EnvelopeMap | None = None,
    ) -> Audio:
        """Audio for one chunk of Kokoro phonemes (at most MAX_PHONEMES symbols)."""
        pitch = pitch.checked()
        audio, _ = self._speak(phonemes, voices.as_style(style), speed, _Random(seed), pitch, envelope)
        return audio

    def _speak(
        self, phonemes: str, style: Style, speed: float, random: _Random, pitch: Pitch, envelope: EnvelopeMap | None
    ) -> tuple[Audio, tuple[str, ...]]:
        """Audio and notices for one chunk, its envelope reshaped by `envelope` if given."""
        audio, notices = self._speak_raw(phonemes, style, speed, random, pitch)
        if envelope is not None:  # on the CPU: a few milliseconds a sentence, and no GPU memory
            audio = apply_envelope(audio, envelope, SAMPLE_RATE)
        return audio, notices

    def _speak_raw(
        self, phonemes: str, style: Style, speed: float, random: _Random, pitch: Pitch
    ) -> tuple[Audio, tuple[str, ...]]:
        """Audio and notices for one chunk. Out of GPU memory, the chunk is spoken again in two shorter
        pieces; if that fails too, the engine moves to the CPU for good and speaks it there."""
        import torch

        check_speed(speed)
        speed *= pitch.pace  # a cloned voice's own pace, on top of the speed asked for
        try:
            return self._infer(phonemes, style, speed, random, pitch), ()
        except torch.OutOfMemoryError:
            log.warning("out of memory on %s speaking %d phonemes", self.device, len(phonemes), exc_info=True)
        self._release_cached_memory()  # outside the except block: the traceback's tensors are gone now
        pieces = _halves(phonemes)
        if pieces:
            try:
                audio = join_chunks([self._infer(piece, style, speed, random, pitch) for piece in pieces], pause=0.1)
                return audio, (SHORTER_NOTICE,)
            except torch.OutOfMemoryError:
                log.warning("out of memory again on %s with shorter pieces", self.device, exc_info=True)
            self._release_cached_memory()
        if self.device == "cpu":
            raise ModelError(
                "The computer ran out of memory while speaking; close other programs or speak a shorter text."
            )
        self.move_to_cpu(f"the GPU ran out of memory ({self.device_reason})")
        return self._infer(phonemes, style, speed, random, pitch), (CPU_NOTICE,)

    def move_to_cpu(self, reason: str) -> None:
        """Run on the CPU from now on (float32, the vocoder in bfloat16 where this CPU is faster so)."""
        log.warning("engine moves to the CPU: %s", reason)
        self.model.to("cpu")
        reason += f"; {_choose_cpu_precision(self.model)}"
        self.device, self.device_reason, self.fp16, self.graphs = "cpu", reason, False, None
        self._release_cached_memory()

    def _release_cached_memory(self) -> None:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def _infer(self, phonemes: str, style: Style, speed: float, random: _Random, pitch: Pitch) -> Audio:
        """The one place that touches the device: inputs onto it, the model call, audio back."""
        ids = self.token_ids(phonemes)
        ref_s = self.style_tensor(style, len(phonemes))
        graphs = self.graphs
        speaker, front = (graphs.speak_frames, graphs.tokens.front) if graphs is not None else (None, None)
        with self._precision():
            out = self.model.infer(ids, ref_s, speed, random.on(self.device), speaker=speaker, pitch=pitch,
                                   front=front)
        audio: Audio = out.audio.float().cpu().numpy().astype(np.float32, copy=False)
        return audio

    def _precision(self) -> contextlib.AbstractContextManager[Any]:
        """Autocast to float16 only when asked: an `enabled=False` autocast would also switch off one
        the caller opened (the self-test times fp16 that way)."""
        import torch

        half = self.fp16 and self.device == "cuda"
        return torch.autocast("cuda", dtype=torch.float16) if half else contextlib.nullcontext()


class _Random:
    """The source's random numbers for one synthesis: one generator per device, made when first needed
    (a generator lives on one device; after a move to the CPU the stream restarts from the same seed)."""

    def __init__(self, seed: int | None) -> None:
        self.seed = seed
        self._generators: dict[str, torch.Generator] = {}

    def on(self, device: str) -> torch.Generator:
        import torch

        if device not in self._generators:
            rng = torch.Generator(device=device)
            if self.seed is None:
                self.seed = int(rng.seed())
            else:
                rng.manual_seed(int(self.seed))
            self._generators[device] = rng
        return self._generators[device]


def _choose_cpu_precision(model: KokoroModel) -> str:
    """Switch the vocoder to bfloat16 where this CPU measured faster that way; returns why or why not."""
    from voicedesk.core.engine.cpu_precision import choose_vocoder_bf16

    model.vocoder_bf16, note = choose_vocoder_bf16(model)
    return note


def _halves(phonemes: str) -> tuple[str, str] | None:
    """Two shorter pieces of a chunk, cut at a pause or word boundary near the middle (None if too short)."""
    from voicedesk.core.text.sentences import halve

    if len(phonemes) < 8:
        return None
    left, right = halve(phonemes)
    return (left, right) if left.strip() and right.strip() else None


def check_speed(speed: float) -> None:
    if not MIN_SPEED <= speed <= MAX_SPEED:
        raise InputError(
            f"Speed {speed} is out of range; use a value from {MIN_SPEED} to {MAX_SPEED:g} (1 is normal)."
        )


def trim_edges(audio: Audio) -> Audio:
    """Drop near-silent lead-in and tail (keeping a little), so pauses between chunks are even."""
    loud = np.flatnonzero(np.abs(audio) > _EDGE_THRESHOLD)
    if loud.size == 0:
        return audio
    return audio[max(0, loud[0] - _EDGE_KEEP) : loud[-1] + _EDGE_KEEP]


def _fade(audio: Audio) -> Audio:
    out = audio.astype(np.float32, copy=True)
    n = min(_FADE, len(out) // 2)
    if n > 0:
        ramp = np.linspace(0.0, 1.0, n, dtype=np.float32)
        out[:n] *= ramp
        out[-n:] *= ramp[::-1]
    return out


def join_chunks(
    chunks: Iterable[SpeechChunk | Audio], pause: float = PAUSE_SECONDS, sample_rate: int = SAMPLE_RATE
) -> Audio:
    """One waveform from chunks: edges trimmed and faded, `pause` seconds of silence between them."""
    gap = np.zeros(int(round(pause * sample_rate)), dtype=np.float32)
    parts: list[Any] = []
    for chunk in chunks:
        audio = chunk.audio if isinstance(chunk, SpeechChunk) else np.asarray(chunk, dtype=np.float32)
        if parts:
            parts.append(gap)
        parts.append(_fade(trim_edges(audio)))
    if not parts:
        return np.zeros(0, dtype=np.float32)
    joined: Audio = np.concatenate(parts).astype(np.float32, copy=False)
    return joined
