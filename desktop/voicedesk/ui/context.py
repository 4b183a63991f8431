"""What the panels share: settings, the worker, the loaded engine, the library and the take history.

Panels talk to each other only through this object's signals, so each panel can be read (and tested)
on its own. The engine is created and used on the worker thread; the GUI thread only reads its plain
attributes (device, voice names) after `engine_ready`.
"""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import QObject, Signal

from voicedesk.ui.audio_io import AudioIO
from voicedesk.ui.settings import Settings
from voicedesk.ui.worker import Job, JobFactory, Worker

log = logging.getLogger(__name__)


class AppContext(QObject):
    engine_ready = Signal(object)  # the Engine
    engine_failed = Signal(object)  # the exception
    voices_changed = Signal(str)  # name of the voice to select ("" keeps the selection)
    voice_selected = Signal(object)  # a VoiceEntry, or None
    take_added = Signal(object)  # a Take
    message = Signal(str, int)  # status-bar text and how long to show it (ms, 0 = until replaced)
    job_running = Signal(bool)

    def __init__(self, settings: Settings, worker: Worker, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.worker = worker
        self.engine: Any = None
        self.audio = AudioIO(settings)
        self._active: set[Job] = set()

    def set_engine(self, engine: Any) -> None:
        """The engine finished loading: keep it, then tell the panels."""
        self.engine = engine
        self.engine_ready.emit(engine)

    def run_job(self, name: str, factory: JobFactory) -> Job:
        """Submit model work to the worker; the context tracks it to show a busy state."""
        job = self.worker.submit(name, factory)
        self._active.add(job)
        job.finished.connect(self._job_finished)
        self.job_running.emit(True)
        return job

    def _job_finished(self) -> None:
        self._active = {job for job in self._active if not job.done}
        if not self._active:
            self.job_running.emit(False)

    @property
    def busy(self) -> bool:
        return bool(self._active)

    def show_message(self, text: str, timeout_ms: int = 0) -> None:
        self.message.emit(text, timeout_ms)
