"""Atomic file writes: the target is either the old file or the complete new one, never a torso.

Data goes to a temporary file in the target's folder (same file system, so `os.replace` is atomic),
is flushed and fsync'd, then renamed over the target. Any failure removes the temporary file and
leaves an existing target untouched.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str], mode: str = "wb") -> Iterator[IO[Any]]:
    """Open a temporary sibling of `path` for writing; on clean exit it replaces `path`."""
    target = Path(path)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, mode) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_dir(target.parent)


def _fsync_dir(folder: Path) -> None:
    # Makes the rename itself durable on POSIX; Windows has no directory handles to sync.
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    with atomic_writer(path, "wb") as handle:
        handle.write(data)


def atomic_write_json(path: str | os.PathLike[str], value: Any) -> None:
    text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)
    atomic_write_bytes(path, (text + "\n").encode("utf-8"))
