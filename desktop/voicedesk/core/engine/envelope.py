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
(docs/benchmarks/clone-dev.md, sweep 44). Between whitening and colouring, each whitened coefficient is also moved
from the voice's distribution to the speaker's through their quantiles (their shapes, not only their spreads):
0.58 → 0.59, the weakest target 0.36 → 0.39 on the same fits (sweep 45, one seed).
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
QUANTILES = 25  # knots of each whitened coefficient's distribution, probabilities 0.02 to 0.98


@dataclass(frozen=True)
class EnvelopeMap:
    """A frame's cepstra c become centre + f((c - centre) @ whiten) @ colour: `centre` [N_CEPSTRA], the voice's mean
    cepstrum; `whiten` [N_CEPSTRA, N_CEPSTRA], the voice's covariance to the power -1/2 (or, in a map of format 4, the
    whole linear transform); `colour`, the speaker's to the power 1/2 (None: the identity); f moves each whitened
    coefficient from the voice's distribution to the speaker's, piecewise linearly through their quantiles at the
    same probabilities, `voice_knots` to `speaker_knots` [QUANTILES, N_CEPSTRA] (None: f is the identity)."""

    centre: NDArray[np.float32]
    whiten: NDArray[np.float32]
    colour: NDArray[np.float32] | None = None
    voice_knots: NDArray[np.float32] | None = None
    speaker_knots: NDArray[np.float32] | None = None

    @property
    def transform(self) -> NDArray[np.float32]:
        """The linear part, whiten @ colour (the whole map where the distributions' shapes are not matched)."""
        return self.whiten if self.colour is None else self.whiten @ self.colour

    def mapped(self, cepstra: NDArray[np.float64]) -> NDArray[np.float64]:
        """[frames, N_CEPSTRA] cepstra moved by the map."""
        z = (cepstra - self.centre) @ self.whiten.astype(np.float64)
        if self.voice_knots is not None and self.speaker_knots is not None:
            z = _through_knots(z, self.voice_knots.astype(np.float64), self.speaker_knots.astype(np.float64))
        if self.colour is not None:
            z = z @ self.colour.astype(np.float64)
        out: NDArray[np.float64] = self.centre + z
        return out

    def to_array(self) -> NDArray[np.float32]:
        """How a voice file stores it: [1 + N_CEPSTRA, N_CEPSTRA] for a linear map (the centre, then the
        transform), [1 + 2 N_CEPSTRA + 2 QUANTILES, N_CEPSTRA] for a whole one (centre, whiten, colour, knots)."""
        if self.colour is None or self.voice_knots is None or self.speaker_knots is None:
            return np.vstack([self.centre[None, :], self.transform]).astype(np.float32)
        parts = (self.centre[None, :], self.whiten, self.colour, self.voice_knots, self.speaker_knots)
        return np.vstack(parts).astype(np.float32)

    @staticmethod
    def from_array(array: NDArray[np.float32]) -> EnvelopeMap:
        """The map `to_array` stored, or `InputError` if it is not one."""
        array = np.asarray(array)
        n, q = N_CEPSTRA, QUANTILES
        if array.shape not in ((n + 1, n), (1 + 2 * n + 2 * q, n)) or not np.isfinite(array).all():
            raise InputError(f"an envelope map is {n + 1}×{n} or {1 + 2 * n + 2 * q}×{n} finite numbers")
        centre, matrices = array[0], array[1 : 1 + 2 * n]
        # A linear map's transform stays near the identity; a whole map's whitening can reach 1e3 (eigenvalues 1e-6)
        if np.abs(centre).max() > 1e3 or np.abs(matrices).max() > (10 if len(array) == n + 1 else 1e4):
            raise InputError("the envelope map's numbers are implausibly large")
        if len(array) == n + 1:
            return EnvelopeMap(centre.astype(np.float32), array[1:].astype(np.float32))
        knots = array[1 + 2 * n :].reshape(2, q, n)
        if np.abs(knots).max() > 100 or (np.diff(knots, axis=1) < 0).any():
            raise InputError("the envelope map's quantiles are not in order or implausibly large")
        whiten, colour = array[1 : 1 + n], array[1 + n : 1 + 2 * n]
        return EnvelopeMap(*(a.astype(np.float32) for a in (centre, whiten, colour, knots[0], knots[1])))


def _through_knots(z: NDArray[np.float64], xs: NDArray[np.float64], ys: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each column of `z` through the piecewise-linear map with knots `xs` → `ys`; beyond the outer knots, shifted as
    they are (no flattening of the extremes)."""
    out = np.empty_like(z)
    for i in range(z.shape[1]):
        column = z[:, i]
        moved = np.interp(column, xs[:, i], ys[:, i])
        moved = np.where(column < xs[0, i], column + ys[0, i] - xs[0, i], moved)
        out[:, i] = np.where(column > xs[-1, i], column + ys[-1, i] - xs[-1, i], moved)
    return out


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
    return window, hop, filters, dct_rows(BANDS, N_CEPSTRA)


def dct_rows(n_in: int, n_out: int) -> NDArray[np.float64]:
    """Orthonormal DCT-II rows 1..n_out (row 0, the mean, is left out): log mel bands to mel cepstra."""
    k = np.arange(1, n_out + 1)[:, None]
    n = np.arange(n_in)[None, :]
    rows: NDArray[np.float64] = np.sqrt(2.0 / n_in) * np.cos(np.pi * k * (2 * n + 1) / (2 * n_in))
    return rows


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
    centre = ours.mean(0)
    whiten = _root(ours, inverse=True)
    # Each whitened coefficient's distribution, the voice's and the speaker's, at the same probabilities: a shape
    # the covariance alone does not give (how often the envelope goes far, and to which side).
    probabilities = (np.arange(QUANTILES) + 0.5) / QUANTILES
    voice_knots = np.quantile((ours - centre) @ whiten, probabilities, axis=0)
    speaker_knots = np.quantile((theirs - theirs.mean(0)) @ _root(theirs, inverse=True), probabilities, axis=0)
    parts = (centre, whiten, _root(theirs, inverse=False), voice_knots, speaker_knots)
    return EnvelopeMap(*(p.astype(np.float32) for p in parts))


def apply(audio: NDArray[np.float32], envelope: EnvelopeMap, rate: int) -> NDArray[np.float32]:
    """`audio` (mono, at `rate`) with each frame's envelope moved by `envelope`; its length kept."""
    import torch

    window, hop, filters, dct = _analysis(rate)
    if audio.size < window:
        return audio
    spectrum = _stft(audio, rate)
    cepstra = _cepstra(spectrum.abs().square().double().numpy(), rate)
    delta = envelope.mapped(cepstra) - cepstra
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
