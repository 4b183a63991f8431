"""The GPU status panel: one colour-coded row per part of the stack, what to do, a self-test, a copyable report.

Presentation only: the facts and advice come from `voicedesk.core.gpu` (ProbeReport, SelfTestReport);
work runs through the `run_job(name, factory)` callable it is given (the window's worker: each job is
a generator factory and the returned handle emits progress / result / failed). Given one, the panel
probes at once; without one, it shows whatever `show_choice()` hands it and the self-test stays off.

Placed in a main window (its status bar), the panel is compact: a coloured device badge that opens
the full panel in a small window. It then uses the window's `context` (its `run_job` and
`engine_ready`) and starts no work of its own at start-up, so it never delays the engine: the badge
follows the loaded engine, and the probe runs (or is reused from the engine's) when the panel opens.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from voicedesk.core.gpu.device import Device, DeviceChoice, badge_text, peek_cached
from voicedesk.core.gpu.report import State
from voicedesk.core.gpu.selftest import SelfTestReport, format_self_test
from voicedesk.core.gpu.summary import format_report

log = logging.getLogger(__name__)

JobFactory = Callable[[], Generator[Any, None, Any]]
RunJob = Callable[[str, JobFactory], Any]

# The same greens, ambers and reds as the rest of the window's notices.
STATE_COLOURS = {State.OK: "#8fd6b0", State.WARN: "#e8c37d", State.FAIL: "#ff8f87"}


def device_badge_text(choice: DeviceChoice) -> str:
    """Compact text for a status bar: 'GPU · NVIDIA H200' or 'CPU · no NVIDIA driver found'."""
    return badge_text(choice)


def probe_job() -> Generator[str, None, DeviceChoice]:
    yield "Checking the GPU…"
    from voicedesk.core.gpu import choose_device

    return choose_device("auto")


def self_test_job(device: str, engine: Any = None) -> Generator[str, None, SelfTestReport]:
    """The benchmark as a worker job; times `engine` when given (no second copy of the model)."""
    from voicedesk.core.gpu.selftest import self_test
    from voicedesk.core.gpu.workloads import EngineSynthesis, default_workload

    workload = default_workload() if engine is None else EngineSynthesis(lambda _device: engine)
    report: SelfTestReport = yield from self_test(workload, device)
    return report


class StatusPanel(QWidget):
    """Rows for driver, GPU, PyTorch, CUDA, cuDNN, GPU check, precision and device, plus actions."""

    choice_changed = Signal(object)  # the DeviceChoice shown

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        run_job: RunJob | None = None,
        self_test_factory: Callable[[str], JobFactory] | None = None,
        compact: bool | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("statusPanel")
        # The window hands its worker through its context; an explicit `run_job` wins.
        context = getattr(parent, "context", None)
        self._run_job = run_job or getattr(context, "run_job", None)
        engine_ready = getattr(context, "engine_ready", None)
        if engine_ready is not None:
            engine_ready.connect(self.show_engine)
        self._engine: Any = None  # the window's loaded engine, once `engine_ready` says so
        self._self_test_factory = self_test_factory or self._default_self_test
        self.choice: DeviceChoice | None = None
        self.self_test: SelfTestReport | None = None
        self._jobs: list[Any] = []  # keep handles alive until they finish

        self.details = self._build_details()
        self.badge = QPushButton("GPU status")
        self.badge.setObjectName("deviceBadge")
        self.badge.setFlat(True)
        self.badge.setToolTip("Click for the GPU, CUDA and cuDNN report")
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self.compact = isinstance(parent, QMainWindow) if compact is None else compact
        self._dialog: QDialog | None = None
        if self.compact:
            outer.addWidget(self.badge)
            self.badge.clicked.connect(self.open_details)
        else:
            self.badge.hide()
            outer.addWidget(self.details)
        if run_job is not None:
            self.refresh()

    # --- layout -------------------------------------------------------------------------------------
    def _build_details(self) -> QWidget:
        details = QWidget()
        details.setObjectName("statusDetails")
        column = QVBoxLayout(details)
        title = QLabel("GPU status")
        title.setObjectName("cardTitle")
        column.addWidget(title)
        self.grid = QGridLayout()
        self.grid.setHorizontalSpacing(10)
        self.grid.setColumnStretch(2, 1)  # the values take the width; dot and label stay narrow
        column.addLayout(self.grid)
        column.addSpacing(6)
        self.rows: dict[str, tuple[QLabel, QLabel, QLabel]] = {}
        self.advice = QLabel("Checking the GPU…")
        self.advice.setObjectName("statusAdvice")
        self.advice.setWordWrap(True)
        self.advice.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        column.addWidget(self.advice)
        buttons = QHBoxLayout()
        self.self_test_button = QPushButton("Run self-test")
        self.self_test_button.setToolTip("Time the voice model on this device (cuDNN on/off, fp32/fp16 on a GPU)")
        self.self_test_button.clicked.connect(self.run_self_test)
        self.copy_button = QPushButton("Copy report")
        self.copy_button.setToolTip("Copy the whole report, for a bug report")
        self.copy_button.clicked.connect(self.copy_report)
        buttons.addWidget(self.self_test_button)
        buttons.addWidget(self.copy_button)
        buttons.addStretch(1)
        column.addLayout(buttons)
        self.progress = QLabel("")
        self.progress.setObjectName("statusProgress")
        column.addWidget(self.progress)
        self.self_test_view = QPlainTextEdit()
        self.self_test_view.setObjectName("selfTestResult")
        self.self_test_view.setReadOnly(True)
        self.self_test_view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.self_test_view.setVisible(False)
        column.addWidget(self.self_test_view, 1)
        column.addStretch(0)
        self._update_buttons(busy=False)
        return details

    def _row(self, topic: str, label: str) -> tuple[QLabel, QLabel, QLabel]:
        if topic not in self.rows:
            dot, name, value = QLabel("●"), QLabel(label), QLabel()
            name.setObjectName("statusLabel")
            value.setWordWrap(True)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            line = len(self.rows)
            self.grid.addWidget(dot, line, 0)
            self.grid.addWidget(name, line, 1)
            self.grid.addWidget(value, line, 2)
            self.rows[topic] = (dot, name, value)
        return self.rows[topic]

    # --- showing ------------------------------------------------------------------------------------
    def show_choice(self, choice: DeviceChoice) -> None:
        """Show a probe's report and the device chosen from it."""
        self.choice = choice
        report = choice.report
        if report is not None:
            for row in report.rows:
                dot, _name, value = self._row(row.topic, row.label)
                colour = STATE_COLOURS[row.state]
                dot.setStyleSheet(f"color: {colour};")
                value.setText(row.value)
                for widget in (dot, value):
                    widget.setProperty("state", row.state.value)
            problems = [d for d in report.diagnoses if d.state is not State.OK and d.fix]
            lines = [f"{d.message}\nWhat to do: {d.fix}" for d in problems]
            lines += [d.message for d in report.diagnoses_for("device")]
            self.advice.setText("\n\n".join(lines))
            state = report.state
        else:
            self.advice.setText(choice.reason)
            state = State.OK
        self.badge.setText(device_badge_text(choice))
        self.badge.setStyleSheet(f"color: {STATE_COLOURS[state]};")
        self.badge.setProperty("state", state.value)
        self.badge.setToolTip(self.advice.text())
        self._update_buttons(busy=False)
        self.choice_changed.emit(choice)

    def _default_self_test(self, device: str) -> JobFactory:
        engine = self._engine if str(getattr(self._engine, "device", "")) == device else None
        return lambda: self_test_job(device, engine)

    def show_engine(self, engine: Any) -> None:
        """After the engine loaded: its probe's report when there is one, else its device and reason."""
        self._engine = engine
        report = peek_cached()
        device: Device = "cuda" if str(getattr(engine, "device", "cpu")).startswith("cuda") else "cpu"
        reason = str(getattr(engine, "device_reason", ""))
        if report is not None:
            self.show_choice(DeviceChoice(device, reason, report))
        else:
            self.badge.setText(f"{'GPU' if device == 'cuda' else 'CPU'} · {reason}" if reason else device.upper())
        speed_note = getattr(engine, "speed_note", None)
        if callable(speed_note):  # why speech is as fast as it is: precision, CUDA graphs
            dot, _name, value = self._row("speech", "Speech")
            dot.setStyleSheet(f"color: {STATE_COLOURS[State.OK]};")
            value.setText(str(speed_note()))
            value.setToolTip(reason)

    def show_self_test(self, report: SelfTestReport) -> None:
        self.self_test = report
        self.self_test_view.setPlainText(format_self_test(report))
        self.self_test_view.setVisible(True)
        self.progress.setText("Self-test finished.")
        self._update_buttons(busy=False)

    def report_text(self) -> str:
        """The text Copy report puts on the clipboard: the probe's report, then the self-test's."""
        parts = []
        if self.choice is not None and self.choice.report is not None:
            parts.append(format_report(self.choice.report))
        if self.self_test is not None:
            parts.append(format_self_test(self.self_test))
        return "\n\n".join(parts) or "No GPU report yet."

    # --- actions ------------------------------------------------------------------------------------
    def copy_report(self) -> None:
        QGuiApplication.clipboard().setText(self.report_text())
        self.progress.setText("Report copied to the clipboard.")

    def refresh(self) -> None:
        """Probe (once per process; the engine reuses the result) on the worker and show it."""
        self._start("GPU probe", probe_job, self.show_choice)

    def run_self_test(self) -> None:
        if self.choice is None:
            return
        self.self_test_view.setVisible(False)
        self._start("GPU self-test", self._self_test_factory(self.choice.device), self.show_self_test)

    def open_details(self) -> None:
        """In compact mode: the full panel in its own small window (probing first if nothing has)."""
        if self.choice is None and not self._jobs:
            self.refresh()
        if self._dialog is None:
            self._dialog = QDialog(self)
            self._dialog.setWindowTitle("VoiceDesk · GPU status")
            layout = QVBoxLayout(self._dialog)
            layout.addWidget(self.details)
            self.details.show()
        self._dialog.show()
        self._dialog.raise_()

    def _start(self, name: str, factory: JobFactory, on_result: Callable[[Any], None]) -> None:
        if self._run_job is None:
            return
        job = self._run_job(name, factory)
        self._jobs.append(job)
        job.progress.connect(lambda item: self.progress.setText(str(item)))
        job.result.connect(on_result)
        job.failed.connect(self._failed)
        job.finished.connect(lambda: self._finished(job))
        self._update_buttons(busy=True)

    def _failed(self, exc: BaseException) -> None:
        from voicedesk.core.errors import VoiceDeskError

        log.info("status panel job failed: %r", exc)
        text = str(exc) if isinstance(exc, VoiceDeskError) else f"{type(exc).__name__}: {exc}"
        self.progress.setText(f"Failed: {text}")

    def _finished(self, job: Any) -> None:
        self._jobs = [j for j in self._jobs if j is not job]
        self._update_buttons(busy=bool(self._jobs))

    def _update_buttons(self, busy: bool) -> None:
        can_run = self._run_job is not None and self.choice is not None and not busy
        self.self_test_button.setEnabled(can_run)
        if self._run_job is None:
            self.self_test_button.setToolTip("The self-test needs the window's worker.")
