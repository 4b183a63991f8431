"""Pitch statistics of speech, so a cloned voice can speak at the prompt's pitch.

A plain normalised-autocorrelation tracker is enough for a few numbers per utterance: 40 ms frames
every 10 ms, the strongest lag between 60 and 500 Hz, frames counted as voiced when that peak is clear.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

FMIN = 60.0
FMAX = 500.0
VOICED_PEAK = 0.6
MIN_VOICED = 10  # frames: fewer and the statistics are None


def voiced_log_f0(wav: NDArray[np.float32], sample_rate: int) -> NDArray[np.float64] | None:
    """Natural-log F0 of each voiced 10 ms frame, or None when fewer than MIN_VOICED are voiced."""
    frame = int(0.04 * sample_rate)
    hop = int(0.01 * sample_rate)
    lag_min = int(sample_rate / FMAX)
    lag_max = int(sample_rate / FMIN)
    if len(wav) < frame + hop:
        return None
    x = np.asarray(wav, dtype=np.float64)
    n = 1 + (len(x) - frame) // hop
    frames = np.lib.stride_tricks.as_strided(x, shape=(n, frame), strides=(x.strides[0] * hop, x.strides[0]))
    frames = frames - frames.mean(axis=1, keepdims=True)
    energy = np.square(frames).sum(axis=1)
    loud = energy > energy.max() * 1e-3
    spectrum = np.fft.rfft(frames, n=2 * frame, axis=1)
    acf = np.fft.irfft(np.abs(spectrum) ** 2, axis=1)[:, : lag_max + 1]
    acf = acf / (acf[:, :1] + 1e-12)
    # Taper by the overlap length so long lags are not penalised for having fewer samples.
    acf = acf * frame / (frame - np.arange(lag_max + 1))
    region = acf[:, lag_min : lag_max + 1]
    best = region.argmax(axis=1)
    peak = region[np.arange(n), best]
    voiced = loud & (peak > VOICED_PEAK)
    if voiced.sum() < MIN_VOICED:
        return None
    log_f0: NDArray[np.float64] = np.log(sample_rate / (best[voiced] + lag_min))
    return log_f0


def median_pitch(wav: NDArray[np.float32], sample_rate: int) -> float | None:
    """Median F0 in Hz over voiced frames, or None when too few frames are voiced."""
    log_f0 = voiced_log_f0(wav, sample_rate)
    return None if log_f0 is None else float(np.exp(np.median(log_f0)))


def pitch_spread(wav: NDArray[np.float32], sample_rate: int) -> float | None:
    """How widely the intonation ranges: log-F0's interquartile range over 1.349 (a standard deviation
    that a few mistracked octave jumps cannot inflate), or None when too few frames are voiced."""
    log_f0 = voiced_log_f0(wav, sample_rate)
    return None if log_f0 is None else log_spread(log_f0)


def log_spread(log_f0: NDArray[np.float64]) -> float:
    """The interquartile range of log-F0 values over 1.349 (a standard deviation, robust to outliers)."""
    low, high = np.percentile(log_f0, [25, 75])
    return float((high - low) / 1.349)
