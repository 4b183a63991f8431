"""Step 4, takes and export: every generation kept (across restarts); replay, export as .wav, delete."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QWidget,
)

from voicedesk.core.errors import VoiceDeskError
from voicedesk.ui import settings
from voicedesk.ui.context import AppContext
from voicedesk.ui.widgets.card import Card

log = logging.getLogger(__name__)

RATES = (("24 kHz (native)", 24000), ("44.1 kHz", 44100), ("48 kHz (video)", 48000))
DEPTHS = (("16-bit", "PCM_16"), ("24-bit", "PCM_24"), ("32-bit float", "FLOAT"))


class TakesPanel(Card):
    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__("4", "Takes & export", "", parent)
        self.setObjectName("takesPanel")
        self.context = context
        self.store = context.settings

        self.list = QListWidget()
        self.list.setObjectName("takeList")
        self.list.setWordWrap(True)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.currentItemChanged.connect(self._update_buttons)
        self.list.itemDoubleClicked.connect(lambda _item: self.replay())
        self.body.addWidget(self.list, 1)

        buttons = QHBoxLayout()
        self.replay_button = QPushButton("▶ Replay")
        self.replay_button.setObjectName("replayButton")
        self.replay_button.clicked.connect(self.replay)
        self.delete_button = QPushButton("Delete")
        self.delete_button.setObjectName("deleteTakeButton")
        self.delete_button.clicked.connect(self.delete_dialog)
        buttons.addWidget(self.replay_button)
        buttons.addWidget(self.delete_button)
        buttons.addStretch(1)
        self.body.addLayout(buttons)

        form = QFormLayout()
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        self.rate_box = QComboBox()
        self.rate_box.setObjectName("exportRate")
        for label, rate in RATES:
            self.rate_box.addItem(label, rate)
        self.rate_box.setCurrentIndex(max(0, self.rate_box.findData(self.store.get(settings.EXPORT_RATE))))
        self.depth_box = QComboBox()
        self.depth_box.setObjectName("exportDepth")
        for label, subtype in DEPTHS:
            self.depth_box.addItem(label, subtype)
        self.depth_box.setCurrentIndex(max(0, self.depth_box.findData(self.store.get(settings.EXPORT_SUBTYPE))))
        self.output_box = QComboBox()
        self.output_box.setObjectName("outputDevice")
        self.output_box.addItem("System default", "")
        self.output_box.currentIndexChanged.connect(self._output_chosen)
        form.addRow("Play on", self.output_box)
        form.addRow("Sample rate", self.rate_box)
        form.addRow("Bit depth", self.depth_box)
        self.body.addLayout(form)
        self.export_button = QPushButton("Export .wav…")
        self.export_button.setObjectName("exportButton")
        self.export_button.setProperty("primary", True)
        self.export_button.clicked.connect(self.export_dialog)
        self.body.addWidget(self.export_button)

        context.take_added.connect(self._take_added)
        self.refresh()

    def refresh_devices(self) -> None:
        """List the audio outputs (called once PortAudio may start, after the window is shown)."""
        wanted = self.store.get(settings.OUTPUT_DEVICE)
        self.output_box.blockSignals(True)
        self.output_box.clear()
        self.output_box.addItem("System default", "")
        try:
            for name in self.context.audio.output_devices():
                self.output_box.addItem(name, name)
        except VoiceDeskError as exc:
            self.context.show_message(str(exc), 8000)
        self.output_box.setCurrentIndex(max(0, self.output_box.findData(wanted)))
        self.output_box.blockSignals(False)

    def _output_chosen(self) -> None:
        self.context.audio.use_output(str(self.output_box.currentData() or ""))

    def history(self) -> Any:
        from voicedesk.core.library.takes import TakeHistory

        return TakeHistory()

    def refresh(self, select_id: str = "") -> None:
        self.list.clear()
        try:
            scan = self.history().scan()
        except VoiceDeskError as exc:
            self.context.show_message(str(exc), 8000)
            return
        takes = scan.items
        if scan.problems:
            self.context.show_message(scan.problems[0].message, 15000)
        for take in takes:  # newest first
            item = QListWidgetItem(describe_take(take))
            item.setData(Qt.ItemDataRole.UserRole, take)
            item.setToolTip(take.text)
            self.list.addItem(item)
            if take.id == select_id:
                self.list.setCurrentItem(item)
        if not takes:
            hint = QListWidgetItem("Every line you speak is kept here, also after a restart.")
            hint.setFlags(Qt.ItemFlag.NoItemFlags)
            self.list.addItem(hint)
        elif self.list.currentItem() is None:
            self.list.setCurrentRow(0)
        self._update_buttons()

    def _take_added(self, take: Any) -> None:
        self.refresh(take.id)

    @property
    def current(self) -> Any:
        item = self.list.currentItem()
        return item.data(Qt.ItemDataRole.UserRole) if item is not None else None

    def _update_buttons(self, *_: object) -> None:
        has = self.current is not None
        for button in (self.replay_button, self.delete_button, self.export_button):
            button.setEnabled(has)

    def replay(self) -> bool:
        take = self.current
        if take is None:
            return False
        try:
            audio, rate = self.history().audio(take.id)
            self.context.audio.play(audio, rate)
        except VoiceDeskError as exc:
            self.context.show_message(str(exc), 8000)
            return False
        return True

    def delete(self, take_id: str) -> bool:
        try:
            self.history().delete(take_id)
        except VoiceDeskError as exc:
            self.context.show_message(str(exc), 8000)
            return False
        self.refresh()
        return True

    def delete_dialog(self) -> None:
        take = self.current
        if take is not None and QMessageBox.question(self, "Delete take", "Delete this take?") == QMessageBox.StandardButton.Yes:
            self.delete(take.id)

    def export(self, path: Path) -> Path | None:
        """Write the selected take to `path` in the chosen format (atomically)."""
        take = self.current
        if take is None:
            return None
        rate, subtype = int(self.rate_box.currentData()), str(self.depth_box.currentData())
        self.store.set(settings.EXPORT_RATE, rate)
        self.store.set(settings.EXPORT_SUBTYPE, subtype)
        self.store.set(settings.EXPORT_FOLDER, str(path.parent))
        try:
            written: Path = self.history().export(take, path, target_rate=rate, subtype=subtype)
        except VoiceDeskError as exc:
            self.context.show_message(f"Export failed: {exc}", 15000)
            return None
        self.context.show_message(f"Exported {written}", 8000)
        return written

    def export_dialog(self) -> None:
        take = self.current
        if take is None:
            return
        folder = Path(self.store.get(settings.EXPORT_FOLDER) or Path.home())
        target, _ = QFileDialog.getSaveFileName(self, "Export take", str(folder / suggested_file_name(take)), "WAV audio (*.wav)")
        if target:
            path = Path(target)
            self.export(path if path.suffix.lower() == ".wav" else path.with_suffix(".wav"))

    def shutdown(self) -> None:
        pass


def describe_take(take: Any) -> str:
    text = " ".join(take.text.split())
    text = text if len(text) <= 70 else text[:67] + "…"
    return f"“{text}”\n{take.voice} · {take.duration:.1f} s · {take.created[:16].replace('T', ' ')}"


def suggested_file_name(take: Any) -> str:
    words = "-".join("".join(c for c in w if c.isalnum()) for w in take.text.split()[:5]).strip("-")
    return f"{take.voice}-{words or 'take'}.wav"
