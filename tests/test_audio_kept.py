"""Recordings kept on disk as they are made: exact samples, the line read, the newest found, the oldest pruned,
and a recording cut short by a killed process recovered from its spool (a real microphone, a real SIGKILL)."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audio_server import PulseServer
from tools.make_bad_corpus import speech
from voicedesk.core.audio import kept


def test_a_kept_recording_holds_exactly_what_was_captured_and_its_line(voicedesk_home: Path) -> None:
    samples = np.random.default_rng(0).uniform(-0.9, 0.9, 48000 * 3).astype(np.float32)
    spool = kept.Spool(48000, "The sun came out after the rain.")
    for block in np.array_split(samples, 7):
        spool.append(block)
    assert spool.path.stat().st_size == kept.RATE.size + samples.nbytes  # on disk while it is being made
    path = spool.finish(samples)
    assert path.parent == voicedesk_home / "data" / "recordings"
    audio, rate = sf.read(path, dtype="float32")
    assert rate == 48000 and np.array_equal(audio, samples)  # 32-bit float: no rounding, no resampling
    newest = kept.latest()
    assert newest is not None and newest.path == path and newest.line == "The sun came out after the rain."
    assert sorted(p.suffix for p in path.parent.iterdir()) == [".txt", ".wav"]  # no spool, no temporary left
    assert kept.recover() == []


def test_a_recording_that_ended_empty_leaves_nothing(tmp_path: Path) -> None:
    kept.Spool(48000, "Go left at the big white gate.", tmp_path).discard()
    assert list(tmp_path.iterdir()) == []


def test_the_newest_is_found_and_only_the_newest_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kept, "KEEP", 3)
    assert kept.latest(tmp_path) is None
    paths = [kept.Spool(16000, f"line {k}" if k % 2 else "", tmp_path).finish(np.full(1600, k / 10, np.float32))
             for k in range(5)]
    assert sorted(p.name for p in tmp_path.glob("*.wav")) == [p.name for p in paths[2:]]
    assert sorted(p.name for p in tmp_path.glob("*.txt")) == [paths[3].with_suffix(".txt").name]
    newest = kept.latest(tmp_path)
    assert newest is not None and newest.path == paths[4] and newest.line == ""  # made without a line


def test_spools_still_growing_or_empty_are_not_made_recordings(tmp_path: Path) -> None:
    growing = kept.Spool(24000, "", tmp_path)
    growing.append(np.ones(2400, np.float32))
    assert kept.recover(tmp_path) == []  # written to a moment ago: a recording in progress
    empty = kept.Spool(24000, "A line.", tmp_path)  # died before its first block
    later = time.time() + kept.ABANDONED_S + 1
    recovered = kept.recover(tmp_path, now=later)
    assert recovered == [growing.wav] and sf.info(growing.wav).frames == 2400
    assert not empty.path.exists() and not empty.wav.with_suffix(".txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [growing.wav.name]


RECORD_UNTIL_KILLED = textwrap.dedent("""
    import sys
    from pathlib import Path
    from voicedesk.core.audio.kept import Spool
    from voicedesk.core.audio.recorder import Recorder

    recorder = Recorder(max_seconds=60)
    spool = Spool(recorder.sample_rate, "The sun came out after the rain.", Path(sys.argv[1]))
    recorder.on_block = spool.append
    recorder.start()
    recorder.wait(60)
""")


@pytest.mark.audio
def test_a_recording_cut_short_by_a_killed_process_is_recovered(pulse_server: PulseServer, tmp_path: Path) -> None:
    feed = pulse_server.play_into("micfeed", np.tile(speech(48000), 20))
    child = subprocess.Popen([sys.executable, "-c", RECORD_UNTIL_KILLED, str(tmp_path)], env=os.environ.copy())
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not _spooled_seconds(tmp_path) > 1.5:
            time.sleep(0.1)
        assert _spooled_seconds(tmp_path) > 1.5, "the recording never reached the disk"
    finally:
        child.send_signal(signal.SIGKILL)  # no finally, no atexit: the process just ends
        child.wait(10)
        feed.kill()
    spool = next(tmp_path.glob("*.spool"))
    last_written = spool.stat().st_mtime
    recovered = kept.recover(tmp_path, now=last_written + kept.ABANDONED_S + 1)
    assert len(recovered) == 1 and not spool.exists()
    audio, rate = sf.read(recovered[0], dtype="float32")
    assert audio.size / rate > 1.5 and np.abs(audio).max() > 0.3  # the speech fed into the microphone
    newest = kept.latest(tmp_path)
    assert newest is not None and newest.path == recovered[0] and newest.line == "The sun came out after the rain."
    assert abs(newest.made.timestamp() - last_written) < 1  # made when it was recorded, not when recovered


def _spooled_seconds(folder: Path) -> float:
    spools = list(folder.glob("*.spool"))
    if not spools or spools[0].stat().st_size < kept.RATE.size:
        return 0.0
    raw = spools[0].read_bytes()
    return (len(raw) - kept.RATE.size) / 4 / kept.RATE.unpack_from(raw)[0]


@pytest.mark.audio
def test_a_disk_that_fills_mid_recording_loses_nothing(pulse_server: PulseServer) -> None:
    from voicedesk.core.audio.recorder import Recorder

    feed = pulse_server.play_into("micfeed", np.tile(speech(48000), 4))
    written: list[int] = []

    def fills_up(block: np.ndarray) -> None:
        if len(written) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        written.append(block.size)

    recorder = Recorder(max_seconds=1.5)
    recorder.on_block = fills_up
    try:
        recorder.start()
        assert recorder.wait(15)
        audio = recorder.stop()
    finally:
        feed.kill()
    assert audio.size == int(1.5 * recorder.sample_rate)  # the recording went on in memory
    assert len(written) == 3 and recorder.block_problem == "[Errno 28] No space left on device"
