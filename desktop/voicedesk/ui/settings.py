"""The window's settings, declared once with their types and defaults, stored with QSettings.

Everything the window remembers between runs is one `Setting` below. Values live in an INI file in
`voicedesk.core.paths.config_dir()` (so `VOICEDESK_HOME` relocates them), carrying a format version:
`UPGRADES` maps an old version to the function that brings its values forward.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar, cast

from PySide6.QtCore import QByteArray, QSettings

from voicedesk.core import paths

T = TypeVar("T", str, int, float, bool, bytes)

VERSION = 1
FILE_NAME = "voicedesk.ini"


@dataclass(frozen=True)
class Setting(Generic[T]):
    key: str
    default: T


WINDOW_GEOMETRY = Setting("window/geometry", b"")
WINDOW_STATE = Setting("window/state", b"")
COMPUTE_DEVICE = Setting("engine/device", "auto")  # auto | cpu | cuda
INPUT_DEVICE = Setting("audio/input_device", "")  # name; "" = the system default
OUTPUT_DEVICE = Setting("audio/output_device", "")
# 4 s: the line shown fills about 3 s of it (reading.passage), the prompt length cloning is measured on; a 3 s
# recording's line is ~2 s of speech (clone-dev.md, sweep 31).
RECORD_SECONDS = Setting("audio/record_seconds", 4)
CLONE_STEPS = Setting("clone/steps", 0)  # 0 = the engine's own default budget
CLONE_LANGUAGE = Setting("clone/language", "en")  # what a new clone speaks (and its prompt's words are read in)
LAST_VOICE = Setting("voices/last", "")
LANGUAGE = Setting("speak/language", "en")
SPEED = Setting("speak/speed", 1.0)
SEED = Setting("speak/seed", -1)  # -1 = a fresh random seed each time
LAST_TEXT = Setting("speak/text", "")
EXPORT_RATE = Setting("export/sample_rate", 24000)
EXPORT_SUBTYPE = Setting("export/subtype", "PCM_16")  # soundfile subtype: PCM_16 | PCM_24 | FLOAT
EXPORT_FOLDER = Setting("export/folder", "")
IMPORT_FOLDER = Setting("import/folder", "")

# version found in the file -> function that rewrites its values to the next version
UPGRADES: dict[int, Callable[[QSettings], None]] = {}


def settings_path() -> Path:
    return paths.config_dir() / FILE_NAME


class Settings:
    """Typed access to the settings file: `settings.get(SPEED)` is a float, whatever the INI holds."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or settings_path()
        self._store = QSettings(str(self.path), QSettings.Format.IniFormat)
        self._upgrade()

    def _upgrade(self) -> None:
        try:
            found = int(str(self._store.value("meta/version", VERSION)))
        except ValueError:
            found = VERSION  # unreadable version: keep the values, each falls back on its own if damaged
        while found < VERSION:
            step = UPGRADES.get(found)
            if step is not None:
                step(self._store)
            found += 1
        self._store.setValue("meta/version", VERSION)

    def get(self, setting: Setting[T]) -> T:
        raw = self._store.value(setting.key)
        if raw is None:
            return setting.default
        try:
            return cast(T, _convert(raw, setting.default))
        except (TypeError, ValueError):
            return setting.default  # a hand-edited or damaged value: fall back, never crash the window

    def set(self, setting: Setting[T], value: T) -> None:
        if isinstance(value, bytes):
            self._store.setValue(setting.key, QByteArray(value))
        else:
            self._store.setValue(setting.key, value)

    def sync(self) -> None:
        self._store.sync()


def _convert(raw: object, default: object) -> object:
    """`raw` (what the INI file holds) as the type of `default`; TypeError/ValueError if it cannot be."""
    if isinstance(default, bytes):
        if isinstance(raw, QByteArray):
            return raw.data()
        raise TypeError(f"expected bytes, got {type(raw).__name__}")
    if isinstance(default, bool):
        return raw if isinstance(raw, bool) else str(raw).strip().lower() in ("1", "true", "yes", "on")
    if isinstance(default, int):
        return int(float(str(raw)))
    if isinstance(default, float):
        return float(str(raw))
    return str(raw)
