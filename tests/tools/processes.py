"""Kill a writer process at chosen moments, to prove storage survives a crash mid-write."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator


def kill_while_writing(script: str, args: Iterable[str], delays: Iterable[float]) -> Iterator[float]:
    """For each delay: run `script` (which prints "ready" before its write loop), SIGKILL it that many
    seconds after it is ready, and yield the delay so the caller can inspect what was left."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for delay in delays:
        proc = subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE, env=env)
        assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        yield delay
