"""What a listing of stored items returns: the good ones, plus the damaged ones it skipped."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")

# Temporary files from an interrupted write are only removed once clearly abandoned, so a second
# VoiceDesk process (window and command line at once) never loses a write in progress.
STALE_SECONDS = 300.0


@dataclass(frozen=True)
class Problem:
    """A stored file that could not be read; `message` says what is wrong and what to do."""

    path: Path
    message: str


@dataclass
class Scan(Generic[T]):
    items: list[T] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def remove_stale_temp_files(folder: Path, pattern: str = ".*.part") -> int:
    """Delete leftovers of writes that were killed midway; returns how many were removed."""
    removed = 0
    cutoff = time.time() - STALE_SECONDS
    for leftover in folder.glob(pattern):
        try:
            if leftover.is_file() and leftover.stat().st_mtime < cutoff:
                leftover.unlink()
                removed += 1
        except OSError:
            continue  # another process cleaned it first, or it is locked: try again next start
    return removed
