"""Would a per-voice equaliser help cloning? A probe on the development voices (clone-dev.md, sweep 11).

For each target, its nearest stock voice (by the judge, on the held-out sentences) is given an EQ curve:
24 mel bands, the prompt's long-term average spectrum over that voice's speech of the prompt's own words,
level-neutral and clipped to ±LIMIT dB. The curve is applied to the voice's held-out speech, and the
judge's similarity is compared with and without it, as a share of the gap to the target's ceiling.
A curve that helps the stock voices would be worth fitting after the style; one that does not, is not.

Usage (from the repository root, venv active): python tests/benchmarks/clone_eq_probe.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "desktop"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import clone_dev  # noqa: E402
from clone_devset import TARGETS, target  # noqa: E402

from voicedesk.core.audio.resample import resample  # noqa: E402

BANDS = 24
LIMITS_DB = (6.0, 12.0)


def average_spectrum(audio_16k: np.ndarray, n_fft: int = 512) -> np.ndarray:
    """Power spectrum averaged over the frames within 30 dB of the loudest."""
    x = torch.from_numpy(audio_16k.astype(np.float32))
    power = torch.stft(x, n_fft, n_fft // 4, window=torch.hann_window(n_fft), return_complex=True).abs().square()
    energy = power.sum(0)
    return power[:, energy > energy.max() * 1e-3].mean(1).numpy()


def mel_bands(power: np.ndarray, sample_rate: int = 16000) -> tuple[np.ndarray, np.ndarray]:
    """Centre frequencies and mean power of `BANDS` mel-spaced bands."""
    freqs = np.linspace(0, sample_rate / 2, len(power))
    mel = 2595 * np.log10(1 + freqs / 700)
    band = np.digitize(mel, np.linspace(mel[1], mel[-1], BANDS + 1)) - 1
    centres = np.array([freqs[band == b].mean() for b in range(BANDS)])
    return centres, np.array([power[band == b].mean() for b in range(BANDS)])


def eq_curve(prompt_16k: np.ndarray, voice_16k: np.ndarray, limit_db: float) -> tuple[np.ndarray, np.ndarray]:
    centres, wanted = mel_bands(average_spectrum(prompt_16k))
    _, have = mel_bands(average_spectrum(voice_16k))
    gain = 10 * np.log10(wanted / have)
    gain -= np.average(gain, weights=wanted)  # level-neutral: the judge ignores loudness anyway
    return centres, np.clip(gain, -limit_db, limit_db)


def equalise(audio_24k: np.ndarray, centres: np.ndarray, gain_db: np.ndarray, n_fft: int = 1024) -> np.ndarray:
    x = torch.from_numpy(audio_24k.astype(np.float32))
    window = torch.hann_window(n_fft)
    spectrum = torch.stft(x, n_fft, n_fft // 4, window=window, return_complex=True)
    freqs = np.linspace(0, 12000, spectrum.shape[0])
    gain = 10 ** (np.interp(freqs, centres, gain_db) / 20)
    spectrum = spectrum * torch.from_numpy(gain).float()[:, None]
    return torch.istft(spectrum, n_fft, n_fft // 4, window=window, length=len(x)).numpy()


def main() -> None:
    torch.set_num_threads(2)
    model, stock = clone_dev.load_local()
    ids = clone_dev.text_ids()
    scorer = clone_dev.Scorer()
    held_out = {v: [clone_dev.speak(model, s, h) for h in ids["held_out"]] for v, s in stock.items()}
    said = {v: resample(clone_dev.speak(model, s, ids["prompt"]), 24000, 16000) for v, s in stock.items()}
    for limit in LIMITS_DB:
        gaps = []
        print(f"EQ clipped to ±{limit:.0f} dB")
        for name in TARGETS:
            sims = {v: scorer.similarity(name, audio) for v, audio in held_out.items()}
            voice = max(sims, key=lambda v: sims[v])
            centres, gain = eq_curve(target(name, clone_dev.cache_folder()).prompt_16k, said[voice], limit)
            after = scorer.similarity(name, [equalise(a, centres, gain) for a in held_out[voice]])
            gap = (after - sims[voice]) / (scorer.ceiling[name] - sims[voice])
            gaps.append(gap)
            print(f"  {name:9s} {voice:12s} {sims[voice]:.3f} -> {after:.3f} (ceiling {scorer.ceiling[name]:.3f}): "
                  f"gap closed by the EQ {gap:+.2f}", flush=True)
        print(f"  mean {np.mean(gaps):+.3f}, range {min(gaps):+.2f} to {max(gaps):+.2f}")


if __name__ == "__main__":
    main()
