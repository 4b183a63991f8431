"""Real file-system faults for tests: a tiny tmpfs that fills up, a read-only mount.

Mounting needs root (true in the dev container and the CI job); elsewhere `small_tmpfs` and
`readonly_folder` return None and the tests fall back to faults injected at the write boundary.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path


def _mount(folder: Path, options: str) -> bool:
    if os.name != "posix" or os.geteuid() != 0:
        return False
    folder.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True, timeout=10
    )
    return result.returncode == 0


@contextlib.contextmanager
def small_tmpfs(folder: Path, size_kib: int = 64) -> Iterator[Path | None]:
    """A tmpfs of `size_kib` mounted at `folder` (None when mounting is not permitted)."""
    mounted = _mount(folder, f"size={size_kib}k,mode=0777")
    try:
        yield folder if mounted else None
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(folder)], capture_output=True, timeout=10)


@contextlib.contextmanager
def readonly_folder(folder: Path, seed: dict[str, bytes] | None = None) -> Iterator[Path | None]:
    """A read-only folder holding `seed` files: a tmpfs remounted read-only as root, else chmod 0555.

    chmod alone does not stop root, hence the mount. None when neither can make it read-only.
    """
    mounted = _mount(folder, "size=1m,mode=0777")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in (seed or {}).items():
            (folder / name).write_bytes(data)
        if mounted:
            ok = subprocess.run(["mount", "-o", "remount,ro", str(folder)], capture_output=True, timeout=10)
            yield folder if ok.returncode == 0 else None
        elif os.name == "posix" and os.geteuid() != 0:
            folder.chmod(0o555)
            yield folder
            folder.chmod(0o755)
        else:
            yield None
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(folder)], capture_output=True, timeout=10)
