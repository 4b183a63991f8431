"""Prompt intake on real speech (the bundled sample) and on audio built to break it."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from tools.make_bad_corpus import SAMPLE_PROMPT, speech
from voicedesk.core.audio import intake, resample
from voicedesk.core.audio.intake import Prompt, load_prompt
from voicedesk.core.errors import InputError


def _rms_db(audio: np.ndarray) -> float:
    return float(20 * np.log10(np.sqrt(np.mean(audio.astype(np.float64) ** 2))))


def test_sample_prompt_is_clean_mono_24k_and_normalised() -> None:
    prompt = load_prompt(SAMPLE_PROMPT)
    assert isinstance(prompt, Prompt)
    assert prompt.sample_rate == 24000 and prompt.audio.dtype == np.float32 and prompt.audio.ndim == 1
    assert 2.8 < prompt.duration < 3.4
    assert 2.3 < prompt.speech_seconds <= prompt.duration
    assert prompt.notices == ()
    assert float(np.abs(prompt.audio).max()) <= intake.PEAK_CEILING + 1e-4
    assert -24.0 < _rms_db(prompt.audio) < -18.0  # speech frames at -20, pauses pull the mean down
    assert prompt.audio_16k().shape[0] == pytest.approx(prompt.audio.size * 2 / 3, abs=2)
    assert prompt.audio_16k() is prompt.audio_16k()  # cached
    assert prompt.source_rate == 16000


def test_samples_in_any_layout_and_gain_give_the_same_prompt() -> None:
    voice = speech(44100)
    from_file = load_prompt(SAMPLE_PROMPT)
    stereo = np.stack([voice * 0.05, voice * 0.05], axis=1)  # quiet stereo, [frames, channels]
    from_samples = load_prompt((stereo, 44100))
    assert from_samples.source == "the recording"
    assert abs(from_samples.duration - from_file.duration) < 0.05
    assert abs(_rms_db(from_samples.audio) - _rms_db(from_file.audio)) < 1.0


def test_leading_and_trailing_silence_is_trimmed() -> None:
    voice = speech(16000)
    padded = np.concatenate([np.zeros(32000, np.float32), voice, np.zeros(48000, np.float32)])
    plain, trimmed = load_prompt((voice, 16000)), load_prompt((padded, 16000))
    assert abs(trimmed.duration - plain.duration) < 2 * intake.EDGE_PAD_SECONDS + 0.05  # plain touches the file edges
    assert trimmed.duration < padded.size / 16000 - 4.5


def test_speech_in_moderate_noise_is_accepted_but_steady_sounds_are_not() -> None:
    rng = np.random.default_rng(1)
    voice = speech(16000)
    noisy = voice + rng.standard_normal(voice.size).astype(np.float32) * 0.01  # about 20 dB SNR
    assert load_prompt((noisy, 16000)).speech_seconds > 1.5
    t = np.arange(3 * 16000) / 16000
    for steady in (0.5 * np.sin(2 * np.pi * 220 * t), 0.3 * np.sin(2 * np.pi * 50 * t)):
        with pytest.raises(InputError, match="does not sound like speech"):
            load_prompt((steady, 16000))


def test_too_short_says_how_long_it_was_and_what_to_do() -> None:
    with pytest.raises(InputError) as caught:
        load_prompt((speech(16000)[:16000], 16000))
    text = str(caught.value)
    assert "s of speech" in text and "1.5 s" in text and "3 seconds" in text


def test_long_recording_is_cut_to_30_seconds_with_a_notice() -> None:
    voice = speech(16000)
    long = np.tile(np.concatenate([voice, np.zeros(4000, np.float32)]), 12)
    prompt = load_prompt((long, 16000))
    assert prompt.duration <= intake.MAX_PROMPT_SECONDS + 1e-6
    assert any("first 30 s" in notice for notice in prompt.notices)


@pytest.mark.parametrize("bad", [np.zeros((0,), np.float32), np.zeros((2, 2, 2), np.float32), "text"])
def test_malformed_sample_blocks_are_input_errors(bad: object) -> None:
    with pytest.raises(InputError):
        load_prompt((bad, 16000))  # type: ignore[arg-type]


def test_unsupported_rate_of_raw_samples() -> None:
    with pytest.raises(InputError, match="sample rate of 1000 Hz"):
        load_prompt((speech(16000), 1000))


def test_missing_file_is_an_input_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError, match="does not exist"):
        load_prompt(tmp_path / "nope.wav")


def test_resample_keeps_frequency_and_length_with_either_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    t = np.arange(44100) / 44100
    tone = np.sin(2 * np.pi * 1000 * t).astype(np.float32)
    fast = resample.resample(tone, 44100, 24000)
    monkeypatch.setitem(__import__("sys").modules, "soxr", None)  # as on a box without soxr
    slow = resample.resample(tone, 44100, 24000)
    for out in (fast, slow):
        assert out.dtype == np.float32 and abs(out.size - 24000) <= 1
        spectrum = np.abs(np.fft.rfft(out[2000:22000] * np.hanning(20000)))
        assert abs(np.argmax(spectrum) * 24000 / 20000 - 1000) < 2
    assert np.max(np.abs(fast[100:-100] - slow[100:-100])) < 0.02


def test_reads_only_the_first_minute_of_a_long_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    voice = speech(16000)
    path = tmp_path / "long.flac"
    sf.write(path, np.tile(voice, 30), 16000)  # ~100 s
    prompt = load_prompt(path)
    assert any("first 60 s" in notice or "min long" in notice for notice in prompt.notices) or prompt.duration <= 30
