"""Recordings kept on disk as they stop: exact samples, the line read, the newest found, the oldest pruned."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from voicedesk.core.audio import kept


def test_a_kept_recording_holds_exactly_what_was_captured_and_its_line(voicedesk_home: Path) -> None:
    samples = np.random.default_rng(0).uniform(-0.9, 0.9, 48000 * 3).astype(np.float32)
    path = kept.keep(samples, 48000, "The sun came out after the rain.")
    assert path.parent == voicedesk_home / "data" / "recordings"
    audio, rate = sf.read(path, dtype="float32")
    assert rate == 48000 and np.array_equal(audio, samples)  # 32-bit float: no rounding, no resampling
    newest = kept.latest()
    assert newest is not None and newest.path == path and newest.line == "The sun came out after the rain."
    assert not [p for p in path.parent.iterdir() if p.suffix not in (".wav", ".txt")]  # no temporary left


def test_the_newest_is_found_and_only_the_newest_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kept, "KEEP", 3)
    assert kept.latest(tmp_path) is None
    paths = [kept.keep(np.full(1600, k / 10, np.float32), 16000, f"line {k}" if k % 2 else "", tmp_path)
             for k in range(5)]
    assert sorted(p.name for p in tmp_path.glob("*.wav")) == [p.name for p in paths[2:]]
    assert sorted(p.name for p in tmp_path.glob("*.txt")) == [paths[3].with_suffix(".txt").name]
    newest = kept.latest(tmp_path)
    assert newest is not None and newest.path == paths[4] and newest.line == ""  # made without a line
