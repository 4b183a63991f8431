"""Window settings: typed values survive a restart; damaged values fall back to their defaults."""

from __future__ import annotations

from pathlib import Path

from voicedesk.ui import settings
from voicedesk.ui.settings import Settings


def test_values_round_trip_with_their_types(voicedesk_home: Path) -> None:
    store = Settings()
    assert store.path.parent == voicedesk_home / "config"
    assert store.get(settings.RECORD_SECONDS) == 4
    assert store.get(settings.EXPORT_RATE) == 24000
    store.set(settings.EXPORT_RATE, 48000)
    store.set(settings.SPEED, 1.25)
    store.set(settings.LAST_VOICE, "anna-calm")
    store.set(settings.WINDOW_GEOMETRY, b"\x01\x02\xff")
    store.sync()

    again = Settings()
    assert again.get(settings.EXPORT_RATE) == 48000 and isinstance(again.get(settings.EXPORT_RATE), int)
    assert again.get(settings.SPEED) == 1.25 and isinstance(again.get(settings.SPEED), float)
    assert again.get(settings.LAST_VOICE) == "anna-calm"
    assert again.get(settings.WINDOW_GEOMETRY) == b"\x01\x02\xff"
    assert "version=1" in store.path.read_text()


def test_a_hand_damaged_file_gives_defaults_not_a_crash(voicedesk_home: Path) -> None:
    path = settings.settings_path()
    path.write_text("[export]\nsample_rate=fast\n[speak]\nspeed=\n[meta]\nversion=zero\n")
    store = Settings()
    assert store.get(settings.EXPORT_RATE) == 24000
    assert store.get(settings.SPEED) == 1.0
