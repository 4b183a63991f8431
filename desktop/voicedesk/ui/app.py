"""Starting the window: the QApplication, logging, the crash handler, style and icon.

The window is shown before anything heavy happens; the voice engine (torch, the model weights) loads
afterwards on the worker thread, with "Loading voice engine…" in the status bar.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Sequence
from types import TracebackType

from PySide6.QtCore import QLockFile, QTimer
from PySide6.QtGui import QColor, QIcon, QPalette
from PySide6.QtWidgets import QApplication, QMessageBox

from voicedesk.core import logs, paths

log = logging.getLogger(__name__)

ORGANISATION = "VoiceDesk"
LOCK_NAME = "voicedesk.lock"  # in the user data folder: one window per folder of voices, takes and recordings


def create_application(argv: Sequence[str] | None = None) -> QApplication:
    """The one QApplication, with the app's name, icon and style sheet."""
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(list(argv or sys.argv[:1]))
    app.setApplicationName(paths.APP_NAME)
    app.setOrganizationName(ORGANISATION)
    app.setApplicationDisplayName(paths.APP_NAME)
    app.setDesktopFileName("voicedesk")
    app.setWindowIcon(app_icon())
    app.setStyle("Fusion")
    app.setPalette(dark_palette())
    style = paths.resource_path("style.qss")
    if style.is_file():
        app.setStyleSheet(style.read_text(encoding="utf-8"))
    return app


def dark_palette() -> QPalette:
    """Colours the custom widgets (waveform, meter) read; the style sheet styles the rest."""
    palette = QPalette()
    colours = {
        QPalette.ColorRole.Window: "#17191e",
        QPalette.ColorRole.WindowText: "#e6e8ee",
        QPalette.ColorRole.Base: "#15171b",
        QPalette.ColorRole.AlternateBase: "#1b1d23",
        QPalette.ColorRole.Text: "#e6e8ee",
        QPalette.ColorRole.PlaceholderText: "#6b7280",
        QPalette.ColorRole.Button: "#2b2f38",
        QPalette.ColorRole.ButtonText: "#e6e8ee",
        QPalette.ColorRole.Highlight: "#7c6cf0",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.Link: "#a99bff",  # the accent, light enough to read on the dark panels
        QPalette.ColorRole.LinkVisited: "#a99bff",
        QPalette.ColorRole.ToolTipBase: "#2b2f38",
        QPalette.ColorRole.ToolTipText: "#e6e8ee",
    }
    for role, colour in colours.items():
        palette.setColor(role, QColor(colour))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor("#5d6370"))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor("#5d6370"))
    return palette


def app_icon() -> QIcon:
    icon = QIcon()
    for size in (16, 32, 48, 64, 128, 256):
        png = paths.resource_path("icons", f"voicedesk-{size}.png")
        if png.is_file():
            icon.addFile(str(png))
    return icon


class CrashHandler:
    """Last line of defence for exceptions nobody caught: trace to the log, one dialog to the user.

    Installed as `sys.excepthook` (Qt slots that raise end up there) and `threading.excepthook`.
    Only the first crash shows a dialog, so a failure repeating in a timer cannot bury the screen.
    """

    def __init__(self) -> None:
        self.shown = False
        self.count = 0
        self.dialog: QMessageBox | None = None

    def install(self) -> None:
        sys.excepthook = self.handle
        threading.excepthook = self._handle_thread

    def uninstall(self) -> None:
        sys.excepthook = sys.__excepthook__
        threading.excepthook = threading.__excepthook__

    def _handle_thread(self, args: threading.ExceptHookArgs) -> None:
        if args.exc_value is not None:
            self.handle(args.exc_type, args.exc_value, args.exc_traceback)

    def handle(
        self, kind: type[BaseException], value: BaseException, trace: TracebackType | None
    ) -> None:
        self.count += 1
        log.critical("unexpected error", exc_info=(kind, value, trace))
        if self.shown or threading.current_thread() is not threading.main_thread():
            return
        self.shown = True
        box = QMessageBox(
            QMessageBox.Icon.Critical,
            "VoiceDesk hit a problem",
            f"Something went wrong that VoiceDesk did not expect ({kind.__name__}: {value}).\n\n"
            f"Your voices and takes are safe. If it happens again, restart VoiceDesk and send the log "
            f"file with a bug report:\n{logs.log_file()}",
        )
        box.setObjectName("crashDialog")
        self.dialog = box  # kept: a parentless dialog would vanish with its last Python reference
        box.open()


def _lock_path() -> str:
    return str(paths.data_dir() / LOCK_NAME)


def claim_instance() -> QLockFile | None:
    """This user data folder's lock, held while the window is open; None when another VoiceDesk holds it.

    Two windows on one folder would each list voices and takes the other changes unseen, and each start
    would look at the other's recording in progress as one a crash left behind.
    """
    lock = QLockFile(_lock_path())
    lock.setStaleLockTime(0)  # stale only when its process is gone (a crash), however long it ran
    if lock.tryLock(200):
        return lock
    if lock.error() == QLockFile.LockError.LockFailedError:
        return None
    # The lock could not be written at all (permissions, a full disk): that is no other window; open anyway.
    log.warning("cannot create %s (%s); not guarding against a second window", _lock_path(), lock.error().name)
    return lock


def already_running() -> int:
    """Tell the user another window has this folder (which process, if known); the exit code to return."""
    pid, _host, _app = QLockFile(_lock_path()).getLockInfo()
    which = f" (process {pid})" if pid else ""
    log.info("another VoiceDesk%s holds %s", which, _lock_path())
    box = QMessageBox(
        QMessageBox.Icon.Information,
        "VoiceDesk is already open",
        f"VoiceDesk is already open{which}; switch to its window.\n\n"
        "One window at a time keeps your voices, takes and recordings in step.",
    )
    box.setObjectName("alreadyRunningDialog")
    box.exec()
    return 1


def run(device: str | None = None, started_at: float | None = None) -> int:
    """Open the main window and run the event loop until it closes; returns the exit code."""
    started_at = time.perf_counter() if started_at is None else started_at
    logs.setup_logging()
    app = create_application()
    instance = claim_instance()
    if instance is None:
        return already_running()
    crash = CrashHandler()
    crash.install()

    from voicedesk.ui.main_window import MainWindow

    window = MainWindow(device=device)
    window.show()
    shown_ms = (time.perf_counter() - started_at) * 1000
    log.info("window shown %.0f ms after start (torch loaded: %s)", shown_ms, "torch" in sys.modules)
    # Starting the engine from the event loop lets the window paint first.
    QTimer.singleShot(0, window.start_engine)
    try:
        return int(app.exec())
    finally:
        window.close()  # when the loop ended without the window closing (quit from elsewhere): stop the worker
        crash.uninstall()
        instance.unlock()
