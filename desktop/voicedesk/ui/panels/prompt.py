"""Step 1, the prompt: record from a microphone or import a file, see it, trim it, hear it.

The intake checks (too short, silent, clipped, …) come from `voicedesk.core.audio.intake`; their
errors and notices are shown as plain sentences beside the waveform.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QWidget,
)

from voicedesk.core import paths
from voicedesk.core.errors import VoiceDeskError
from voicedesk.ui import settings
from voicedesk.ui.context import AppContext
from voicedesk.ui.widgets.card import Card
from voicedesk.ui.widgets.level_meter import LevelMeter
from voicedesk.ui.widgets.waveform import WaveformView

log = logging.getLogger(__name__)

AUDIO_FILTER = "Audio (*.wav *.flac *.ogg *.oga *.opus *.mp3 *.aif *.aiff);;All files (*)"
AUDIO_SUFFIXES = {".wav", ".wave", ".flac", ".ogg", ".oga", ".opus", ".mp3", ".aif", ".aiff"}
METER_INTERVAL_MS = 40


class PromptPanel(Card):
    """Holds the current prompt; emits `prompt_changed(prompt or None)` after every change."""

    prompt_changed = Signal(object)
    source_changed = Signal()  # a new recording or file (not a new trim of the same one)
    line_read = Signal(str)  # after source_changed, for a recording: the line shown to read while it was made

    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__("1", "Prompt", "about 3 s of the voice to clone", parent)
        self.setObjectName("promptPanel")
        self.context = context
        self.store = context.settings
        self.audio = context.audio
        self.lead_in_s = 3  # "3, 2, 1" before recording starts, to take a breath
        self.source_prompt: Any = None  # what intake made of the recording or file (before trimming)
        self.prompt: Any = None  # the trimmed selection, validated again: what cloning uses
        self._source_notes: list[str] = []  # notices about the recording or file itself, kept through every trim
        self._countdown = 0
        self._recording_until = 0.0
        self._lines = paths.resource_lines("reading-lines.txt")
        self._turn = 0  # which passage of the reading lines is shown (reading.passage)
        self._line_recording = ""  # the line shown when the recording started
        self.setAcceptDrops(True)

        # Row 1: recording.
        row = QHBoxLayout()
        row.setSpacing(8)
        self.device_box = QComboBox()
        self.device_box.setObjectName("inputDevice")
        self.device_box.setMinimumContentsLength(8)
        self.device_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.device_box.setToolTip("Microphone")
        row.addWidget(QLabel("Mic"))
        row.addWidget(self.device_box, 1)
        self.length_box = QSpinBox()
        self.length_box.setObjectName("recordSeconds")
        self.length_box.setRange(2, 30)
        self.length_box.setSuffix(" s")
        self.length_box.setValue(self.store.get(settings.RECORD_SECONDS))
        # Measured on the development voices (clone-dev.md, sweep 27): two sentences closed more of the gap on a GPU.
        self.length_box.setToolTip("Recording stops by itself after this long. 4 s (about 3 s of speech) is enough; "
                                   "with a GPU, about 6 s (two sentences) gives a closer voice. On the CPU the fit "
                                   "uses about the first 4 s.")
        self.length_box.setMaximumWidth(64)
        row.addWidget(self.length_box)
        self.record_button = QPushButton("● Record")
        self.record_button.setObjectName("recordButton")
        self.record_button.clicked.connect(self.start_recording)
        row.addWidget(self.record_button)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("stopRecordButton")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop_recording)
        row.addWidget(self.stop_button)
        self.meter = LevelMeter()
        row.addWidget(self.meter, 1)
        self.countdown_label = QLabel("")
        self.countdown_label.setObjectName("countdown")
        self.countdown_label.setMinimumWidth(40)
        row.addWidget(self.countdown_label)
        self.body.addLayout(row)

        # Row 2: a line to read aloud, sized to the recording: its words become the recording's ("Says" in step 2).
        read_row = QHBoxLayout()
        read_row.setSpacing(8)
        read_row.addWidget(QLabel("Read"))
        self.line_label = QLabel("")
        self.line_label.setObjectName("readingLine")
        self.line_label.setWordWrap(True)
        self.line_label.setToolTip("Read this aloud when recording starts: a recording whose words are known "
                                   "clones closer. Say anything else if you like, then type it in “Says”.")
        read_row.addWidget(self.line_label, 1)
        self.another_button = QPushButton("Another line")
        self.another_button.setObjectName("anotherLineButton")
        self.another_button.clicked.connect(self.another_line)
        read_row.addWidget(self.another_button)
        self.body.addLayout(read_row)
        self.length_box.valueChanged.connect(self._show_line)
        context.engine_ready.connect(self._show_line)
        self._show_line()

        # Row 3: the waveform, with the intake's messages beside it.
        view_row = QHBoxLayout()
        view_row.setSpacing(10)
        self.waveform = WaveformView()
        self.waveform.selection_changed.connect(self._selection_moved)
        view_row.addWidget(self.waveform, 3)
        self.notices = QLabel("Record with the button above, or import a clip: drop a WAV, FLAC, OGG or MP3 here.")
        self.notices.setObjectName("promptNotices")
        self.notices.setWordWrap(True)
        self.notices.setMinimumWidth(150)
        self.notices.setMaximumWidth(240)
        view_row.addWidget(self.notices, 1)
        self.body.addLayout(view_row, 1)

        # Row 4: import, play, what is selected.
        actions = QHBoxLayout()
        self.import_button = QPushButton("Import file…")
        self.import_button.setObjectName("importPromptButton")
        self.import_button.clicked.connect(self.import_dialog)
        actions.addWidget(self.import_button)
        self.play_button = QPushButton("▶ Play")
        self.play_button.setObjectName("playPromptButton")
        self.play_button.setEnabled(False)
        self.play_button.clicked.connect(self.play)
        actions.addWidget(self.play_button)
        self.selection_label = QLabel("")
        self.selection_label.setObjectName("selectionLabel")
        actions.addWidget(self.selection_label, 1)
        self.body.addLayout(actions)

        self._ticker = QTimer(self)
        self._ticker.setInterval(METER_INTERVAL_MS)
        self._ticker.timeout.connect(self._tick)
        self._countdown_timer = QTimer(self)
        self._countdown_timer.setInterval(1000)
        self._countdown_timer.timeout.connect(self._count_down)
        self._retrim = QTimer(self)
        self._retrim.setSingleShot(True)
        self._retrim.setInterval(250)
        self._retrim.timeout.connect(self._apply_trim)
        self.device_box.addItem("System default", "")

    # --- devices ------------------------------------------------------------------------------------
    def refresh_devices(self) -> None:
        """List the microphones (PortAudio starts here, after the window is on screen)."""
        wanted = self.store.get(settings.INPUT_DEVICE)
        self.device_box.clear()
        self.device_box.addItem("System default", "")
        try:
            names = self.audio.input_devices()
        except VoiceDeskError as exc:
            names = []
            self.notices.setText(str(exc))
        for name in names:
            self.device_box.addItem(name, name)
        index = self.device_box.findData(wanted)
        self.device_box.setCurrentIndex(max(index, 0))

    def _device(self) -> str:
        return str(self.device_box.currentData() or "")

    # --- the line to read ---------------------------------------------------------------------------
    def _reading_seconds(self) -> float:
        """How long the line to read may take: the recording's length, but on the CPU no more than the fit takes
        the words of (`words.words_within`): a line read is placed in time only as a whole."""
        from voicedesk.core.clone.reading import START_DELAY_S
        from voicedesk.core.clone.words import words_within

        engine = self.context.engine
        within = words_within(str(engine.device)) if engine is not None else 0.0
        return min(self.length_box.value(), within + START_DELAY_S) if within else self.length_box.value()

    def _show_line(self, *_: object) -> None:
        from voicedesk.core.clone.reading import passage

        self.line_label.setText(passage(self._lines, self._reading_seconds(), self._turn))
        self.another_button.setEnabled(len(self._lines) > 1)

    def another_line(self) -> None:
        from voicedesk.core.clone.reading import next_turn

        self._turn = next_turn(self._lines, self._reading_seconds(), self._turn)
        self._show_line()

    # --- recording ----------------------------------------------------------------------------------
    def start_recording(self) -> None:
        self.store.set(settings.INPUT_DEVICE, self._device())
        self.store.set(settings.RECORD_SECONDS, self.length_box.value())
        self._line_recording = self.line_label.text()
        self.record_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self._countdown = self.lead_in_s
        if self._countdown > 0:
            self.countdown_label.setText(f"in {self._countdown}…")
            self._countdown_timer.start()
        else:
            self._begin_capture()

    def _count_down(self) -> None:
        self._countdown -= 1
        if self._countdown > 0:
            self.countdown_label.setText(f"in {self._countdown}…")
            return
        self._countdown_timer.stop()
        self._begin_capture()

    def _begin_capture(self) -> None:
        try:
            self.audio.start_recording(self._device(), self.length_box.value(), self._line_recording)
        except VoiceDeskError as exc:
            self._recording_ended()
            self._show_error(str(exc))
            return
        self._recording_until = self.audio.clock() + self.length_box.value()
        self.countdown_label.setText(f"{self.length_box.value():.1f} s")
        self.context.show_message("Recording…", 0)
        self._ticker.start()

    def _tick(self) -> None:
        self.meter.set_peak(self.audio.recording_level())
        left = self._recording_until - self.audio.clock()
        self.countdown_label.setText(f"{max(left, 0):.1f} s")
        if self.audio.recording_ended or left < -1.0:  # the recorder stops itself at the length
            self.stop_recording()

    @property
    def recording(self) -> bool:
        return self.audio.recording

    def toggle_recording(self) -> None:
        """Record, or stop the recording (or its countdown) under way: one key for both."""
        if self.stop_button.isEnabled():
            self.stop_button.click()
        else:
            self.record_button.click()

    def stop_recording(self) -> None:
        if self._countdown_timer.isActive():  # stopped during the lead-in: nothing was recorded
            self._countdown_timer.stop()
            self._recording_ended()
            return
        if not self.audio.recording:
            return
        samples, rate, problem = self.audio.stop_recording()
        self._recording_ended()
        self.context.show_message("", 1)
        if samples.size == 0:
            self._show_error(problem or "Nothing was recorded; check the microphone and try again.")
            return
        line = self._line_recording
        if self.set_source((samples, rate), extra_notice=problem) and line:
            self._line_was_read(line)

    def _line_was_read(self, line: str) -> None:
        # Words fitted to a line that was not said blur the voice (clone-dev.md, sweep 30): say where they went.
        self._source_notes.append("Its words: the line shown, now in “Says” (step 2). "
                                  "Change them there if you said something else.")
        self._set_prompt(self.source_prompt, [*self._source_notes, *self.source_prompt.notices])
        self.line_read.emit(line)

    def restore_kept(self) -> None:
        """Open the newest kept recording, as after a crash or a window closed before cloning; nothing when
        there is none or it cannot be used."""
        from voicedesk.core.audio.intake import load_prompt
        from voicedesk.core.audio.kept import latest, recover

        try:
            recovered = recover()  # a recording a crash interrupted becomes a kept one
            kept = latest()
            if kept is None:
                return
            prompt = load_prompt(kept.path)  # here, so that one intake refuses is skipped without a word
        except (OSError, VoiceDeskError) as exc:
            log.info("no kept recording restored: %s", exc)
            return
        what = "Your last recording (cut short when VoiceDesk stopped)" if kept.path in recovered else "Your last recording"
        self._show_source(prompt, self._kept_note(kept, what))
        self._after_kept(kept)

    def kept_dialog(self) -> None:
        from voicedesk.core.audio.kept import PREFIX
        from voicedesk.core.paths import recordings_dir

        name, _ = QFileDialog.getOpenFileName(self, "Open a kept recording", str(recordings_dir()),
                                              f"Recordings ({PREFIX}*.wav)")
        if name:
            self.open_kept(Path(name))

    def open_kept(self, path: Path, what: str = "A recording") -> bool:
        """Open a kept recording; the line it was read from goes back into "Says"."""
        from voicedesk.core.audio.kept import read

        try:
            kept = read(path)
        except OSError as exc:
            self._show_error(f"The recording cannot be opened: {exc}")
            return False
        opened = self.set_source(kept.path, extra_notice=self._kept_note(kept, what))
        if opened:
            self._after_kept(kept)
        return opened

    @staticmethod
    def _kept_note(kept: Any, what: str) -> str:
        return f"{what} of {kept.made:%d %b %H:%M}, kept on disk. Record again or import a clip to use another."

    def _after_kept(self, kept: Any) -> None:
        if kept.line:
            self._line_was_read(kept.line)

    def _recording_ended(self) -> None:
        self._ticker.stop()
        self.meter.set_peak(0.0)
        self.countdown_label.setText("")
        self.record_button.setEnabled(True)
        self.stop_button.setEnabled(False)

    # --- importing ----------------------------------------------------------------------------------
    def import_dialog(self) -> None:
        folder = self.store.get(settings.IMPORT_FOLDER)
        name, _ = QFileDialog.getOpenFileName(self, "Import a voice prompt", folder, AUDIO_FILTER)
        if name:
            self.import_file(Path(name))

    def import_file(self, path: Path) -> bool:
        self.store.set(settings.IMPORT_FOLDER, str(path.parent))
        return self.set_source(path)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if _dropped_audio(event.mimeData()) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        path = _dropped_audio(event.mimeData())
        if path is not None:
            event.acceptProposedAction()
            self.import_file(path)

    # --- the prompt ---------------------------------------------------------------------------------
    def set_source(self, source: Any, extra_notice: str = "") -> bool:
        """Run intake on a file path or `(samples, rate)`; show the result or the reason it failed."""
        from voicedesk.core.audio.intake import load_prompt

        try:
            prompt = load_prompt(source)
        except VoiceDeskError as exc:
            self._show_error(" ".join(filter(None, [extra_notice, str(exc)])))
            return False
        self._show_source(prompt, extra_notice)
        return True

    def _show_source(self, prompt: Any, extra_notice: str) -> None:
        """Show a prompt that passed intake, whole, as the one to clone."""
        self.source_prompt = prompt
        self._source_notes = [extra_notice]
        self.waveform.set_audio(prompt.audio, prompt.sample_rate)  # emits selection_changed
        self._retrim.stop()
        self.source_changed.emit()
        self._set_prompt(prompt, [*self._source_notes, *prompt.notices])

    def _selection_moved(self, start: float, end: float) -> None:
        self.selection_label.setText(f"Using {start:.1f}–{end:.1f} s ({end - start:.1f} s)" if end > start else "")
        if self.source_prompt is not None:
            self._retrim.start()  # re-check once the handle rests, not on every mouse move

    def settled_prompt(self) -> Any:
        """The prompt as the selection stands now: a trim still waiting for the handles to rest is applied first
        (Clone clicked right after moving a handle must clone the part selected, not the one before)."""
        if self._retrim.isActive():
            self._retrim.stop()
            self._apply_trim()
        return self.prompt

    def _apply_trim(self) -> None:
        from voicedesk.core.audio.intake import load_prompt

        source = self.source_prompt
        start, end = self.waveform.selection()
        if source is None:
            return
        if start <= 0.0 and end >= source.duration:
            self._set_prompt(source, [*self._source_notes, *source.notices])
            return
        part = source.audio[int(start * source.sample_rate) : int(end * source.sample_rate)]
        try:
            trimmed = load_prompt((part, source.sample_rate))
        except VoiceDeskError as exc:
            self._show_error(f"The selected part cannot be used: {exc}")
            self.prompt = None
            self.prompt_changed.emit(None)
            return
        self._set_prompt(trimmed, [*self._source_notes, *trimmed.notices])

    def _set_prompt(self, prompt: Any, notices: list[str]) -> None:
        self.prompt = prompt
        lines = [n for n in notices if n]
        summary = f"✓ {prompt.speech_seconds:.1f} s of speech, ready to clone."
        self.notices.setText("\n\n".join([summary, *lines]))
        self.notices.setProperty("state", "notice" if lines else "ok")
        self._restyle(self.notices)
        self.play_button.setEnabled(True)
        self.prompt_changed.emit(prompt)

    def _show_error(self, text: str) -> None:
        self.notices.setText(text)
        self.notices.setProperty("state", "error")
        self._restyle(self.notices)
        if self.source_prompt is None:
            self.prompt_changed.emit(None)

    @staticmethod
    def _restyle(widget: QWidget) -> None:
        widget.style().unpolish(widget)
        widget.style().polish(widget)

    def play(self) -> None:
        if self.prompt is None:
            return
        try:
            self.audio.play(self.prompt.audio, self.prompt.sample_rate)
        except VoiceDeskError as exc:
            self.context.show_message(str(exc), 8000)

    def shutdown(self) -> None:
        self._ticker.stop()
        self._countdown_timer.stop()


def _dropped_audio(mime: Any) -> Path | None:
    for url in mime.urls() if mime.hasUrls() else []:
        if url.isLocalFile():
            path = Path(url.toLocalFile())
            if path.suffix.lower() in AUDIO_SUFFIXES:
                return path
    return None

