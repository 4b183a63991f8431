"""Median pitch of speech, so fitting can steer the voice's pitch toward the prompt's.

A plain normalised-autocorrelation tracker is enough for one number per prompt: 40 ms frames every
10 ms, the strongest lag between 60 and 500 Hz, frames counted as voiced when that peak is clear.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

FMIN = 60.0
FMAX = 500.0
VOICED_PEAK = 0.6


def median_pitch(wav: NDArray[np.float32], sample_rate: int) -> float | None:
    """Median F0 in Hz over voiced frames, or None when fewer than 10 frames are voiced."""
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
    if voiced.sum() < 10:
        return None
    lags = best[voiced] + lag_min
    return float(np.median(sample_rate / lags))
