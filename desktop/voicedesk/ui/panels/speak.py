"""Step 3, speak: text, language, speed and seed; playback starts with the first finished sentence."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QToolButton,
    QWidget,
)

from voicedesk.core import paths
from voicedesk.core.errors import Cancelled, VoiceDeskError
from voicedesk.ui import jobs, settings
from voicedesk.ui.context import AppContext
from voicedesk.ui.messages import user_message
from voicedesk.ui.widgets.card import Card
from voicedesk.ui.worker import Job

log = logging.getLogger(__name__)

LANGUAGES = (("English (US)", "en"), ("English (UK)", "en-gb"), ("Japanese", "ja"), ("Chinese", "zh"))


class SpeakPanel(Card):
    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__("3", "Speak", "", parent)
        self.setObjectName("speakPanel")
        self.context = context
        self.store = context.settings
        self.voice: Any = None  # the selected VoiceEntry
        self.job: Job | None = None
        self.chunks_played = 0

        self.voice_label = QLabel("Voice: none selected")
        self.voice_label.setObjectName("speakVoice")
        self.header.addWidget(self.voice_label)

        self.text = QPlainTextEdit()
        self.text.setObjectName("speakText")
        self.text.setPlaceholderText("Type what the voice should say. Long text is spoken sentence by sentence.")
        self.text.setPlainText(self.store.get(settings.LAST_TEXT))
        self.text.setMinimumHeight(90)
        self.body.addWidget(self.text, 1)

        row = QHBoxLayout()
        row.setSpacing(8)
        self.language = QComboBox()
        self.language.setObjectName("language")
        for label, code in LANGUAGES:
            self.language.addItem(label, code)
        self.language.setCurrentIndex(max(0, self.language.findData(self.store.get(settings.LANGUAGE))))
        row.addWidget(self.language)
        self.samples_button = QToolButton()
        self.samples_button.setText("Samples ▾")
        self.samples_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.samples_button.setMenu(self._samples_menu())
        row.addWidget(self.samples_button)
        row.addSpacing(8)
        row.addWidget(QLabel("Speed"))
        self.speed = QDoubleSpinBox()
        self.speed.setObjectName("speed")
        self.speed.setRange(0.5, 2.0)
        self.speed.setSingleStep(0.05)
        self.speed.setDecimals(2)
        self.speed.setSuffix("×")
        self.speed.setValue(self.store.get(settings.SPEED))
        self.speed.setMaximumWidth(90)
        row.addWidget(self.speed)
        row.addWidget(QLabel("Seed"))
        self.seed = QSpinBox()
        self.seed.setObjectName("seed")
        self.seed.setRange(-1, 2**31 - 1)
        self.seed.setSpecialValueText("random")
        self.seed.setToolTip("The same seed, text and voice give the same take")
        self.seed.setValue(self.store.get(settings.SEED))
        self.seed.setMaximumWidth(110)
        row.addWidget(self.seed)
        row.addStretch(1)
        self.stop_button = QPushButton("■ Stop")
        self.stop_button.setObjectName("stopSpeakButton")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop)
        row.addWidget(self.stop_button)
        self.speak_button = QPushButton("Speak")
        self.speak_button.setObjectName("speakButton")
        self.speak_button.setProperty("primary", True)
        self.speak_button.setEnabled(False)
        self.speak_button.clicked.connect(self.speak)
        row.addWidget(self.speak_button)
        self.body.addLayout(row)

        progress_row = QHBoxLayout()
        self.progress = QProgressBar()
        self.progress.setObjectName("speakProgress")
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(6)
        self.progress.setValue(0)
        progress_row.addWidget(self.progress, 1)
        self.status = QLabel("")
        self.status.setObjectName("speakStatus")
        self.status.setMinimumWidth(200)
        progress_row.addWidget(self.status)
        self.body.addLayout(progress_row)

        context.voice_selected.connect(self._voice_selected)
        context.engine_ready.connect(self._update_enabled)
        context.job_running.connect(self._update_enabled)
        self.text.textChanged.connect(self._update_enabled)

    def _samples_menu(self) -> QMenu:
        menu = QMenu(self)
        for line in paths.resource_lines("sample-texts.txt"):
            action = menu.addAction(line if len(line) < 60 else line[:57] + "…")
            action.triggered.connect(lambda _=False, text=line: self.text.setPlainText(text))
        return menu

    def _voice_selected(self, voice: Any) -> None:
        self.voice = voice
        self.voice_label.setText(f"Voice: {voice.name}" if voice is not None else "Voice: none selected")
        if voice is not None and getattr(voice, "language", None):
            index = self.language.findData(voice.language)
            if index >= 0:
                self.language.setCurrentIndex(index)
        self._update_enabled()

    def _update_enabled(self, *_: object) -> None:
        ready = self.context.engine is not None and self.voice is not None and not self.context.busy
        self.speak_button.setEnabled(ready and bool(self.text.toPlainText().strip()))

    # --- speaking -----------------------------------------------------------------------------------
    def request(self) -> jobs.SpeakRequest:
        seed = self.seed.value()
        return jobs.SpeakRequest(
            text=self.text.toPlainText().strip(),
            voice=self.voice.name,
            saved_voice=self.voice.saved,
            language=str(self.language.currentData()),
            speed=round(self.speed.value(), 2),
            seed=None if seed < 0 else seed,
        )

    def speak(self) -> Job | None:
        if self.voice is None or self.context.engine is None:
            return None
        request = self.request()
        self.store.set(settings.LAST_TEXT, request.text)
        self.store.set(settings.LANGUAGE, request.language)
        self.store.set(settings.SPEED, request.speed)
        self.store.set(settings.SEED, self.seed.value())
        if self.context.audio.playing:
            self.context.audio.stop()
        engine = self.context.engine
        job = self.context.run_job("speak", lambda: jobs.speak(engine, request))
        job.progress.connect(self._chunk_ready)
        job.result.connect(self._done)
        job.failed.connect(self._failed)
        job.finished.connect(self._finished)
        self.job = job
        self.chunks_played = 0
        self.progress.setRange(0, 0)  # busy until the first sentence reports how many there are
        self.status.setText("Preparing the first sentence…")
        self.speak_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        return job

    def _chunk_ready(self, chunk: Any) -> None:
        self.progress.setRange(0, chunk.total)
        self.progress.setValue(chunk.index + 1)
        self.status.setText(f"Sentence {chunk.index + 1} of {chunk.total}")
        from voicedesk.core.engine import PAUSE_SECONDS, join_chunks

        # The same trimming, fades and pauses as the saved take, so playback sounds like the export.
        audio = join_chunks([chunk])
        if chunk.index > 0:
            audio = np.concatenate([np.zeros(int(PAUSE_SECONDS * chunk.sample_rate), np.float32), audio])
        try:
            self.context.audio.queue(audio, chunk.sample_rate)
            self.chunks_played += 1
        except VoiceDeskError as exc:  # no speaker: keep synthesizing, the take is still saved
            self.status.setText(str(exc))

    def _done(self, take: Any) -> None:
        self.status.setText(f"Saved to takes ({take.duration:.1f} s)")
        self.context.take_added.emit(take)

    def _failed(self, exc: BaseException) -> None:
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        if isinstance(exc, Cancelled):
            self.status.setText("Stopped.")
            return
        self.status.setText("Failed.")
        self.context.show_message(user_message(exc), 0)

    def _finished(self) -> None:
        self.job = None
        self.stop_button.setEnabled(False)
        self._update_enabled()

    def stop(self) -> None:
        if self.job is not None:
            self.job.cancel()
        self.context.audio.stop()
        self.stop_button.setEnabled(False)

    def shutdown(self) -> None:
        self.store.set(settings.LAST_TEXT, self.text.toPlainText())
        if self.job is not None:
            self.job.cancel()

