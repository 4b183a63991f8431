"""A cloned voice's envelope map (engine/envelope.py), on the real Kokoro engine's speech on the CPU."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from voicedesk.core.engine import envelope
from voicedesk.core.engine.envelope import N_CEPSTRA, QUANTILES, EnvelopeMap
from voicedesk.core.errors import InputError

pytestmark = pytest.mark.slow

RATE = 24000
SENTENCES = ("The old lighthouse keeper watched the boats come home.", "A bright red kite rose over the hill.")


@pytest.fixture(scope="module")
def speech(cpu_engine: Any) -> dict[str, list[np.ndarray]]:
    """Two stock voices, far apart (a woman's and a man's), each saying both sentences."""
    from voicedesk.core.engine import join_chunks

    return {voice: [join_chunks(cpu_engine.synthesize(text, cpu_engine.stock_voice(voice), seed=0)) for text in SENTENCES]
            for voice in ("af_heart", "am_adam")}


def spread_distance(a: np.ndarray, b: np.ndarray) -> float:
    """How far apart two speeches' envelope covariances are (Frobenius norm)."""
    return float(np.linalg.norm(np.cov(envelope.speech_cepstra(a, RATE).T) - np.cov(envelope.speech_cepstra(b, RATE).T)))


def test_a_map_learned_from_the_speech_itself_leaves_it_as_it_is(speech: dict[str, list[np.ndarray]]) -> None:
    audio = speech["af_heart"][0]
    same = envelope.learn([audio], audio, RATE)
    assert same is not None and np.abs(same.transform - np.eye(N_CEPSTRA)).max() < 1e-3
    out = envelope.apply(audio, same, RATE)
    assert out.dtype == np.float32 and out.shape == audio.shape
    assert np.abs(out - audio).max() < 1e-3 * np.abs(audio).max()


def test_the_map_brings_the_voices_envelope_movement_to_the_speakers(speech: dict[str, list[np.ndarray]]) -> None:
    voice, speaker = speech["af_heart"], speech["am_adam"]
    mapping = envelope.learn([voice[0]], speaker[0], RATE)  # the same words, as the fit has them
    assert mapping is not None
    moved = envelope.apply(voice[0], mapping, RATE)
    assert moved.shape == voice[0].shape and np.isfinite(moved).all()
    assert spread_distance(moved, speaker[0]) < 0.5 * spread_distance(voice[0], speaker[0])  # seen: 64 → 20
    # Only the envelope's movement changes: the voice's loudness stays within a few dB.
    assert 0.5 < np.sqrt(np.mean(moved**2) / np.mean(voice[0] ** 2)) < 2.0
    # Another sentence is reshaped too (how much that helps a clone, the development set measures: sweep 44).
    other = envelope.apply(voice[1], mapping, RATE)
    assert other.shape == voice[1].shape and not np.allclose(other, voice[1], atol=1e-3)


def test_the_map_matches_the_shape_of_each_coefficients_distribution_not_only_its_spread(
        speech: dict[str, list[np.ndarray]]) -> None:
    voice, speaker = speech["af_heart"][0], speech["am_adam"][0]
    mapping = envelope.learn([voice], speaker, RATE)
    assert mapping is not None and mapping.voice_knots is not None
    linear = EnvelopeMap(mapping.centre, mapping.whiten, mapping.colour)  # the same map without the quantiles

    def shape_distance(audio: np.ndarray) -> float:
        """Mean distance of the whitened coefficients' quantiles from the speaker's (scale-free: a shape)."""
        def whitened_quantiles(frames: np.ndarray) -> np.ndarray:
            z = (frames - frames.mean(0)) / frames.std(0)
            return np.quantile(z, np.linspace(0.05, 0.95, 19), axis=0)

        return float(np.abs(whitened_quantiles(envelope.speech_cepstra(audio, RATE))
                            - whitened_quantiles(envelope.speech_cepstra(speaker, RATE))).mean())

    shaped, straight = envelope.apply(voice, mapping, RATE), envelope.apply(voice, linear, RATE)
    assert shape_distance(shaped) < 0.9 * shape_distance(straight)
    # Stored and read back whole (a voice file's envelope.npy)
    again = EnvelopeMap.from_array(mapping.to_array())
    assert again.voice_knots is not None and np.array_equal(envelope.apply(voice, again, RATE), shaped)


def test_too_little_speech_learns_no_map(speech: dict[str, list[np.ndarray]]) -> None:
    audio = speech["af_heart"][0]
    assert envelope.learn([audio[: RATE // 4]], audio, RATE) is None
    assert envelope.learn([audio], np.zeros(RATE, np.float32), RATE) is None


def test_a_damaged_map_is_refused() -> None:
    good = EnvelopeMap(np.zeros(N_CEPSTRA, np.float32), np.eye(N_CEPSTRA, dtype=np.float32))
    assert np.array_equal(EnvelopeMap.from_array(good.to_array()).transform, good.transform)
    for bad in (np.zeros((3, 3)), np.full((N_CEPSTRA + 1, N_CEPSTRA), np.nan), 1e6 * good.to_array()):
        with pytest.raises(InputError):
            EnvelopeMap.from_array(bad)
    knots = np.tile(np.linspace(-2, 2, QUANTILES)[:, None], (1, N_CEPSTRA)).astype(np.float32)
    eye = np.eye(N_CEPSTRA, dtype=np.float32)
    whole = EnvelopeMap(np.zeros(N_CEPSTRA, np.float32), eye, eye, knots, 1.5 * knots).to_array()
    assert EnvelopeMap.from_array(whole).speaker_knots is not None
    unordered = whole.copy()
    unordered[-1], unordered[-2] = whole[-2], whole[-1]  # the speaker's top two quantiles swapped
    with pytest.raises(InputError, match="not in order"):
        EnvelopeMap.from_array(unordered)


def test_the_engine_speaks_a_voice_with_its_map(cpu_engine: Any, speech: dict[str, list[np.ndarray]]) -> None:
    mapping = envelope.learn([speech["af_heart"][0]], speech["am_adam"][0], RATE)
    style = cpu_engine.stock_voice("af_heart")
    [plain] = [chunk.audio for chunk in cpu_engine.synthesize(SENTENCES[1], style, seed=0)]
    [shaped] = [chunk.audio for chunk in cpu_engine.synthesize(SENTENCES[1], style, seed=0, envelope=mapping)]
    assert shaped.shape == plain.shape and not np.allclose(shaped, plain, atol=1e-3)
    assert np.allclose(shaped, envelope.apply(plain, mapping, RATE), atol=1e-5)
