"""Step 2, clone: fit a voice to the prompt, with progress, time left, Cancel and a verdict."""

from __future__ import annotations

import html
import logging
from typing import Any

import shiboken6
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QProgressBar, QPushButton, QWidget

from voicedesk.core.errors import Cancelled, VoiceDeskError
from voicedesk.ui import jobs, settings
from voicedesk.ui.context import AppContext
from voicedesk.ui.messages import user_message
from voicedesk.ui.panels.prompt import PromptPanel
from voicedesk.ui.panels.speak import LANGUAGES
from voicedesk.ui.widgets.card import Card
from voicedesk.ui.worker import Job

log = logging.getLogger(__name__)


class ClonePanel(Card):
    def __init__(self, context: AppContext, prompt_panel: PromptPanel, parent: QWidget | None = None) -> None:
        super().__init__("2", "Clone", "", parent)
        self.setObjectName("clonePanel")
        self.context = context
        self.prompt_panel = prompt_panel
        self.job: Job | None = None
        self.steps: int | None = None  # None: the core's default step budget
        saved = context.settings.get(settings.CLONE_STEPS)
        if saved > 0:
            self.steps = saved

        row = QHBoxLayout()
        row.setSpacing(8)
        row.addWidget(QLabel("Name"))
        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("voiceName")
        self.name_edit.setPlaceholderText("my-voice")
        self.name_edit.setMaxLength(60)
        row.addWidget(self.name_edit, 1)
        self.clone_button = QPushButton("Clone voice")
        self.clone_button.setObjectName("cloneButton")
        self.clone_button.setProperty("primary", True)
        self.clone_button.setEnabled(False)
        self.clone_button.clicked.connect(self.start)
        row.addWidget(self.clone_button)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("cancelCloneButton")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        row.addWidget(self.cancel_button)
        self.body.addLayout(row)

        # Optional: with the prompt's words the fit also compares sounds one by one (closer clones).
        said_row = QHBoxLayout()
        said_row.setSpacing(8)
        said_row.addWidget(QLabel("Says"))
        self.transcript_edit = QLineEdit()
        self.transcript_edit.setObjectName("promptTranscript")
        self.transcript_edit.setPlaceholderText(
            "What the recording says, word for word (optional: English is transcribed when left empty)")
        self.transcript_edit.setMaxLength(400)
        self._read_line = ""  # the line the prompt's recording was made reading, put in the field
        said_row.addWidget(self.transcript_edit, 1)
        # The language the clone speaks by default; the words of the recording are read in its accent.
        self.language = QComboBox()
        self.language.setObjectName("cloneLanguage")
        self.language.setToolTip("The language (and accent) the new voice speaks by default")
        for label, code in LANGUAGES:
            self.language.addItem(label, code)
        self.language.setCurrentIndex(max(0, self.language.findData(context.settings.get(settings.CLONE_LANGUAGE))))
        said_row.addWidget(self.language)
        self.body.addLayout(said_row)

        progress_row = QHBoxLayout()
        self.progress = QProgressBar()
        self.progress.setObjectName("cloneProgress")
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(6)
        progress_row.addWidget(self.progress, 1)
        self.eta = QLabel("")
        self.eta.setObjectName("cloneEta")
        self.eta.setMinimumWidth(200)
        progress_row.addWidget(self.eta)
        self.body.addLayout(progress_row)
        self.verdict = QLabel("Import or record a prompt, then clone it into a voice you can use below.")
        self.verdict.setObjectName("cloneVerdict")
        self.verdict.setWordWrap(True)
        # "Use bf_emma", when a stock voice is closer to the prompt than the clone: selects it.
        self.verdict.linkActivated.connect(self.context.voices_changed.emit)
        self.body.addWidget(self.verdict)
        # Before a clone: the stock voices the judge hears closest to the prompt, each a link that selects it.
        self.closest = QLabel("")
        self.closest.setObjectName("closestStock")
        self.closest.setWordWrap(True)
        self.closest.linkActivated.connect(self.context.voices_changed.emit)
        self.body.addWidget(self.closest)
        self._closest_job: Job | None = None

        prompt_panel.prompt_changed.connect(self._update_enabled)
        prompt_panel.prompt_changed.connect(self._find_closest)
        context.engine_ready.connect(self._find_closest)
        # Words typed for one recording are not another's: a new one starts with the field empty, or with the
        # line shown while it was recorded.
        prompt_panel.source_changed.connect(lambda: self.set_read_line(""))
        prompt_panel.line_read.connect(self.set_read_line)
        context.engine_ready.connect(self._update_enabled)
        context.job_running.connect(self._update_enabled)

    def set_read_line(self, line: str) -> None:
        """Put the line the new recording was made reading in "Says" ("": a recording of unknown words)."""
        self._read_line = line
        self.transcript_edit.setText(line)
        self.transcript_edit.setToolTip("The line shown while recording. If the recording says something else, "
                                        "type what it says, or clear this." if line else "")

    @property
    def reads_line(self) -> bool:
        """Whether "Says" holds the line shown while recording, unchanged (words read, not typed)."""
        return bool(self._read_line) and self.transcript_edit.text().strip() == self._read_line.strip()

    def _find_closest(self, *_: object) -> None:
        """Name the stock voices closest to the current prompt, found on the worker between other jobs."""
        if self._closest_job is not None:
            self._closest_job.cancel()
            self._closest_job = None
        self.closest.setText("")
        prompt, engine = self.prompt_panel.prompt, self.context.engine
        if prompt is None or engine is None:
            return
        job = self.context.worker.submit_background("closest stock voices", lambda: jobs.closest_stock_voices(engine, prompt))
        job.result.connect(lambda found: self._show_closest(job, found))
        self._closest_job = job

    def _show_closest(self, job: Job, found: list[tuple[str, float]]) -> None:
        if job is not self._closest_job or not found or not shiboken6.isValid(self.closest):
            return  # a newer prompt's search replaced it, there is no profile, or the window is gone
        from voicedesk.core.clone.report import percent

        voices = " · ".join(f'<a href="{html.escape(name)}">{html.escape(name)}</a> {percent(similarity)}%'
                            for name, similarity in found)
        self.closest.setText(f"Stock voices closest to this prompt: {voices}. A clone is usually closer.")

    def _update_enabled(self, *_: object) -> None:
        ready = self.context.engine is not None and self.prompt_panel.prompt is not None
        self.clone_button.setEnabled(ready and not self.context.busy)

    def start(self) -> Job | None:
        prompt = self.prompt_panel.settled_prompt()
        engine = self.context.engine
        if prompt is None or engine is None:
            return None
        name = self.name_edit.text().strip() or self.name_edit.placeholderText()
        problem = self.name_problem(name)
        if problem:
            self.verdict.setText(problem)
            return None
        transcript, read, language = self.transcript_edit.text(), self.reads_line, str(self.language.currentData())
        self.context.settings.set(settings.CLONE_LANGUAGE, language)
        job = self.context.run_job("clone", lambda: jobs.clone(engine, prompt, name, self.steps, transcript,
                                                               language, read=read))
        job.progress.connect(self._progress)
        job.result.connect(self._done)
        job.failed.connect(self._failed)
        job.finished.connect(self._finished)
        self.job = job
        self.progress.setRange(0, 0)
        self.eta.setText("Starting…")
        self.verdict.setText("")
        self.cancel_button.setEnabled(True)
        self.clone_button.setEnabled(False)
        return job

    def name_problem(self, name: str) -> str:
        """Why `name` cannot be used for a new voice ("" if it can): checked before a minute of fitting."""
        from voicedesk.core.library.names import check_name
        from voicedesk.core.library.voices import VoiceLibrary

        try:
            check_name(name)
        except VoiceDeskError as exc:
            return str(exc)
        engine = self.context.engine
        if name.lower() in {stock.lower() for stock in engine.stock_voices()} or VoiceLibrary().exists(name):
            return f"There is already a voice named “{name}”; choose another name."
        return ""

    def _progress(self, step: Any) -> None:
        self.progress.setRange(0, step.total)
        self.progress.setValue(step.step)
        self.eta.setText(jobs.describe_fit_progress(step))

    def _done(self, outcome: jobs.CloneOutcome) -> None:
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        self.eta.setText(f"Done in {outcome.seconds:.0f} s")
        words = outcome.words
        # A fit that heard only the prompt's start says so, with those words, in its notice.
        heard = f" Heard: “{words.text}”" if (words and words.heard and words.ids and not words.part_notice) else ""
        notice = "".join(f" {n}" for n in (words.notice, words.part_notice) if n) if words else ""
        text = f"Saved as “{outcome.voice.name}”. {outcome.report.summary()}"
        report = outcome.report
        if report.stock_is_closer:  # rich text from here: the link right after the verdict that names the voice
            stock = html.escape(report.stock_voice)
            text = f'{html.escape(text)} <a href="{stock}">Use {stock}</a>.{html.escape(heard + notice)}'
        else:
            text += heard + notice
        self.verdict.setText(text)
        self.context.voices_changed.emit(outcome.voice.name)

    def _failed(self, exc: BaseException) -> None:
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.eta.setText("")
        if isinstance(exc, Cancelled):
            self.verdict.setText("Cancelled; no voice was saved.")
        else:
            self.verdict.setText(user_message(exc))

    def _finished(self) -> None:
        self.job = None
        self.cancel_button.setEnabled(False)
        self._update_enabled()

    def cancel(self) -> None:
        if self.job is not None:
            self.job.cancel()
            self.eta.setText("Cancelling…")
            self.cancel_button.setEnabled(False)

    def shutdown(self) -> None:
        self.cancel()
