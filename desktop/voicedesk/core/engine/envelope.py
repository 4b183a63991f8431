"""A cloned voice's envelope map: how its spectral envelope moves, brought to how the speaker's moves.

A fit that knows the prompt's words ends with the voice saying those words, a parallel pair with the prompt.
Over the speech frames of each, the mel cepstra (c1..c30 of 40 mel bands up to 8 kHz: the spectral envelope,
not the pitch's harmonics and not the loudness) have a covariance: how far and together the envelope moves
from sound to sound. The map whitens the voice's cepstra with its own covariance and colours them with the
prompt's, about the voice's own mean (the average envelope is the fit's to set; moving it too lost on a
real speaker). Kokoro's envelopes move less than most speakers' do: the classic "global variance" a
synthesiser under-produces. Applied after synthesis, each frame's STFT magnitude is scaled by its envelope's
change; pitch, phase and timing stay. On the development voices, the same fits with and without it: gap closed
0.49 → 0.59 and 0.53 → 0.61 on a 2-core CPU (two seeds), 0.49 → 0.63 over four H100 seeds' fits
(docs/benchmarks/clone-dev.md, sweep 44).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from voicedesk.core.errors import InputError

if TYPE_CHECKING:
    import torch

BANDS = 40
F_LOW, F_HIGH = 60.0, 8000.0  # a 16 kHz recording holds nothing above 8 kHz
N_CEPSTRA = 30
WINDOW_S, HOP_S = 1024 / 24000, 0.01
SHRINK = 0.1  # each covariance pulled this far toward its diagonal: ~300 frames estimate 465 numbers
MIN_FRAMES = 60  # fewer speech frames (0.6 s) estimate no covariance worth trusting
LIMIT = float(np.log(10 ** (12 / 10)))  # no band moved by more than 12 dB


@dataclass(frozen=True)
class EnvelopeMap:
    """`centre` [N_CEPSTRA]: the voice's mean cepstrum; `transform` [N_CEPSTRA, N_CEPSTRA]: a frame's cepstra
    c become centre + (c - centre) @ transform."""

    centre: NDArray[np.float32]
    transform: NDArray[np.float32]

    def to_array(self) -> NDArray[np.float32]:
        """[1 + N_CEPSTRA, N_CEPSTRA]: the centre, then the transform (how a voice file stores it)."""
        return np.vstack([self.centre[None, :], self.transform]).astype(np.float32)

    @staticmethod
    def from_array(array: NDArray[np.float32]) -> EnvelopeMap:
        """The map `to_array` stored, or `InputError` if it is not one."""
        array = np.asarray(array)
        if array.shape != (N_CEPSTRA + 1, N_CEPSTRA) or not np.isfinite(array).all():
            raise InputError(f"an envelope map is {N_CEPSTRA + 1}×{N_CEPSTRA} finite numbers")
        if np.abs(array[1:]).max() > 10 or np.abs(array[0]).max() > 1e3:
            raise InputError("the envelope map's numbers are implausibly large")
        return EnvelopeMap(array[0].astype(np.float32), array[1:].astype(np.float32))


@functools.cache
def _analysis(rate: int) -> tuple[int, int, NDArray[np.float64], NDArray[np.float64]]:
    """(window, hop, mel filters [BANDS, bins], DCT rows 1..N_CEPSTRA [N_CEPSTRA, BANDS]) at `rate`."""
    window, hop = round(WINDOW_S * rate), round(HOP_S * rate)
    freqs = np.linspace(0, rate / 2, window // 2 + 1)

    def mel(f: NDArray[np.float64] | float) -> NDArray[np.float64]:
        return np.asarray(2595 * np.log10(1 + np.asarray(f) / 700))

    edges = 700 * (10 ** (np.linspace(mel(F_LOW), mel(F_HIGH), BANDS + 2) / 2595) - 1)
    filters = np.zeros((BANDS, len(freqs)))
    for b in range(BANDS):
        low, mid, high = edges[b : b + 3]
        filters[b] = np.clip(np.minimum((freqs - low) / (mid - low), (high - freqs) / (high - mid)), 0, None)
    k = np.arange(1, N_CEPSTRA + 1)[:, None]
    dct = np.sqrt(2 / BANDS) * np.cos(np.pi * k * (2 * np.arange(BANDS)[None, :] + 1) / (2 * BANDS))
    return window, hop, filters, dct


def _stft(audio: NDArray[np.float32], rate: int) -> torch.Tensor:
    import torch

    window, hop, _, _ = _analysis(rate)
    x = torch.from_numpy(np.ascontiguousarray(audio, dtype=np.float32))
    return torch.stft(x, window, hop, window=torch.hann_window(window), return_complex=True).T  # [frames, bins]


def _cepstra(power: NDArray[np.float64], rate: int) -> NDArray[np.float64]:
    _, _, filters, dct = _analysis(rate)
    cepstra: NDArray[np.float64] = np.log(power @ filters.T + 1e-10) @ dct.T
    return cepstra


def speech_cepstra(audio: NDArray[np.float32], rate: int) -> NDArray[np.float64]:
    """[speech frames, N_CEPSTRA] mel cepstra of the frames within 30 dB of the loudest (pauses carry no voice)."""
    power = _stft(audio, rate).abs().square().double().numpy()
    cepstra = _cepstra(power, rate)
    energy = power.sum(1)
    kept: NDArray[np.float64] = cepstra[energy > energy.max() * 1e-3]
    return kept


def _root(frames: NDArray[np.float64], inverse: bool) -> NDArray[np.float64]:
    """The symmetric square root of the frames' (shrunk) covariance, or of its inverse."""
    cov = np.cov(frames.T)
    cov = (1 - SHRINK) * cov + SHRINK * np.diag(np.diag(cov))
    values, vectors = np.linalg.eigh(cov)
    values = np.maximum(values, 1e-6) ** (-0.5 if inverse else 0.5)
    root: NDArray[np.float64] = (vectors * values) @ vectors.T
    return root


def learn(voice: list[NDArray[np.float32]], speaker: NDArray[np.float32], rate: int) -> EnvelopeMap | None:
    """The map from the voice's speech of the prompt's words (`voice`, one or more pieces) to the prompt
    (`speaker`, the stretch that says them), all at `rate`; None when either has too little speech."""
    ours = np.concatenate([speech_cepstra(piece, rate) for piece in voice])
    theirs = speech_cepstra(speaker, rate)
    if min(len(ours), len(theirs)) < MIN_FRAMES:
        return None
    transform = _root(ours, inverse=True) @ _root(theirs, inverse=False)
    return EnvelopeMap(ours.mean(0).astype(np.float32), transform.astype(np.float32))


def apply(audio: NDArray[np.float32], envelope: EnvelopeMap, rate: int) -> NDArray[np.float32]:
    """`audio` (mono, at `rate`) with each frame's envelope moved by `envelope`; its length kept."""
    import torch

    window, hop, filters, dct = _analysis(rate)
    if audio.size < window:
        return audio
    spectrum = _stft(audio, rate)
    cepstra = _cepstra(spectrum.abs().square().double().numpy(), rate)
    centred = cepstra - envelope.centre
    delta = centred @ envelope.transform.astype(np.float64) - centred
    log_gain = np.clip(delta @ dct, -LIMIT, LIMIT)  # [frames, BANDS], natural log of power
    # Per STFT bin: the filters' weighted mean of their bands' gains; above the top band, the top band's.
    weight = filters.sum(0)
    covered = weight > 1e-6
    bins = np.zeros((len(log_gain), filters.shape[1]))
    bins[:, covered] = (log_gain @ filters[:, covered]) / weight[covered]
    top = int(np.flatnonzero(covered)[-1])
    bins[:, top + 1 :] = bins[:, top : top + 1]
    shaped = spectrum * torch.from_numpy(np.exp(bins / 2)).to(spectrum.real.dtype)
    out = torch.istft(shaped.T, window, hop, window=torch.hann_window(window), length=audio.size)
    result: NDArray[np.float32] = out.numpy().astype(np.float32, copy=False)
    return result
