"""Recordings kept on disk the moment they stop, so that a crash or a closed window before cloning loses none.

Each recording is a 32-bit float WAV (exactly the samples captured, at the device's rate) named by the time it
stopped, with the line shown to read while it was made beside it as text. Only the newest `KEEP` are kept.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy.typing as npt

from voicedesk.core import paths
from voicedesk.core.atomic import atomic_write_bytes
from voicedesk.core.audio.export import write_wav

KEEP = 20
PREFIX = "recording-"


@dataclass(frozen=True)
class KeptRecording:
    path: Path  # the WAV
    line: str  # the line shown to read while it was made ("" when none was)
    made: datetime


def recordings_dir() -> Path:
    folder = paths.data_dir() / "recordings"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def keep(samples: npt.ArrayLike, sample_rate: int, line: str = "", folder: Path | None = None) -> Path:
    """Write a recording (and its line) atomically; prune the oldest beyond `KEEP`. Returns the WAV's path."""
    folder = folder or recordings_dir()
    micros = time.time_ns() // 1000
    while (wav := folder / f"{PREFIX}{time.strftime('%Y%m%d-%H%M%S', time.localtime(micros // 10**6))}"
                           f"-{micros % 10**6:06d}.wav").exists():
        micros += 1  # two recordings in one microsecond (a test's loop): the names still sort by time
    write_wav(wav, samples, sample_rate, subtype="FLOAT")  # the recording first: it is what must not be lost
    if line:
        atomic_write_bytes(wav.with_suffix(".txt"), line.encode("utf-8"))
    for old in _recordings(folder)[:-KEEP]:
        old.with_suffix(".txt").unlink(missing_ok=True)
        old.unlink(missing_ok=True)
    return wav


def latest(folder: Path | None = None) -> KeptRecording | None:
    """The newest kept recording, or None."""
    found = _recordings(folder or recordings_dir())
    return read(found[-1]) if found else None


def read(wav: Path) -> KeptRecording:
    """A kept recording's WAV with the line beside it ("" when there is none)."""
    text = wav.with_suffix(".txt")
    line = text.read_text("utf-8", errors="replace").strip() if text.is_file() else ""
    return KeptRecording(wav, line, datetime.fromtimestamp(wav.stat().st_mtime))


def _recordings(folder: Path) -> list[Path]:
    return sorted(folder.glob(f"{PREFIX}*.wav"))  # the names sort by time
