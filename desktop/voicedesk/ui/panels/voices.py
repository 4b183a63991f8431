"""The voice library: stock voices and the user's saved ones; rename, delete, import and export."""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFileDialog,
    QGridLayout,
    QInputDialog,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QWidget,
)

from voicedesk.core.clone.report import percent
from voicedesk.core.errors import VoiceDeskError
from voicedesk.core.library.voicefile import SavedVoice
from voicedesk.ui import settings
from voicedesk.ui.context import AppContext
from voicedesk.ui.widgets.card import Card

log = logging.getLogger(__name__)

VOICE_FILTER = "VoiceDesk voice (*.vdvoice)"


@dataclass(frozen=True)
class VoiceEntry:
    name: str
    saved: bool  # False for the stock voices that ship with the engine
    language: str = ""
    detail: str = ""


class VoicesPanel(Card):
    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__("", "Voices", "", parent)
        self.setObjectName("voicesPanel")
        self.context = context
        self.store = context.settings
        self.entries: list[VoiceEntry] = []

        self.list = QListWidget()
        self.list.setObjectName("voiceList")
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setWordWrap(True)
        self.list.currentItemChanged.connect(self._current_changed)
        self.body.addWidget(self.list, 1)

        buttons = QGridLayout()
        buttons.setSpacing(6)
        self.rename_button = QPushButton("Rename…")
        self.rename_button.clicked.connect(self.rename_dialog)
        self.delete_button = QPushButton("Delete")
        self.delete_button.clicked.connect(self.delete_dialog)
        self.import_button = QPushButton("Import…")
        self.import_button.clicked.connect(self.import_dialog)
        self.export_button = QPushButton("Export…")
        self.export_button.clicked.connect(self.export_dialog)
        buttons.addWidget(self.rename_button, 0, 0)
        buttons.addWidget(self.delete_button, 0, 1)
        buttons.addWidget(self.import_button, 1, 0)
        buttons.addWidget(self.export_button, 1, 1)
        self.body.addLayout(buttons)
        self._update_buttons()

        # Bound methods, not lambdas: Qt drops these connections when the panel is destroyed.
        context.engine_ready.connect(self._engine_ready)
        context.voices_changed.connect(self.refresh)

    # --- listing ------------------------------------------------------------------------------------
    def library(self) -> Any:
        from voicedesk.core.engine import stock_voice_names
        from voicedesk.core.library.voices import VoiceLibrary

        return VoiceLibrary(reserved_names=stock_voice_names())

    def _engine_ready(self, _engine: object) -> None:
        self.refresh()

    def refresh(self, select: str = "") -> None:
        """Re-read stock and saved voices; select `select`, else the current or last-used voice."""
        if not shiboken6.isValid(self.list):
            return  # a queued refresh reached a window that is being destroyed
        current = select or (self.current.name if self.current else "") or self.store.get(settings.LAST_VOICE)
        from voicedesk.core.engine.voices import (
            FIT_BASIS,
            describe_stock_voice,
            stock_voice_accent,
            stock_voice_language,
        )

        saved: list[VoiceEntry] = []
        try:
            scan = self.library().scan()
        except VoiceDeskError as exc:
            self.context.show_message(str(exc), 8000)
        else:
            saved = [VoiceEntry(v.name, True, v.language, _detail(v)) for v in scan.items]
            if scan.problems:  # damaged files are skipped, and the user is told which
                self.context.show_message(scan.problems[0].message, 15000)
        stock: list[VoiceEntry] = []
        engine = self.context.engine
        if engine is not None:
            stock = [VoiceEntry(name, False, stock_voice_language(name), describe_stock_voice(name))
                     for name in engine.stock_voices()]
        self.entries = saved + stock
        self.list.blockSignals(True)
        self.list.clear()
        self._add_section("Your voices")
        for entry in saved:
            self._add_entry(entry)
        if not saved:
            self._add_section("Cloned voices appear here.", hint=True)
        self._add_section("Stock voices")
        for accent, group in itertools.groupby(stock, key=lambda entry: stock_voice_accent(entry.name)):
            self._add_section(accent, hint=True)
            for entry in group:
                self._add_entry(entry)
        if stock and len(stock) <= len(FIT_BASIS):  # the English voices' pack is missing: say how to add it
            self._add_section("English stock voices: run `voicedesk voices add-stock` once.", hint=True)
        self.list.blockSignals(False)
        self.select(current)

    def _add_section(self, title: str, hint: bool = False) -> None:
        item = QListWidgetItem(title)
        item.setFlags(Qt.ItemFlag.NoItemFlags)
        font = item.font()
        font.setBold(not hint)
        font.setItalic(hint)
        item.setFont(font)
        self.list.addItem(item)

    def _add_entry(self, entry: VoiceEntry) -> None:
        from voicedesk.core.engine.voices import stock_voice_sex

        sex = "" if entry.saved else stock_voice_sex(entry.name)
        item = QListWidgetItem(f"{entry.name}  ·  {sex}" if sex else entry.name)
        item.setToolTip(entry.detail)
        item.setData(Qt.ItemDataRole.UserRole, entry)
        self.list.addItem(item)

    def select(self, name: str) -> None:
        from voicedesk.core.engine.voices import DEFAULT_VOICE

        entries = [self.list.item(row).data(Qt.ItemDataRole.UserRole) for row in range(self.list.count())]
        rows = [row for row, entry in enumerate(entries) if entry is not None]  # section headers are None
        by_name = {entries[row].name: row for row in rows}
        # The voice asked for, else the stock voice a first start speaks with, else the first voice.
        row = by_name.get(name, by_name.get(DEFAULT_VOICE, rows[0] if rows else None))
        if row is None:
            self.context.voice_selected.emit(None)
        else:
            self.list.setCurrentRow(row)

    @property
    def current(self) -> VoiceEntry | None:
        item = self.list.currentItem()
        entry: VoiceEntry | None = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        return entry

    def _current_changed(self, *_: object) -> None:
        entry = self.current
        if entry is not None:
            self.store.set(settings.LAST_VOICE, entry.name)
        self._update_buttons()
        self.context.voice_selected.emit(entry)

    def _update_buttons(self) -> None:
        saved = self.current is not None and self.current.saved
        self.rename_button.setEnabled(saved)
        self.delete_button.setEnabled(saved)
        self.export_button.setEnabled(saved)

    # --- actions ------------------------------------------------------------------------------------
    def _attempt(self, what: str, action: Any) -> bool:
        """Run a library action; a refusal is shown in the status bar (no modal box to dismiss)."""
        try:
            action()
        except VoiceDeskError as exc:
            self.context.show_message(f"{what}: {exc}", 15000)
            return False
        return True

    def rename(self, old: str, new: str) -> bool:
        ok = self._attempt("Rename voice", lambda: self.library().rename(old, new))
        if ok:
            self.refresh(new)
        return ok

    def rename_dialog(self) -> None:
        entry = self.current
        if entry is None or not entry.saved:
            return
        new, ok = QInputDialog.getText(self, "Rename voice", "New name:", text=entry.name)
        if ok and new.strip() and new.strip() != entry.name:
            self.rename(entry.name, new.strip())

    def delete(self, name: str) -> bool:
        ok = self._attempt("Delete voice", lambda: self.library().delete(name))
        if ok:
            self.refresh()
        return ok

    def delete_dialog(self) -> None:
        entry = self.current
        if entry is None or not entry.saved:
            return
        answer = QMessageBox.question(self, "Delete voice", f"Delete the voice “{entry.name}”? This cannot be undone.")
        if answer == QMessageBox.StandardButton.Yes:
            self.delete(entry.name)

    def import_file(self, path: Path) -> bool:
        imported: list[Any] = []
        ok = self._attempt(
            "Import voice", lambda: imported.append(self.library().import_file(path, rename_on_clash=True))
        )
        if ok:
            self.refresh(imported[0].name)
        return ok

    def import_dialog(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, "Import a voice", self.store.get(settings.EXPORT_FOLDER), VOICE_FILTER)
        if name:
            self.import_file(Path(name))

    def export_file(self, name: str, path: Path) -> bool:
        return self._attempt("Export voice", lambda: self.library().export(name, path))

    def export_dialog(self) -> None:
        entry = self.current
        if entry is None or not entry.saved:
            return
        folder = Path(self.store.get(settings.EXPORT_FOLDER) or Path.home())
        target, _ = QFileDialog.getSaveFileName(self, "Export voice", str(folder / f"{entry.name}.vdvoice"), VOICE_FILTER)
        if target:
            self.store.set(settings.EXPORT_FOLDER, str(Path(target).parent))
            self.export_file(entry.name, Path(target))

    def shutdown(self) -> None:
        pass


def _detail(voice: SavedVoice) -> str:
    """The tooltip of a saved voice: how similar it came out (and the closest stock voice), and its own pitch."""
    after = voice.scores.get("similarity_after")
    stock, stock_similarity = voice.scores.get("closest_stock_voice"), voice.scores.get("closest_stock_similarity")
    parts = ["cloned", f"{percent(after)}% similar to its prompt" if isinstance(after, float) else "",
             f"closest stock voice {stock}: {percent(stock_similarity)}%" if isinstance(stock_similarity, float) else "",
             voice.pitch.describe()]
    return " · ".join(part for part in parts if part)
