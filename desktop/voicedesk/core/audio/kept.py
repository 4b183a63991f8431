"""Recordings kept on disk as they are made, so that a crash, even mid-recording, or a closed window loses none.

While recording, each block the microphone delivers is appended to a spool file (`Spool`: the sample rate, then
raw float32 samples, no header to keep up to date), with the line shown to read beside it as text. When the
recording stops, its exact samples become a 32-bit float WAV named by the time it started and the spool goes.
A spool left behind by a crash is turned into a WAV by `recover()`. Only the newest `KEEP` recordings are kept.
"""

from __future__ import annotations

import contextlib
import os
import struct
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt

from voicedesk.core import paths
from voicedesk.core.atomic import atomic_write_bytes
from voicedesk.core.audio.export import write_wav

KEEP = 20
PREFIX = "recording-"
SPOOL = ".spool"
RATE = struct.Struct("<I")  # a spool's first bytes: its sample rate
ABANDONED_S = 5.0  # a spool untouched this long belongs to no running recording (one grows every ~20 ms)


@dataclass(frozen=True)
class KeptRecording:
    path: Path  # the WAV
    line: str  # the line shown to read while it was made ("" when none was)
    made: datetime


class Spool:
    """A recording written as it is made. `append` each block (from one thread), then `finish` or `discard`.
    A whole recording at once: `Spool(rate, line).finish(samples)`."""

    def __init__(self, sample_rate: int, line: str = "", folder: Path | None = None) -> None:
        self.wav = _new_name(folder or paths.recordings_dir())
        self.path = self.wav.with_suffix(SPOOL)
        self.sample_rate = int(sample_rate)
        # Unbuffered: each block reaches the operating system at once and survives this process dying.
        self._file = open(self.path, "xb", buffering=0)  # noqa: SIM115 - closed by finish/discard
        self._file.write(RATE.pack(self.sample_rate))
        if line:  # (if this fails, the spool holds no samples yet: `recover` removes it)
            atomic_write_bytes(self.wav.with_suffix(".txt"), line.encode("utf-8"))

    def append(self, block: npt.NDArray[np.float32]) -> None:
        self._file.write(np.ascontiguousarray(block, "<f4").tobytes())

    def finish(self, samples: npt.ArrayLike) -> Path:
        """Keep `samples` (what the recorder returned) as the WAV; the spool goes only once that is written."""
        self._file.close()
        write_wav(self.wav, samples, self.sample_rate, subtype="FLOAT")
        self.path.unlink(missing_ok=True)
        _prune(self.wav.parent)
        return self.wav

    def discard(self) -> None:
        """Nothing was recorded: leave nothing behind."""
        self._file.close()
        self.path.unlink(missing_ok=True)
        self.wav.with_suffix(".txt").unlink(missing_ok=True)


def recover(folder: Path | None = None, *, now: float | None = None) -> list[Path]:
    """Turn the spools a crash left behind into kept WAVs; returns them. Spools still growing are left alone."""
    folder = folder or paths.recordings_dir()
    now = time.time() if now is None else now
    recovered = []
    for spool in sorted(folder.glob(f"{PREFIX}*{SPOOL}")):
        with contextlib.suppress(OSError):
            stat = spool.stat()
            if now - stat.st_mtime < ABANDONED_S:
                continue
            raw = spool.read_bytes()
            frames = (len(raw) - RATE.size) // 4
            if frames > 0:
                (rate,) = RATE.unpack_from(raw)
                wav = spool.with_suffix(".wav")
                write_wav(wav, np.frombuffer(raw, "<f4", count=frames, offset=RATE.size), rate, subtype="FLOAT")
                os.utime(wav, (stat.st_atime, stat.st_mtime))  # "made" is when it was recorded, not recovered
                recovered.append(wav)
            else:  # died before the first block: nothing to keep
                spool.with_suffix(".txt").unlink(missing_ok=True)
            spool.unlink()
    if recovered:
        _prune(folder)
    return recovered


def recent(count: int = KEEP, folder: Path | None = None) -> list[KeptRecording]:
    """The newest `count` kept recordings, newest first."""
    return [read(wav) for wav in reversed(_recordings(folder or paths.recordings_dir())[-count:])] if count else []


def latest(folder: Path | None = None) -> KeptRecording | None:
    """The newest kept recording, or None."""
    newest = recent(1, folder)
    return newest[0] if newest else None


def read(wav: Path) -> KeptRecording:
    """A kept recording's WAV with the line beside it ("" when there is none)."""
    text = wav.with_suffix(".txt")
    line = text.read_text("utf-8", errors="replace").strip() if text.is_file() else ""
    return KeptRecording(wav, line, datetime.fromtimestamp(wav.stat().st_mtime))


def _new_name(folder: Path) -> Path:
    micros = time.time_ns() // 1000
    while any(_stamped(folder, micros).with_suffix(s).exists() for s in (".wav", SPOOL)):
        micros += 1  # two recordings in one microsecond (a test's loop): the names still sort by time
    return _stamped(folder, micros)


def _stamped(folder: Path, micros: int) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(micros // 10**6))
    return folder / f"{PREFIX}{stamp}-{micros % 10**6:06d}.wav"


def _prune(folder: Path) -> None:
    for old in _recordings(folder)[:-KEEP]:
        old.with_suffix(".txt").unlink(missing_ok=True)
        old.unlink(missing_ok=True)


def _recordings(folder: Path) -> list[Path]:
    return sorted(folder.glob(f"{PREFIX}*.wav"))  # the names sort by time


__all__ = ["KEEP", "KeptRecording", "Spool", "latest", "read", "recent", "recover"]
