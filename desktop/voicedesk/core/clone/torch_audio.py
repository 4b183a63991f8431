"""Differentiable audio helpers for fitting: 24 → 16 kHz resampling and encoder-side augmentation.

This module imports torch at the top: import it only from code that already needs torch.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

_KERNELS: dict[tuple[str, torch.dtype], torch.Tensor] = {}
HALF_TAPS = 48  # per side, at the 48 kHz intermediate rate


def _lowpass(device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    key = (str(device), dtype)
    if key not in _KERNELS:
        # Windowed sinc at 48 kHz with its cutoff just under the new Nyquist (8 kHz), Kaiser window.
        n = torch.arange(-HALF_TAPS, HALF_TAPS + 1, dtype=torch.float64)
        cutoff = 0.95 * 8000 / 48000
        sinc = 2 * cutoff * torch.special.sinc(2 * cutoff * n)
        window = torch.kaiser_window(2 * HALF_TAPS + 1, periodic=False, beta=8.0, dtype=torch.float64)
        kernel = (sinc * window * 2).to(dtype)  # × 2 restores the level lost to zero-stuffing
        _KERNELS[key] = kernel.flip(0).reshape(1, 1, -1).to(device)
    return _KERNELS[key]


def resample_24k_to_16k(audio: torch.Tensor) -> torch.Tensor:
    """[T] or [B, T] at 24 kHz → 16 kHz: zero-stuff to 48 kHz, low-pass, keep every third sample."""
    x = audio.reshape(-1, audio.shape[-1])
    up = torch.zeros(x.shape[0], x.shape[1] * 2, device=x.device, dtype=x.dtype)
    up = up.index_copy(1, torch.arange(0, up.shape[1], 2, device=x.device), x)
    y = F.conv1d(F.pad(up.unsqueeze(1), (HALF_TAPS, HALF_TAPS)), _lowpass(x.device, x.dtype), stride=3)
    out = y.squeeze(1)
    return out.reshape(*audio.shape[:-1], out.shape[-1])


SNR_DB = 35.0  # white noise added to the speech the encoder hears
GAIN_DB = 6.0  # random gain within ± this
MIN_KEPT = 16000  # samples: shorter speech is not cropped


def augment(audio: torch.Tensor, generator: torch.Generator, snr_db: float = SNR_DB, max_crop_s: float = 0.2) -> torch.Tensor:
    """Random edge crop, gain (±6 dB) and white noise at `snr_db`, so the fit cannot lean on one
    exact waveform's quirks of the encoder. 16 kHz, 1-D."""
    n = audio.shape[-1]
    crop = int(torch.randint(0, int(max_crop_s * 16000) + 1, (2,), generator=generator).sum())
    if n - crop > MIN_KEPT:
        start = int(torch.randint(0, crop + 1, (1,), generator=generator))
        audio = audio[start : n - (crop - start)]
    gain = 10 ** ((float(torch.rand(1, generator=generator)) * 2 * GAIN_DB - GAIN_DB) / 20)
    rms = audio.detach().square().mean().sqrt()
    noise = torch.randn(audio.shape, generator=generator).to(audio.device) * rms * 10 ** (-snr_db / 20)
    return (audio + noise) * gain


def augment_fixed_length(audio: torch.Tensor, generator: torch.Generator | None, crop: int) -> torch.Tensor:
    """`augment` with exactly `crop` samples cut (split between the edges at random) and every random
    number drawn as a tensor on the generator's device (the audio's without one), so that the same
    shapes and no host reads come every time: fit to be captured in a CUDA graph."""
    device = generator.device if generator is not None else audio.device
    n = audio.shape[-1]
    if n - crop > MIN_KEPT:
        start = torch.randint(0, crop + 1, (1,), generator=generator, device=device).to(audio.device)
        audio = audio.index_select(0, start + torch.arange(n - crop, device=audio.device))
    gain = 10 ** ((torch.rand(1, generator=generator, device=device).to(audio.device) * 2 * GAIN_DB - GAIN_DB) / 20)
    rms = audio.detach().square().mean().sqrt()
    noise = torch.randn(audio.shape, generator=generator, device=device).to(audio.device)
    return (audio + noise * rms * 10 ** (-SNR_DB / 20)) * gain


def db(value: float) -> float:
    return 20 * math.log10(max(value, 1e-12))
