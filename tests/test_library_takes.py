"""Take history: append, list, replay, export and delete, across restarts and kills."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from tools.processes import kill_while_writing
from voicedesk.core.errors import InputError
from voicedesk.core.library.scan import STALE_SECONDS
from voicedesk.core.library.takes import TakeHistory


def tone(seconds: float = 1.0, rate: int = 24000, freq: float = 440.0) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (0.5 * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def test_takes_survive_a_restart_newest_first(tmp_path: Path) -> None:
    history = TakeHistory(tmp_path)
    first = history.add("Hello there.", "anna", tone(1.0), 24000, {"speed": 1.0, "seed": 7, "language": "en"})
    second = history.add("Second line.", "jf_alpha", tone(0.5, freq=880), 24000)
    reopened = TakeHistory(tmp_path)
    assert [take.id for take in reopened.list()] == [second.id, first.id]
    take = reopened.get(first.id)
    assert (take.text, take.voice, take.settings) == ("Hello there.", "anna", {"speed": 1.0, "seed": 7, "language": "en"})
    assert take.duration == pytest.approx(1.0) and take.sample_rate == 24000
    audio, rate = reopened.audio(take)
    assert rate == 24000 and audio.shape == (24000,)
    assert np.max(np.abs(audio - tone(1.0))) < 1e-5


def test_export_and_delete(tmp_path: Path) -> None:
    history = TakeHistory(tmp_path / "takes")
    take = history.add("Line", "anna", tone(1.0), 24000)
    out = history.export(take.id, tmp_path / "line.wav", target_rate=48000, subtype="PCM_24")
    info = sf.info(out)
    assert (info.samplerate, info.subtype, info.frames) == (48000, "PCM_24", 48000)
    history.delete(take)
    assert history.list() == [] and list((tmp_path / "takes").iterdir()) == []
    with pytest.raises(InputError):
        history.delete(take.id)
    with pytest.raises(InputError):
        history.get("../../etc/passwd")


def test_damaged_records_are_reported_not_raised(tmp_path: Path) -> None:
    history = TakeHistory(tmp_path)
    good = history.add("fine", "anna", tone(0.2), 24000)
    bad = history.add("to be damaged", "anna", tone(0.2), 24000)
    (tmp_path / f"{bad.id}.json").write_text("{ truncated", encoding="utf-8")
    missing_audio = history.add("audio lost", "anna", tone(0.2), 24000)
    (tmp_path / f"{missing_audio.id}.flac").unlink()
    (tmp_path / "odd.json").write_text(json.dumps([1, 2]), encoding="utf-8")
    scan = TakeHistory(tmp_path).scan()
    assert [take.id for take in scan.items] == [good.id]
    assert len(scan.problems) == 3


def test_unserialisable_settings_are_refused_before_writing(tmp_path: Path) -> None:
    history = TakeHistory(tmp_path)
    with pytest.raises(InputError, match="plain values"):
        history.add("x", "anna", tone(0.2), 24000, {"device": object()})
    assert list(tmp_path.iterdir()) == []


_WRITER = """
import sys, numpy as np
from voicedesk.core.library.takes import TakeHistory
history = TakeHistory(__import__("pathlib").Path(sys.argv[1]))
audio = (0.3 * np.sin(np.arange(24000 * 3) / 24000 * 2 * np.pi * 300)).astype(np.float32)
print("ready", flush=True)
while True:
    history.add("A line of text.", "anna", audio, 24000, {"speed": 1.0})
"""


def test_killed_mid_write_leaves_a_consistent_history(tmp_path: Path) -> None:
    for _ in kill_while_writing(_WRITER, [str(tmp_path)], (0.2, 0.45, 0.7)):
        history = TakeHistory(tmp_path)
        scan = history.scan()
        assert scan.problems == [] and scan.items
        for take in scan.items:
            assert history.audio(take)[0].size == 72000
    # Leftovers of the killed writes (temp files, audio without a record) go once they are stale.
    old = time.time() - STALE_SECONDS - 10
    for path in tmp_path.iterdir():
        os.utime(path, (old, old))
    history = TakeHistory(tmp_path)
    records = {p.stem for p in tmp_path.glob("*.json")}
    assert {p.stem for p in tmp_path.glob("*.flac")} == records
    assert list(tmp_path.glob(".*")) == []
