"""The main window: the voice library on the left, the flow Prompt → Clone → Speak in the middle,
takes and export on the right, and the device in use in the status bar."""

from __future__ import annotations

import importlib
import logging
from typing import Any

from PySide6.QtCore import QByteArray, Qt, QTimer, QUrl
from PySide6.QtGui import QAction, QCloseEvent, QDesktopServices, QKeySequence
from PySide6.QtWidgets import (
    QLabel,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from voicedesk import __version__
from voicedesk.core import logs, paths
from voicedesk.ui import jobs, settings
from voicedesk.ui.context import AppContext
from voicedesk.ui.messages import user_message
from voicedesk.ui.panels.clone import ClonePanel
from voicedesk.ui.panels.prompt import PromptPanel
from voicedesk.ui.panels.speak import SpeakPanel
from voicedesk.ui.panels.takes import TakesPanel
from voicedesk.ui.panels.voices import VoicesPanel
from voicedesk.ui.settings import Settings
from voicedesk.ui.worker import Worker

log = logging.getLogger(__name__)
RECENT_SHOWN = 10  # kept recordings listed in File › Recent recordings


class MainWindow(QMainWindow):
    def __init__(self, device: str | None = None, settings_store: Settings | None = None) -> None:
        super().__init__()
        self.setObjectName("mainWindow")
        self.setWindowTitle("VoiceDesk")
        self.store = settings_store or Settings()
        self.device_choice = device or self.store.get(settings.COMPUTE_DEVICE)
        self.worker = Worker(self)
        self.context = AppContext(self.store, self.worker, self)
        self._closing = False
        self._engine_job: Any = None

        self.voices = VoicesPanel(self.context)
        self.prompt = PromptPanel(self.context)
        self.clone = ClonePanel(self.context, self.prompt)
        self.speak = SpeakPanel(self.context)
        self.takes = TakesPanel(self.context)
        self._build_layout()
        self._build_menus()
        self._build_status_bar()

        self.context.message.connect(self._show_message)
        self.context.engine_ready.connect(self._engine_ready)
        self.context.engine_failed.connect(self._engine_failed)
        self._restore_geometry()
        self.prompt.restore_kept()  # the last recording, so that a crash or a close before cloning loses none
        # Saved voices are listed as soon as the window is up; stock voices join when the engine is ready.
        QTimer.singleShot(0, self.voices.refresh)

    # --- layout -------------------------------------------------------------------------------------
    def _build_layout(self) -> None:
        flow = QWidget()
        flow.setObjectName("flow")
        column = QVBoxLayout(flow)
        column.setContentsMargins(4, 0, 4, 0)
        column.setSpacing(12)
        column.addWidget(self.prompt, 5)
        column.addWidget(self.clone, 0)
        column.addWidget(self.speak, 4)
        scroll = QScrollArea()
        scroll.setObjectName("flowScroll")
        scroll.setWidget(flow)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setMinimumWidth(560)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.voices)
        self.splitter.addWidget(scroll)
        self.splitter.addWidget(self.takes)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setStretchFactor(2, 0)
        self.splitter.setSizes([230, 690, 320])

        holder = QWidget()
        outer = QVBoxLayout(holder)
        outer.setContentsMargins(12, 12, 12, 6)
        outer.addWidget(self.splitter)
        self.setCentralWidget(holder)
        self.resize(1280, 820)

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        open_prompt = QAction("Import prompt…", self)
        open_prompt.setShortcut(QKeySequence.StandardKey.Open)
        open_prompt.triggered.connect(self.prompt.import_dialog)
        file_menu.addAction(open_prompt)
        self.recent_menu = file_menu.addMenu("Recent recordings")
        self.recent_menu.aboutToShow.connect(self._fill_recent_recordings)
        self._fill_recent_recordings()
        import_voice = QAction("Import voice…", self)
        import_voice.triggered.connect(self.voices.import_dialog)
        file_menu.addAction(import_voice)
        file_menu.addSeparator()
        quit_action = QAction("Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)
        self._build_actions_menu()
        help_menu = self.menuBar().addMenu("&Help")
        open_logs = QAction("Open log folder", self)
        open_logs.triggered.connect(
            lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(paths.log_dir())))
        )
        help_menu.addAction(open_logs)
        about = QAction("About VoiceDesk", self)
        about.triggered.connect(self._about)
        help_menu.addAction(about)

    def _fill_recent_recordings(self) -> None:
        """The newest kept recordings, each with the line it was read from; the rest through the dialog."""
        from voicedesk.core.audio.kept import recent

        menu = self.recent_menu
        menu.clear()
        try:
            kept = recent(RECENT_SHOWN)
        except OSError as exc:  # an unreadable folder: the dialog still says more
            log.info("cannot list kept recordings: %s", exc)
            kept = []
        for recording in kept:
            line = recording.line if len(recording.line) <= 48 else recording.line[:47] + "…"
            action = menu.addAction(f"{recording.made:%d %b %H:%M:%S}  {line or '(no line shown)'}")
            action.triggered.connect(lambda _=False, path=recording.path: self.prompt.open_kept(path))
        if not kept:
            menu.addAction("No recordings yet").setEnabled(False)
        menu.addSeparator()
        menu.addAction("Open a kept recording…").triggered.connect(self.prompt.kept_dialog)

    def _build_actions_menu(self) -> None:
        """The flow's main buttons from the keyboard; a disabled button's shortcut does nothing, as its click."""
        menu = self.menuBar().addMenu("&Actions")
        prompt, clone, speak, takes = self.prompt, self.clone, self.speak, self.takes
        for text, keys, trigger, buttons in (
            ("Record / stop recording", "Ctrl+R", prompt.toggle_recording, (prompt.record_button, prompt.stop_button)),
            ("Play the prompt", "Ctrl+P", prompt.play_button.click, (prompt.play_button,)),
            ("Clone voice", "Ctrl+Shift+Return", clone.clone_button.click, (clone.clone_button,)),
            ("Speak", "Ctrl+Return", speak.speak_button.click, (speak.speak_button,)),
            ("Stop speaking", "Esc", speak.stop_button.click, (speak.stop_button,)),
            ("Export the take…", "Ctrl+E", takes.export_button.click, (takes.export_button,)),
        ):
            shortcut = QKeySequence(keys)
            action = QAction(text, self)
            action.setShortcut(shortcut)
            action.triggered.connect(lambda _=False, trigger=trigger: trigger())
            menu.addAction(action)
            for button in buttons:
                button.setToolTip(f"{button.text().strip('●▶■ ')} ({shortcut.toString(QKeySequence.SequenceFormat.NativeText)})")

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        bar.setObjectName("statusBar")
        self.device_label = QLabel("Device: starting…")
        self.device_label.setObjectName("deviceLabel")
        bar.addPermanentWidget(self.device_label)
        self.status_panel = self._make_status_panel()
        if self.status_panel is not None:
            bar.addPermanentWidget(self.status_panel)

    def _make_status_panel(self) -> QWidget | None:
        """The GPU status panel (driver, CUDA, cuDNN) lives in its own module; embed it when present."""
        try:
            module = importlib.import_module("voicedesk.ui.status_panel")
        except ImportError:
            return None
        factory = getattr(module, "StatusPanel", None)
        if factory is None:
            return None
        try:
            widget: QWidget = factory(self)
        except Exception:  # noqa: BLE001 - a broken status panel must not keep the window from opening
            log.exception("status panel failed to start")
            return None
        return widget

    def _about(self) -> None:
        QMessageBox.about(
            self,
            "About VoiceDesk",
            f"<b>VoiceDesk {__version__}</b><br>Clone a voice locally and speak any line in it."
            f"<br><br>Log file: {logs.log_file()}",
        )

    # --- engine -------------------------------------------------------------------------------------
    def start_engine(self, preloaded: Any = None) -> None:
        """Load the voice engine on the worker thread (or take an already loaded one), and open the
        audio devices; called once the window is on screen."""
        if self._engine_job is not None or self._closing:
            return
        self.prompt.refresh_devices()
        self.takes.refresh_devices()
        self.context.audio.prepare()
        if preloaded is not None:
            self._engine_job = preloaded
            self.context.set_engine(preloaded)
            return
        self._show_message(jobs.LOADING_ENGINE, 0)
        self.device_label.setText("Device: loading…")
        job = self.context.run_job("load engine", lambda: jobs.load_engine(self.device_choice))
        job.result.connect(self.context.set_engine)
        job.progress.connect(lambda text: self._show_message(str(text), 0))
        job.failed.connect(self.context.engine_failed)
        self._engine_job = job

    def _engine_ready(self, engine: Any) -> None:
        self.device_label.setText(f"Device: {describe_device(engine)}")
        self.device_label.setToolTip(str(getattr(engine, "device_reason", "")))
        self._show_message("Voice engine ready.", 5000)
        if getattr(engine, "graphs", None) is not None and not self._closing:
            job = self.worker.submit_background("prepare GPU graphs", lambda: jobs.prepare_graphs(engine))
            job.result.connect(lambda n: log.info("fast GPU speech ready for %d sentence lengths", n))

    def _engine_failed(self, exc: BaseException) -> None:
        self.device_label.setText("Device: none")
        self._show_message(f"The voice engine did not load. {user_message(exc)}", 0)

    def _show_message(self, text: str, timeout_ms: int) -> None:
        self.statusBar().showMessage(text, timeout_ms)

    # --- lifetime -----------------------------------------------------------------------------------
    def _restore_geometry(self) -> None:
        geometry = self.store.get(settings.WINDOW_GEOMETRY)
        if geometry:
            self.restoreGeometry(QByteArray(geometry))
        state = self.store.get(settings.WINDOW_STATE)
        if state:
            self.splitter.restoreState(QByteArray(state))

    def closeEvent(self, event: QCloseEvent) -> None:
        """Cancel running work, stop audio, save settings and wait for the worker to stop."""
        if not self._closing:
            self._closing = True
            self.store.set(settings.WINDOW_GEOMETRY, bytes(self.saveGeometry().data()))
            self.store.set(settings.WINDOW_STATE, bytes(self.splitter.saveState().data()))
            for panel in (self.prompt, self.clone, self.speak, self.takes, self.voices):
                panel.shutdown()
            self.context.audio.close()
            # A job that ends while the worker stops must not reach panels that are going away.
            self.context.blockSignals(True)
            self.store.sync()
            self.hide()
            self.worker.shutdown()
        event.accept()


def describe_device(engine: Any) -> str:
    """"CPU" or the GPU's name, for the status bar."""
    device = str(getattr(engine, "device", "cpu"))
    name = getattr(engine, "device_name", None)
    if device.startswith("cuda"):
        return f"GPU · {name}" if name else "GPU (CUDA)"
    return "CPU"
