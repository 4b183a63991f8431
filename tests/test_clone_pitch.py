"""A cloned voice's pitch from the prompt and the fitted voice's speech (`fit.voice_pitch`)."""

from __future__ import annotations

import numpy as np
import torch

from voicedesk.core.clone.fit import voice_pitch
from voicedesk.core.clone.pitch import median_pitch, pitch_spread

RATE = 16000


def voiced(hz: np.ndarray) -> np.ndarray:
    """A buzzy vowel-like signal following the F0 contour `hz` (one value per sample), with a voice's
    cycle-to-cycle jitter: a perfectly periodic signal peaks as high an octave below (the autocorrelation
    at two periods equals that at one), which no voice does."""
    wobble = np.convolve(np.random.default_rng(1).standard_normal(hz.size), np.ones(80) / 80, mode="same")
    phase = 2 * np.pi * np.cumsum(hz * (1 + 0.4 * wobble)) / RATE
    return (0.3 * sum(np.sin(k * phase) / k for k in range(1, 8))).astype(np.float32)


def contour(middle: float, cents: float, seconds: float = 2.0) -> np.ndarray:
    """An F0 contour gliding ±`cents` around `middle` Hz twice a second."""
    t = np.arange(int(seconds * RATE)) / RATE
    return middle * 2 ** (cents / 1200 * np.sin(2 * np.pi * 1.0 * t))


def curve(hz: np.ndarray) -> torch.Tensor:
    """The model's F0 output for that speech: 80 values a second, [1, N]."""
    return torch.from_numpy(hz[:: RATE // 80].astype(np.float32))[None]


def test_the_tracker_reads_median_and_spread() -> None:
    low, lively = voiced(contour(110, 100)), voiced(contour(110, 400))
    middle = median_pitch(low, RATE)
    assert middle is not None and abs(middle / 110 - 1) < 0.03
    spread_low, spread_lively = pitch_spread(low, RATE), pitch_spread(lively, RATE)
    assert spread_low and spread_lively and 2.5 < spread_lively / spread_low < 5.5


def test_the_voice_is_brought_to_the_prompts_pitch_and_range() -> None:
    prompt = voiced(contour(180, 100))
    hz = contour(240, 300)
    pitch = voice_pitch(torch.from_numpy(voiced(hz)), curve(hz), prompt)
    assert abs(pitch.scale - 180 / 240) < 0.03
    assert 0.25 < pitch.spread < 0.45  # a third of the range, give or take the tracker
    assert voice_pitch(torch.from_numpy(voiced(hz)), curve(hz), prompt, spread=False).spread == 1.0


def test_the_models_own_f0_stands_in_for_a_tracker_that_strays() -> None:
    # The speech the tracker hears an octave below what the model predicted (seen on a low male voice):
    # the scale follows the prediction, not the mistracked reading.
    prompt = voiced(contour(100, 100))
    heard_low = voiced(contour(60, 100)) + voiced(contour(120, 100))  # strong subharmonic
    predicted = curve(contour(120, 100))
    tracked = median_pitch(heard_low, RATE)
    assert tracked is not None and tracked < 0.85 * 120  # the tracker strays here
    pitch = voice_pitch(torch.from_numpy(heard_low), predicted, prompt)
    assert abs(pitch.scale - 100 / 120) < 0.03


def test_unclear_pitch_leaves_the_voice_as_it_is() -> None:
    hz = contour(200, 100)
    noise = np.random.default_rng(0).standard_normal(2 * RATE).astype(np.float32) * 0.1
    pitch = voice_pitch(torch.from_numpy(voiced(hz)), curve(hz), noise)
    assert pitch.scale == 1.0 and pitch.spread == 1.0
