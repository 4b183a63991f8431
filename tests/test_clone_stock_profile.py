"""The stock voices' judge profile: built from real speech, kept with its key, used to name the closest stock voice
in a clone's report, and told when that voice is closer than the clone."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from voicedesk.core.audio.resample import resample
from voicedesk.core.clone import stock_profile
from voicedesk.core.clone.fit import CHECK_TEXT
from voicedesk.core.clone.judge import Judge
from voicedesk.core.clone.report import QualityReport


def unit(seed: int) -> np.ndarray:
    vector = np.random.default_rng(seed).normal(size=256).astype(np.float32)
    return vector / np.linalg.norm(vector)


def test_the_key_covers_the_sentence_and_every_style() -> None:
    styles = {"af_a": np.zeros((4, 256), np.float32), "bm_b": np.ones((4, 256), np.float32)}
    base = stock_profile.key(styles, CHECK_TEXT)
    assert stock_profile.key(dict(reversed(styles.items())), CHECK_TEXT) == base  # order does not matter
    assert stock_profile.key(styles, "Another sentence.") != base
    changed = {**styles, "bm_b": styles["bm_b"] * 2}
    assert stock_profile.key(changed, CHECK_TEXT) != base
    assert stock_profile.key({"af_a": styles["af_a"]}, CHECK_TEXT) != base


def test_a_saved_profile_is_read_back_only_for_its_key(models: Path, caplog: pytest.LogCaptureFixture) -> None:
    profile = {"af_a": unit(1), "bm_b": unit(2)}
    path = stock_profile.save(profile, "key-1")
    assert path == models / stock_profile.PROFILE_NAME
    loaded = stock_profile.load("key-1")
    assert sorted(loaded) == ["af_a", "bm_b"]
    np.testing.assert_array_equal(loaded["bm_b"], profile["bm_b"])
    assert stock_profile.load("key-2") == {}  # built for other voices or another sentence: not used
    path.write_bytes(b"\x00" * 64)  # damaged: skipped with a warning, never an error
    with caplog.at_level(logging.WARNING):
        assert stock_profile.load("key-1") == {}
    assert "could not be read" in caplog.text and "add-stock" in caplog.text


def test_the_current_profile_hashes_the_stock_styles_once_until_they_are_reloaded(
        models: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Engine:
        styles = {"af_a": np.zeros((4, 256), np.float32), "bm_b": np.ones((4, 256), np.float32)}

        def stock_styles(self) -> dict[str, np.ndarray]:
            return dict(self.styles)

    engine = Engine()
    stock_profile.save({"af_a": unit(1), "bm_b": unit(2)}, stock_profile.key(engine.styles, CHECK_TEXT))
    hashed: list[str] = []
    real_key = stock_profile.key
    monkeypatch.setattr(stock_profile, "key", lambda styles, text: hashed.append(text) or real_key(styles, text))
    assert sorted(stock_profile.current(engine, CHECK_TEXT)) == ["af_a", "bm_b"]
    assert sorted(stock_profile.current(engine, CHECK_TEXT)) == ["af_a", "bm_b"]
    assert hashed == [CHECK_TEXT]  # the second call reused the key
    assert stock_profile.current(engine, "Another sentence.") == {}  # another sentence: another key
    engine.styles = {**engine.styles, "bm_b": np.full((4, 256), 2, np.float32)}  # reloaded, changed
    assert stock_profile.current(engine, CHECK_TEXT) == {}
    assert len(hashed) == 3


def test_the_nearest_stock_voice_is_the_most_similar() -> None:
    prompt = unit(3)
    profile = {"af_a": unit(4), "bm_b": (prompt + 0.5 * unit(5)) / np.linalg.norm(prompt + 0.5 * unit(5)),
               "jf_c": -prompt}
    name, similarity = stock_profile.nearest(profile, prompt) or ("", 0.0)
    assert name == "bm_b" and similarity == pytest.approx(float(profile["bm_b"] @ prompt))
    assert stock_profile.nearest({}, prompt) is None
    assert [name for name, _ in stock_profile.closest(profile, prompt, 2)] == ["bm_b", "af_a"]  # closest first
    assert stock_profile.closest(profile, prompt, 5)[-1] == ("jf_c", pytest.approx(-1.0, abs=1e-5))


def test_the_report_names_the_closest_stock_voice_and_says_when_it_is_closer() -> None:
    clone_wins = QualityReport(before=0.40, after=0.78, stock_voice="af_heart", stock=0.61)
    assert not clone_wins.stock_is_closer
    assert clone_wins.summary() == ("Similarity to the prompt: 40% before, 78% after. Very close to the prompt's "
                                    "voice. Closest stock voice: af_heart, 61%.")
    stock_wins = QualityReport(before=0.40, after=0.55, stock_voice="bf_emma", stock=0.58)
    assert stock_wins.stock_is_closer
    assert stock_wins.verdict.startswith("The stock voice bf_emma is closer to the prompt (58%)")
    assert "voices list" in stock_wins.summary() and "Closest stock voice" not in stock_wins.summary()
    unknown = QualityReport(before=0.40, after=0.55)  # no profile: the report as before
    assert not unknown.stock_is_closer and unknown.stock_line() == ""
    assert unknown.summary().endswith("Somewhat like the prompt's voice; a longer, cleaner recording may help.")


@pytest.mark.slow
def test_a_profile_of_real_speech_finds_the_voice_that_spoke(cpu_engine: Any) -> None:
    judge = Judge()
    names = ["af_heart", "bm_george", "jf_alpha"]
    profile = stock_profile.build(cpu_engine, judge, CHECK_TEXT, names)
    assert sorted(profile) == sorted(names)
    for vector in profile.values():
        assert vector.shape == (256,) and np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-4)
    # bm_george saying something else is heard closest to bm_george's profile.
    chunks = cpu_engine.synthesize("Three ships sailed past the harbour wall at dawn.", cpu_engine.stock_voice("bm_george"))
    audio = resample(np.concatenate([c.audio for c in chunks]), cpu_engine.sample_rate, 16000)
    name, similarity = stock_profile.nearest(profile, judge.embed(audio)) or ("", 0.0)
    assert name == "bm_george" and similarity > 0.7


def test_setup_profiled_every_stock_voice() -> None:
    """run.sh and the test command build the profile (`voicedesk voices add-stock`), for the voices there are."""
    from voicedesk.core.engine import voices

    styles = voices.stock_styles()
    profile = stock_profile.load(stock_profile.key(styles, CHECK_TEXT))
    assert sorted(profile) == sorted(styles), "the stock voices' profile is missing: run `voicedesk voices add-stock`"
