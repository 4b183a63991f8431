"""How the fit reads a prompt's pace: its sentences as the engine speaks them, the pauses between them left out."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch

from voicedesk.core.clone.fit import PACE_MATCHED, pause_lengths, sentence_ids, text_ids, voice_pace
from voicedesk.core.text.vocab import kokoro_vocab

RATE = 16000


def speech(seconds: float, seed: int = 0) -> np.ndarray:
    """A loud, speech-like stretch (noise under a slow envelope, never silent for 10 ms)."""
    t = np.arange(int(seconds * RATE)) / RATE
    noise = np.random.default_rng(seed).standard_normal(t.size)
    return (0.3 * noise * (0.6 + 0.4 * np.sin(2 * np.pi * 3 * t))).astype(np.float32)


def silence(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * RATE), np.float32)


def test_pauses_are_quiet_runs_inside_speech_short_closures_are_not() -> None:
    wav = np.concatenate([silence(0.3), speech(1.0), silence(0.4), speech(1.0, 1), silence(0.1), speech(0.5, 2),
                          silence(0.25), speech(0.5, 3), silence(0.3)])
    # The edges and the 0.1 s gap (a stop consonant's closure) are no pauses.
    assert [round(n / RATE, 2) for n in pause_lengths(wav)] == [0.4, 0.25]
    assert pause_lengths(silence(1.0)).size == 0


def test_the_pace_leaves_out_the_pauses_between_the_prompts_sentences() -> None:
    # The model says two sentences apart, 1 s each; the speaker said them in 2 s with a 0.5 s pause between:
    # the same rate. Counting that pause would make the voice 0.8x as fast.
    ours = [torch.from_numpy(speech(1.0)), torch.from_numpy(speech(1.0, 1))]
    theirs = np.concatenate([speech(1.0, 2), silence(0.5), speech(1.0, 3)])
    assert voice_pace(ours, theirs) == pytest.approx(1.0, abs=0.02)
    assert voice_pace(ours, speech(1.6)) == pytest.approx(1.25, abs=0.02)  # the speaker is faster
    # In one sentence a pause is part of how the speaker speaks: the model's speech of it keeps its own.
    assert voice_pace([torch.from_numpy(speech(2.0))], theirs) == PACE_MATCHED[0]  # 2.0 / 2.5, clipped to 0.8
    # Only as many pauses as there are breaks between sentences go: the longest one here.
    two_pauses = np.concatenate([speech(1.0, 2), silence(0.5), speech(0.5, 3), silence(0.3), speech(0.5, 4)])
    assert voice_pace(ours, two_pauses) == pytest.approx(2.0 / 2.3, abs=0.02)


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng (tests/tools/install-system-deps.sh)")
def test_a_prompts_words_are_cut_into_the_sentences_the_engine_speaks() -> None:
    sentences = ["The old lighthouse keeper watched the boats come home.", "Is it late?", "Yes!"]
    pieces = sentence_ids(text_ids(" ".join(sentences)))
    assert pieces == [text_ids(s) for s in sentences]
    one = text_ids(sentences[0])
    assert sentence_ids(one) == [one]
    # A stray ending is no sentence of its own; words without an ending are one.
    stop = kokoro_vocab()["."]
    assert sentence_ids([*one, stop]) == [[*one, stop]]
    assert sentence_ids(one[:-1]) == [one[:-1]]
    assert sentence_ids([]) == []
