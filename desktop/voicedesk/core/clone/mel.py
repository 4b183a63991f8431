"""Mel filterbanks and windows computed in numpy, so neither encoder needs librosa at run time.

Both speaker encoders were trained on librosa features: a Slaney-scale, Slaney-normalised mel
filterbank (librosa's default) over a power spectrogram. These helpers reproduce librosa's
`filters.mel` and its periodic windows exactly (the tests compare them with librosa).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

F32 = NDArray[np.float32]


def _hz_to_mel(freq: NDArray[np.float64]) -> NDArray[np.float64]:
    # Slaney: linear below 1 kHz, logarithmic above.
    f_sp = 200.0 / 3
    mels = freq / f_sp
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = np.log(6.4) / 27.0
    above = freq >= min_log_hz
    mels[above] = min_log_mel + np.log(freq[above] / min_log_hz) / logstep
    return mels


def _mel_to_hz(mels: NDArray[np.float64]) -> NDArray[np.float64]:
    f_sp = 200.0 / 3
    freqs = f_sp * mels
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = np.log(6.4) / 27.0
    above = mels >= min_log_mel
    freqs[above] = min_log_hz * np.exp(logstep * (mels[above] - min_log_mel))
    return freqs


def mel_filterbank(sample_rate: int, n_fft: int, n_mels: int) -> F32:
    """`librosa.filters.mel(sr=sample_rate, n_fft=n_fft, n_mels=n_mels)`: shape [n_mels, n_fft//2+1]."""
    fft_freqs = np.linspace(0, sample_rate / 2, 1 + n_fft // 2)
    limits = _hz_to_mel(np.array([0.0, sample_rate / 2]))
    mel_f = _mel_to_hz(np.linspace(limits[0], limits[1], n_mels + 2))
    fdiff = np.diff(mel_f)
    ramps = np.subtract.outer(mel_f, fft_freqs)
    lower = -ramps[:-2] / fdiff[:-1, None]
    upper = ramps[2:] / fdiff[1:, None]
    weights = np.maximum(0.0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_f[2 : n_mels + 2] - mel_f[:n_mels]))[:, None]
    return weights.astype(np.float32)


def periodic_window(kind: str, length: int, n_fft: int) -> F32:
    """A periodic Hann or Hamming window of `length`, zero-padded to `n_fft` at the centre (as librosa does)."""
    n = np.arange(length)
    if kind == "hann":
        win = 0.5 - 0.5 * np.cos(2 * np.pi * n / length)
    elif kind == "hamming":
        win = 0.54 - 0.46 * np.cos(2 * np.pi * n / length)
    else:
        raise ValueError(f"unknown window {kind!r}")
    left = (n_fft - length) // 2
    return np.pad(win, (left, n_fft - length - left)).astype(np.float32)
