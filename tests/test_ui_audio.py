"""The window's recording and playback against a real PulseAudio server (tests/audio_server.py):
speech fed into the virtual microphone is recorded by the Record button; what the window plays is
captured from the speaker's monitor and compared with what was played."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf
from pytestqt.qtbot import QtBot

from audio_server import PulseServer
from tools.make_bad_corpus import speech
from ui_support import close_window, open_window, warmed
from voicedesk.core import paths
from voicedesk.core.audio import devices, kept
from voicedesk.core.library.takes import TakeHistory

pytestmark = [pytest.mark.gui, pytest.mark.audio]
RATE = 48000


def best_correlation(captured: np.ndarray, reference: np.ndarray) -> float:
    """The largest normalised correlation of `reference` anywhere in `captured`."""
    corr = np.correlate(captured, reference, mode="valid")
    at = int(np.argmax(np.abs(corr)))
    window = captured[at : at + reference.size]
    return float(abs(corr[at]) / (np.linalg.norm(window) * np.linalg.norm(reference) + 1e-12))


def spooled_bytes() -> int:
    """The size of the recording being made, on disk (0 when there is none)."""
    for spool in paths.recordings_dir().glob("*.spool"):
        try:
            return spool.stat().st_size
        except FileNotFoundError:  # finished between the listing and the look
            return 0
    return 0


def test_record_button_records_the_microphone_and_stops_by_itself(qtbot: QtBot, pulse_server: PulseServer,
                                                                   tmp_path: Path) -> None:
    window = open_window(qtbot, None)
    panel = window.prompt
    panel.refresh_devices()
    assert panel.device_box.count() > 1  # "System default" plus the server's devices
    panel.lead_in_s = 1
    panel.length_box.setValue(6)
    two_sentences = panel.line_label.text()
    panel.length_box.setValue(3)  # the line to read follows the recording's length
    shown = panel.line_label.text()
    assert shown and len(shown) < len(two_sentences)
    panel.another_button.click()
    assert panel.line_label.text() not in ("", shown)
    shown = panel.line_label.text()
    feed = pulse_server.play_into("micfeed", np.concatenate([np.zeros(RATE // 2, np.float32), speech(RATE)] * 2))
    peaks: list[float] = []
    panel.meter.update = lambda: peaks.append(panel.meter.fraction)  # type: ignore[method-assign]
    qtbot.mouseClick(panel.record_button, qtbot_left())
    assert panel.countdown_label.text() == "in 1…" and not panel.record_button.isEnabled()
    began = time.monotonic()
    qtbot.waitUntil(lambda: panel.recording, timeout=5000)
    half_second = kept.RATE.size + 4 * RATE // 2  # of float32 samples
    qtbot.waitUntil(lambda: spooled_bytes() > half_second, timeout=5000)  # on disk while being made: no crash loses it
    qtbot.waitUntil(lambda: not panel.recording, timeout=15_000)  # ends by itself after 3 s
    took = time.monotonic() - began
    feed.kill()
    assert 3.0 <= took < 8.0
    assert max(peaks) > 0.5, "the level meter never moved"
    assert panel.prompt is not None, panel.notices.text()
    assert panel.notices.text().startswith("✓")
    assert panel.source_prompt.source == "the recording"
    assert 1.5 < panel.waveform.duration <= 3.0
    assert panel.record_button.isEnabled() and window.statusBar().currentMessage() == ""
    assert window.clone.transcript_edit.text() == shown  # the line read is the recording's words
    assert "the line shown" in panel.notices.text()
    kept_one = kept.latest()  # a WAV already, with its line; the spool is gone
    assert kept_one is not None and kept_one.line == shown
    assert not list(paths.recordings_dir().glob("*.spool"))
    assert abs(sf.info(kept_one.path).duration - panel.waveform.duration) < 0.5
    panel.waveform.set_selection(0.0, panel.waveform.duration - 0.01)  # a trim re-checks the part kept ...
    qtbot.waitUntil(lambda: panel.prompt is not panel.source_prompt, timeout=5000)
    assert panel.prompt is not None and "the line shown" in panel.notices.text()  # ... and keeps what was said of it
    assert panel.import_file(panel_clip(tmp_path, panel))  # a file's words are not known
    assert window.clone.transcript_edit.text() == ""
    close_window(window)


def test_stop_during_the_countdown_records_nothing(qtbot: QtBot, pulse_server: PulseServer) -> None:
    window = open_window(qtbot, None)
    panel = window.prompt
    panel.lead_in_s = 3
    panel.start_recording()
    panel.stop_recording()
    assert not panel.recording and panel.record_button.isEnabled() and panel.prompt is None
    close_window(window)


def test_replaying_a_take_reaches_the_speaker(qtbot: QtBot, pulse_server: PulseServer) -> None:
    rng = np.random.default_rng(11)
    noise = (rng.standard_normal(24000) * 0.2).astype(np.float32)  # correlates sharply
    TakeHistory().add("A noise burst.", "jf_alpha", noise, 24000)
    window = open_window(qtbot, None)
    capture = pulse_server.capture("speaker.monitor")
    qtbot.waitUntil(lambda: capture.seconds > 0, timeout=15_000)
    assert window.takes.replay()
    qtbot.waitUntil(lambda: not window.context.audio.playing, timeout=15_000)
    end = capture.seconds
    qtbot.waitUntil(lambda: capture.seconds > end + 0.3, timeout=15_000)
    captured = capture.stop()
    from voicedesk.core.audio.resample import resample

    assert best_correlation(captured, resample(noise, 24000, RATE)) > 0.9
    close_window(window)


def test_speak_starts_playing_before_the_last_sentence_is_synthesized(
    qtbot: QtBot, pulse_server: PulseServer, cpu_engine: Any
) -> None:
    window = open_window(qtbot, warmed(cpu_engine))
    window.voices.select("jf_alpha")
    window.speak.text.setPlainText("The first sentence is short. The second one takes a little longer to say. And a third.")
    capture = pulse_server.capture("speaker.monitor")
    qtbot.waitUntil(lambda: capture.seconds > 0, timeout=15_000)
    started = capture.seconds
    job = window.speak.speak()
    assert job is not None
    heard_at: list[float] = []

    def heard() -> bool:
        if not heard_at and window.context.audio.playing:
            heard_at.append(time.monotonic())
        return job.done

    qtbot.waitUntil(heard, timeout=120_000)
    finished_at = time.monotonic()
    qtbot.waitUntil(lambda: not window.context.audio.playing, timeout=60_000)
    captured = capture.stop()[int(started * RATE) :]
    assert heard_at and heard_at[0] < finished_at - 0.2, "playback waited for the whole text"
    assert window.speak.chunks_played == 3
    take = window.takes.current
    assert take is not None
    loud = np.flatnonzero(np.abs(captured) > 0.02)
    assert loud.size and (loud[-1] - loud[0]) / RATE > 0.8 * take.duration  # the whole take was heard
    close_window(window)


def test_no_microphone_gives_a_clear_message(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PULSE_SERVER", "unix:/nonexistent/native")
    devices.rescan()
    try:
        window = open_window(qtbot, None)
        window.prompt.lead_in_s = 0
        window.prompt.refresh_devices()
        window.prompt.start_recording()
        text = window.prompt.notices.text()
        assert "No microphone found" in text or "could not be used" in text, text
        assert window.prompt.notices.property("state") == "error"
        assert window.prompt.record_button.isEnabled() and not window.prompt.recording
        close_window(window)
    finally:
        monkeypatch.undo()
        devices.rescan()


def panel_clip(folder: Path, panel: Any) -> Path:
    """The panel's recording written to a file, to import it."""
    import soundfile as sf

    path = folder / "clip.wav"
    sf.write(path, panel.source_prompt.audio, panel.source_prompt.sample_rate)
    return path


def qtbot_left() -> Any:
    from PySide6.QtCore import Qt

    return Qt.MouseButton.LeftButton
