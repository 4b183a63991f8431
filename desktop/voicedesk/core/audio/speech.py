"""Is there speech in this audio, and where? Frame energy plus a pitch-periodicity test.

Energy alone cannot tell speech from noise, and "no speech" must be judged honestly, so two more
measures decide: the share of loud frames that are *voiced* (a clear autocorrelation peak at a pitch
period of 2.5–16 ms, which white, pink and brown noise lack) and the spread of frame levels (speech
rises and falls with syllables; a tone, hum or steady noise does not). Measured on espeak-ng/MBROLA
speech, noises and tones: speech 54–78 % voiced with over 8 dB spread; white, pink and brown noise
0–4 % voiced; tones, hum and square waves fully "voiced" but with under 0.01 dB spread.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

ANALYSIS_RATE = 16000
HOP = 160  # 10 ms
ENERGY_FRAME = 400  # 25 ms
PITCH_FRAME = 640  # 40 ms: two periods of an 80 Hz voice
MIN_LAG, MAX_LAG = 40, 256  # pitch periods 2.5–16 ms (62–400 Hz)
SILENT_DBFS = -65.0
HIGHPASS_BINS = 6  # below 75 Hz at 12.5 Hz per bin

MIN_VOICED_FRACTION = 0.15
MIN_LEVEL_SPREAD_DB = 3.0

FloatArray = npt.NDArray[np.float32]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class SpeechAnalysis:
    """Per-frame activity (10 ms hop at 16 kHz) and the evidence for speech."""

    active: BoolArray
    loudest_dbfs: float
    voiced_fraction: float
    level_spread_db: float

    @property
    def frame_seconds(self) -> float:
        return HOP / ANALYSIS_RATE

    @property
    def silent(self) -> bool:
        return self.loudest_dbfs < SILENT_DBFS

    @property
    def speech_seconds(self) -> float:
        return float(self.active.sum()) * self.frame_seconds

    @property
    def looks_like_speech(self) -> bool:
        return (
            not self.silent
            and self.voiced_fraction >= MIN_VOICED_FRACTION
            and self.level_spread_db >= MIN_LEVEL_SPREAD_DB
        )

    def span_seconds(self) -> tuple[float, float] | None:
        """Start of the first and end of the last active frame, or None when nothing is active."""
        hits = np.flatnonzero(self.active)
        if hits.size == 0:
            return None
        start = float(hits[0]) * self.frame_seconds
        end = (float(hits[-1]) * HOP + ENERGY_FRAME) / ANALYSIS_RATE
        return start, end


def _frames(audio: FloatArray, size: int) -> FloatArray:
    if audio.size < size:
        audio = np.pad(audio, (0, size - audio.size))
    view = np.lib.stride_tricks.sliding_window_view(audio, size)[::HOP]
    return np.asarray(view, dtype=np.float32)


def frame_levels_db(audio16: FloatArray) -> FloatArray:
    """RMS level of each 25 ms frame in dBFS."""
    frames = _frames(audio16, ENERGY_FRAME)
    rms = np.sqrt(np.mean(frames.astype(np.float64) ** 2, axis=1) + 1e-20)
    levels: FloatArray = (20.0 * np.log10(rms)).astype(np.float32)
    return levels


def _voiced(audio16: FloatArray, candidates: BoolArray) -> BoolArray:
    """Frames whose normalised autocorrelation peaks inside the pitch range (not at its edge)."""
    frames = _frames(audio16, PITCH_FRAME)
    voiced = np.zeros(frames.shape[0], dtype=bool)
    index = np.flatnonzero(candidates[: frames.shape[0]])
    for start in range(0, index.size, 512):  # chunks keep memory flat for long prompts
        rows = index[start : start + 512]
        block = frames[rows] - frames[rows].mean(axis=1, keepdims=True)
        power = np.abs(np.fft.rfft(block, n=2 * PITCH_FRAME, axis=1)) ** 2
        # High-pass in the spectrum: rumble (brown noise, DC) would correlate at every short lag.
        power[:, :HIGHPASS_BINS] = 0.0
        autocorr = np.fft.irfft(power, axis=1)[:, :PITCH_FRAME]
        autocorr = autocorr / (autocorr[:, :1] + 1e-12)
        window = autocorr[:, MIN_LAG:MAX_LAG]
        lag = window.argmax(axis=1)
        peak = window.max(axis=1)
        voiced[rows] = (peak > 0.5) & (lag > 0) & (lag < window.shape[1] - 1)
    return voiced


def analyse(audio16: FloatArray) -> SpeechAnalysis:
    """Analyse mono float32 audio at 16 kHz."""
    levels = frame_levels_db(audio16)
    loudest = float(levels.max()) if levels.size else -400.0
    if loudest < SILENT_DBFS:
        return SpeechAnalysis(np.zeros(levels.shape, dtype=bool), loudest, 0.0, 0.0)
    # "Loud" frames carry the evidence; "active" ones must also stand above the noise floor,
    # so steady background noise does not count as seconds of speech.
    loud = levels > max(SILENT_DBFS, loudest - 40.0)
    floor = float(np.percentile(levels, 10))
    active = loud & (levels > floor + 6.0)
    voiced = _voiced(audio16, loud)
    voiced_fraction = float(voiced.sum()) / float(loud.sum())
    # Pauses count at the floor of the 40 dB window, so quiet speech still shows its syllables.
    spread = float(np.std(np.maximum(levels, loudest - 40.0)))
    return SpeechAnalysis(active, loudest, voiced_fraction, spread)
