"""Shared pieces of the window tests: the real engine on the CPU (loaded once) and a spoken prompt."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from voicedesk.ui import jobs
from voicedesk.ui.main_window import MainWindow
from voicedesk.ui.worker import Job

PROMPT_TEXT = "The weather was lovely, so we walked down to the harbour and watched the boats."


def warmed(engine: Any) -> Any:
    """The session's CPU engine, warmed up as the window's loading job does it."""
    for _ in jobs.warm_up(engine):
        pass
    return engine


def speak_prompt(folder: Path, voice: str = "mb-us1", text: str = PROMPT_TEXT) -> Path:
    """A ~3.5 s prompt spoken by an MBROLA voice (real recorded diphones, so a real timbre)."""
    path = folder / f"{voice}.wav"
    subprocess.run(["espeak-ng", "-v", voice, "-w", str(path), text], check=True, timeout=60)
    return path


def open_window(qtbot: QtBot, engine: Any | None) -> MainWindow:
    """A shown main window; with `engine`, that already-loaded engine is handed to it."""
    window = MainWindow(device="cpu")
    qtbot.addWidget(window)  # closed at teardown if a test fails before closing it
    window.show()
    qtbot.waitExposed(window)
    if engine is not None:
        window.start_engine(engine)
    # The GPU status probe has run and the voice list has been filled from the event loop.
    qtbot.waitUntil(lambda: not window.context.busy and window.voices.list.count() > 0, timeout=30_000)
    return window


def close_window(window: MainWindow) -> float:
    """Close like the user does; returns the seconds it took (the worker is stopped and waited for)."""
    began = time.perf_counter()
    window.close()
    assert not window.worker.running
    return time.perf_counter() - began


def wait_job(qtbot: QtBot, job: Job | None, timeout_s: float) -> None:
    assert job is not None, "the job did not start"
    qtbot.waitUntil(lambda: job.done, timeout=int(timeout_s * 1000))
    qtbot.wait(50)  # let the queued result/finished signals reach the panels
