"""Prompt intake: turn a file or microphone samples into a clean, validated voice prompt.

Any file soundfile reads (WAV, FLAC, OGG, MP3, AIFF …) or raw samples; downmixed to mono, resampled to
24 kHz, leading/trailing silence trimmed, loudness-normalised. Problems the user can fix raise
`InputError` with advice; things worth knowing but not fatal become `Prompt.notices`.

Decisions:
- Non-finite samples (NaN/Inf) are an error: they mean a damaged file or a broken effect chain, and
  silently zeroing them would hide that.
- Clipping is a notice, not an error: the speaker's timbre is still there and it may be the only
  recording the user has; the notice says how to record better. Clipped *non-speech* (a square wave)
  fails the speech test anyway.
- Only the first `READ_LIMIT_SECONDS` of a file are decoded, so an hour-long file costs the same
  time and memory as a one-minute one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from voicedesk.core.audio import speech
from voicedesk.core.audio.resample import resample
from voicedesk.core.errors import InputError

PROMPT_RATE = 24000
ENCODER_RATE = 16000
MIN_SPEECH_SECONDS = 1.5
MAX_PROMPT_SECONDS = 30.0
READ_LIMIT_SECONDS = 60.0
MIN_SOURCE_RATE = 8000
LOW_SOURCE_RATE = 16000
MAX_SOURCE_RATE = 384000
MAX_CHANNELS = 64
TARGET_RMS_DBFS = -20.0
PEAK_CEILING = 0.89  # -1 dBFS
EDGE_PAD_SECONDS = 0.15
CLIP_LEVEL = 0.999
CLIP_NOTICE_FRACTION = 0.005
QUIET_BOOST_DB = 30.0

FloatArray = npt.NDArray[np.float32]
RECORD_ADVICE = "record about 3 seconds of natural speech"

# What each file suffix should contain, for the "wrong extension" notice.
_SUFFIX_FORMATS = {
    ".wav": {"WAV", "WAVEX", "RF64"},
    ".wave": {"WAV", "WAVEX", "RF64"},
    ".flac": {"FLAC"},
    ".ogg": {"OGG"},
    ".oga": {"OGG"},
    ".opus": {"OGG"},
    ".mp3": {"MP3"},
    ".aif": {"AIFF"},
    ".aiff": {"AIFF"},
}


@dataclass(frozen=True)
class Prompt:
    """A validated prompt: mono float32 at 24 kHz, trimmed and loudness-normalised."""

    audio: FloatArray
    source: str
    source_rate: int
    speech_seconds: float
    notices: tuple[str, ...] = ()
    sample_rate: int = PROMPT_RATE
    _by_rate: dict[int, FloatArray] = field(default_factory=dict, repr=False, compare=False)

    @property
    def duration(self) -> float:
        return self.audio.size / self.sample_rate

    def at_rate(self, rate: int) -> FloatArray:
        """The prompt resampled to `rate` Hz (cached)."""
        if rate == self.sample_rate:
            return self.audio
        if rate not in self._by_rate:
            self._by_rate[rate] = resample(self.audio, self.sample_rate, rate)
        return self._by_rate[rate]

    def audio_16k(self) -> FloatArray:
        """The 16 kHz copy speaker encoders want."""
        return self.at_rate(ENCODER_RATE)


@dataclass
class _Raw:
    samples: FloatArray  # mono, source rate
    rate: int
    name: str
    notices: list[str]


def load_prompt(source: str | os.PathLike[str] | tuple[npt.ArrayLike, int]) -> Prompt:
    """Read and validate a prompt from a file path or from `(samples, sample_rate)`.

    Samples may be 1-D or `[frames, channels]` (the layout sounddevice and soundfile use).
    Raises `InputError` with advice when the audio cannot make a voice.
    """
    raw = _from_samples(*source) if isinstance(source, tuple) else _from_file(Path(source))
    return _prepare(raw)


def _from_samples(samples: npt.ArrayLike, rate: int) -> _Raw:
    try:
        data = np.asarray(samples, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise InputError(f"The recording is not a block of audio samples ({exc}).") from exc
    if data.ndim == 2:
        data = data.mean(axis=1, dtype=np.float32) if data.shape[1] > 0 else data.reshape(-1)
    elif data.ndim != 1:
        raise InputError(f"The recording has an unexpected shape {data.shape}; expected mono or [frames, channels].")
    _check_rate(int(rate), "The recording")
    notices: list[str] = []
    limit = int(READ_LIMIT_SECONDS * rate)
    if data.size > limit:
        notices.append(f"The recording is {data.size / rate:.0f} s long; only its first {READ_LIMIT_SECONDS:.0f} s were used.")
        data = data[:limit]
    return _Raw(np.ascontiguousarray(data), int(rate), "the recording", notices)


def _check_rate(rate: int, what: str) -> None:
    if not MIN_SOURCE_RATE <= rate <= MAX_SOURCE_RATE:
        raise InputError(
            f"{what} has a sample rate of {rate} Hz; VoiceDesk accepts {MIN_SOURCE_RATE // 1000}–"
            f"{MAX_SOURCE_RATE // 1000} kHz. Re-export it at 44.1 or 48 kHz."
        )


def _from_file(path: Path) -> _Raw:
    import soundfile as sf

    name = f"'{path.name}'"
    if not path.exists():
        raise InputError(f"The file {path} does not exist; choose another file.")
    if not path.is_file():
        raise InputError(f"{path} is not a file; choose an audio file (WAV, FLAC, OGG or MP3).")
    if path.stat().st_size == 0:
        raise InputError(f"The file {name} is empty (0 bytes); choose another file or {RECORD_ADVICE}.")
    notices: list[str] = []
    try:
        with sf.SoundFile(path) as handle:
            rate, channels, fmt = int(handle.samplerate), int(handle.channels), str(handle.format)
            _check_rate(rate, f"The file {name}")
            if not 1 <= channels <= MAX_CHANNELS:
                raise InputError(f"The file {name} claims {channels} channels; re-export it as mono or stereo.")
            samples = _read_mono(handle, int(READ_LIMIT_SECONDS * rate))
            total = int(handle.frames)
            subtype = str(handle.subtype)
    except InputError:
        raise
    except (RuntimeError, ValueError, OSError, EOFError, MemoryError, TypeError) as exc:
        # soundfile reports unreadable, truncated and non-audio files as RuntimeError subclasses.
        raise InputError(
            f"The file {name} could not be read as audio ({_first_line(exc)}). VoiceDesk reads WAV, FLAC, "
            "OGG and MP3; re-export the recording in one of those formats."
        ) from exc
    expected = _SUFFIX_FORMATS.get(path.suffix.lower())
    if expected is None or fmt not in expected:
        notices.append(f"The file {name} holds {fmt} audio despite its name; it was read as {fmt}.")
    if total > samples.size and total > READ_LIMIT_SECONDS * rate:
        notices.append(
            f"The file is {total / rate / 60:.0f} min long; only its first {READ_LIMIT_SECONDS:.0f} s were read."
        )
    if subtype in {"PCM_U8", "PCM_S8"}:
        notices.append("The file is 8-bit audio, which adds hiss; 16-bit or better gives a cleaner voice.")
    return _Raw(samples, rate, name, notices)


def _read_mono(handle: Any, limit: int) -> FloatArray:
    """Decode up to `limit` frames, downmixing block by block so many channels cost no extra memory."""
    blocks: list[FloatArray] = []
    remaining = limit
    # About a million samples per block whatever the channel count, so memory stays bounded.
    block_frames = max(1024, min(int(handle.samplerate), 2**20 // max(int(handle.channels), 1)))
    while remaining > 0:
        block = handle.read(min(block_frames, remaining), dtype="float32", always_2d=True)
        if block.shape[0] == 0:
            break
        blocks.append(block.mean(axis=1, dtype=np.float32))
        remaining -= block.shape[0]
    return np.concatenate(blocks) if blocks else np.zeros(0, dtype=np.float32)


def _first_line(exc: BaseException) -> str:
    # libsndfile's text is "Error opening '<path>': <reason>"; the reason is what the user needs.
    lines = str(exc).strip().splitlines()
    reason = lines[-1].rsplit("': ", 1)[-1].strip().rstrip(".") if lines else ""
    return reason or type(exc).__name__


def _prepare(raw: _Raw) -> Prompt:
    samples, rate, name, notices = raw.samples, raw.rate, raw.name, list(raw.notices)
    what = name[0].upper() + name[1:] if name.startswith("the") else f"The file {name}"
    if samples.size == 0:
        raise InputError(f"{what} contains no audio; {RECORD_ADVICE}.")
    bad = int(samples.size - np.count_nonzero(np.isfinite(samples)))
    if bad:
        raise InputError(
            f"{what} contains {bad} invalid samples (NaN or infinity), a sign of a damaged file or a faulty "
            f"effect plugin; re-export it or {RECORD_ADVICE}."
        )
    if rate < LOW_SOURCE_RATE:
        notices.append(
            f"{what} is sampled at {rate / 1000:g} kHz (telephone quality); the voice may sound muffled. "
            "Record at 44.1 or 48 kHz if you can."
        )
    clipped = float(np.count_nonzero(np.abs(samples) >= CLIP_LEVEL)) / samples.size
    audio16 = resample(samples, rate, ENCODER_RATE)
    found = speech.analyse(audio16)
    if found.silent:
        level = f"its loudest moment is {found.loudest_dbfs:.0f} dBFS" if found.loudest_dbfs > -120 else "all zeros"
        raise InputError(
            f"{what} is silent ({level}). Check that the right microphone is selected and not muted, "
            f"then {RECORD_ADVICE}."
        )
    if not found.looks_like_speech:
        raise InputError(
            f"{what} does not sound like speech (it sounds like steady noise or a tone: "
            f"{found.voiced_fraction:.0%} voiced). {RECORD_ADVICE[0].upper() + RECORD_ADVICE[1:]} in a quiet room."
        )
    span = found.span_seconds()
    if span is None or found.speech_seconds < MIN_SPEECH_SECONDS:
        raise InputError(
            f"{what} has only {found.speech_seconds:.1f} s of speech; VoiceDesk needs at least "
            f"{MIN_SPEECH_SECONDS} s: {RECORD_ADVICE}."
        )
    if clipped >= CLIP_NOTICE_FRACTION:
        notices.append(
            f"{clipped:.1%} of the recording is clipped (distorted at full level); the distortion may carry "
            "into the voice. Lower the input gain or move back from the microphone and record again."
        )
    audio = resample(samples, rate, PROMPT_RATE)
    start = max(0, int((span[0] - EDGE_PAD_SECONDS) * PROMPT_RATE))
    end = min(audio.size, int((span[1] + EDGE_PAD_SECONDS) * PROMPT_RATE))
    if (end - start) / PROMPT_RATE > MAX_PROMPT_SECONDS:
        end = start + int(MAX_PROMPT_SECONDS * PROMPT_RATE)
        notices.append(
            f"The speech runs {(span[1] - span[0]):.0f} s; only the first {MAX_PROMPT_SECONDS:.0f} s are used "
            "(3–10 s is plenty)."
        )
    hop = found.frame_seconds
    active = found.active[int(start / PROMPT_RATE / hop) : int(end / PROMPT_RATE / hop)]
    normalised, gain_db = _normalise(audio[start:end], active, int(hop * PROMPT_RATE))
    if gain_db > QUIET_BOOST_DB:
        notices.append(
            f"The recording was very quiet and was boosted by {gain_db:.0f} dB, which also boosts background "
            "noise; move closer to the microphone for a cleaner voice."
        )
    return Prompt(normalised, source=name, source_rate=rate, speech_seconds=float(active.sum()) * hop, notices=tuple(notices))


def _normalise(audio: FloatArray, active: speech.BoolArray, frame: int) -> tuple[FloatArray, float]:
    """Scale so the active (speech) frames sit at -20 dBFS RMS, never letting peaks pass -1 dBFS."""
    usable = min(active.size, audio.size // frame)
    frames = audio[: usable * frame].reshape(usable, frame)[active[:usable]]
    level = float(np.sqrt(np.mean(frames.astype(np.float64) ** 2))) if frames.size else 0.0
    if level <= 0.0:
        level = float(np.sqrt(np.mean(audio.astype(np.float64) ** 2))) or 1.0
    gain = 10 ** (TARGET_RMS_DBFS / 20) / level
    peak = float(np.max(np.abs(audio))) * gain
    if peak > PEAK_CEILING:
        gain *= PEAK_CEILING / peak
    out = np.clip(audio * np.float32(gain), -1.0, 1.0).astype(np.float32)
    return out, float(20 * np.log10(gain))
