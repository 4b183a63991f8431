"""The voices panel over the real library: rename, delete, export and import, a damaged file reported,
and a Speak that fails because its voice vanished reaching the user as a sentence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pytestqt.qtbot import QtBot

from ui_support import close_window, open_window
from voicedesk.core.engine import Pitch, stock_voice
from voicedesk.core.engine.config import NEUTRAL_PITCH
from voicedesk.core.library.voicefile import SavedVoice
from voicedesk.core.library.voices import VoiceLibrary

pytestmark = pytest.mark.gui


def save_voice(name: str, pitch: Pitch = NEUTRAL_PITCH, **scores: object) -> None:
    """A saved voice as cloning leaves one (a real stock style, a prompt, scores)."""
    prompt = (0.1 * np.sin(np.arange(24000 * 2) * 2 * np.pi * 180 / 24000)).astype(np.float32)
    VoiceLibrary().save(SavedVoice(name, stock_voice("jf_alpha"), prompt,
                                   scores={"similarity_after": 0.81, "steps": 4, **scores}, pitch=pitch))


def test_a_voice_tooltip_tells_its_similarity_and_its_own_pitch(qtbot: QtBot) -> None:
    save_voice("anna", Pitch(0.87, 0.45))
    save_voice("ben")
    save_voice("cleo", closest_stock_voice="bf_emma", closest_stock_similarity=0.583)
    window = open_window(qtbot, None)
    details = {entry.name: entry.detail for entry in window.voices.entries if entry.saved}
    assert details == {"anna": "cloned · 81% similar to its prompt · pitch ×0.87, intonation range ×0.45",
                       "ben": "cloned · 81% similar to its prompt",
                       "cleo": "cloned · 81% similar to its prompt · closest stock voice bf_emma: 58%"}
    tips = {window.voices.list.item(row).text(): window.voices.list.item(row).toolTip()
            for row in range(window.voices.list.count())}
    assert tips["anna"] == details["anna"]
    close_window(window)


def names(window: Any) -> list[str]:
    return [entry.name for entry in window.voices.entries if entry.saved]


def test_rename_delete_export_and_import(qtbot: QtBot, tmp_path: Path) -> None:
    save_voice("anna")
    save_voice("ben")
    window = open_window(qtbot, None)
    panel = window.voices
    assert names(window) == ["anna", "ben"]
    panel.select("ben")
    assert panel.current is not None and panel.current.name == "ben"
    assert panel.rename_button.isEnabled() and panel.export_button.isEnabled()
    assert "81% similar" in panel.current.detail

    assert panel.rename("ben", "ben-calm")
    assert names(window) == ["anna", "ben-calm"] and panel.current.name == "ben-calm"
    assert not panel.rename("anna", "has space")
    assert "Rename voice: The voice name" in window.statusBar().currentMessage()

    exported = tmp_path / "ben-calm.vdvoice"
    assert panel.export_file("ben-calm", exported) and exported.is_file()
    assert panel.delete("ben-calm")
    assert names(window) == ["anna"]
    assert panel.import_file(exported)
    assert names(window) == ["anna", "ben-calm"] and panel.current.name == "ben-calm"
    assert panel.import_file(exported)  # a second copy gets a free name instead of failing
    assert names(window) == ["anna", "ben-calm", "ben-calm-2"]
    close_window(window)


def test_a_damaged_voice_file_is_reported_and_skipped(qtbot: QtBot) -> None:
    save_voice("anna")
    (VoiceLibrary().root / "broken.vdvoice").write_bytes(b"not a zip at all")
    window = open_window(qtbot, None)
    assert names(window) == ["anna"]
    assert "broken.vdvoice" in window.statusBar().currentMessage()
    close_window(window)


def test_speaking_with_a_voice_deleted_behind_the_window_says_so(qtbot: QtBot, cpu_engine: Any) -> None:
    save_voice("anna")
    window = open_window(qtbot, cpu_engine)
    window.voices.select("anna")
    window.speak.text.setPlainText("Hello there.")
    (VoiceLibrary().root / "anna.vdvoice").unlink()  # another program removed it
    job = window.speak.speak()
    assert job is not None
    qtbot.waitUntil(lambda: job.done, timeout=60_000)
    qtbot.wait(50)
    message = window.statusBar().currentMessage()
    assert "no saved voice named 'anna'" in message and "Traceback" not in message
    assert window.speak.status.text() == "Failed."
    close_window(window)
