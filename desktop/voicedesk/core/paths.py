"""Where VoiceDesk keeps things, from source and from a frozen bundle alike.

`VOICEDESK_HOME` relocates every user folder (voices, takes, settings, caches, logs) under one root,
which is how tests and portable installs keep the user's real data out of reach.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP_NAME = "VoiceDesk"


def is_frozen() -> bool:
    return bool(getattr(sys, "frozen", False))


def install_root() -> Path:
    """The folder holding `resources/` and `models/`: the repository, or the bundle's folder."""
    if is_frozen():
        return Path(getattr(sys, "_MEIPASS", Path(sys.executable).parent))
    return Path(__file__).resolve().parents[3]


def resource_path(*parts: str) -> Path:
    return install_root().joinpath("resources", *parts)


def text_lines(path: Path) -> list[str]:
    """The lines of a text file of entries, one per line, stripped; `#` comments and blank lines skipped."""
    text = path.read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def resource_lines(name: str) -> list[str]:
    """`text_lines` of a file in `resources/` ([] when it is missing)."""
    path = resource_path(name)
    return text_lines(path) if path.is_file() else []


def bundled_models_dir() -> Path:
    """Models shipped with the app (converted weights inside the bundle, manifests in source)."""
    return install_root() / "models"


def portable_models_dir() -> Path:
    """Where a user drops additional models: `models/` next to the executable when frozen."""
    if is_frozen():
        return Path(sys.executable).resolve().parent / "models"
    return bundled_models_dir()


def models_dirs() -> list[Path]:
    """Where shipped models are looked up, in order: the user's `portable_models_dir`, then the bundle's own."""
    return list(dict.fromkeys((portable_models_dir(), bundled_models_dir())))


def _home() -> Path | None:
    value = os.environ.get("VOICEDESK_HOME", "").strip()
    return Path(value).expanduser() if value else None


def _ensure(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def data_dir() -> Path:
    home = _home()
    if home is not None:
        return _ensure(home / "data")
    import platformdirs

    return _ensure(Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)))


def cache_dir() -> Path:
    # VOICEDESK_CACHE lets several VOICEDESK_HOMEs (tests, portable copies) share converted weights.
    override = os.environ.get("VOICEDESK_CACHE", "").strip()
    if override:
        return _ensure(Path(override).expanduser())
    home = _home()
    if home is not None:
        return _ensure(home / "cache")
    import platformdirs

    return _ensure(Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False)))


def log_dir() -> Path:
    home = _home()
    if home is not None:
        return _ensure(home / "logs")
    import platformdirs

    return _ensure(Path(platformdirs.user_log_dir(APP_NAME, appauthor=False)))


def config_dir() -> Path:
    home = _home()
    if home is not None:
        return _ensure(home / "config")
    import platformdirs

    return _ensure(Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)))


def voices_dir() -> Path:
    return _ensure(data_dir() / "voices")


def takes_dir() -> Path:
    return _ensure(data_dir() / "takes")


def recordings_dir() -> Path:
    return _ensure(data_dir() / "recordings")
