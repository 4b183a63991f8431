"""Take history: every generation (text, voice, settings, audio) kept across restarts.

Each take is two files named by its id: `ID.flac` (the audio, written first) and `ID.json` (the
record, written second). The record is the commit: a take exists only once its record does, so a
kill mid-write leaves at worst an orphaned audio file or temp file, which the next start removes.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from voicedesk.core import paths
from voicedesk.core.atomic import atomic_write_json
from voicedesk.core.audio.export import explain_write_error, write_audio_file, write_wav
from voicedesk.core.errors import InputError
from voicedesk.core.library.scan import STALE_SECONDS, Problem, Scan, remove_stale_temp_files

FloatArray = npt.NDArray[np.float32]
MAX_RECORD_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class Take:
    """One generation. `audio_path` holds the audio; `TakeHistory.audio()` reads it."""

    id: str
    text: str
    voice: str
    created: str
    sample_rate: int
    duration: float
    audio_path: Path
    settings: dict[str, Any] = field(default_factory=dict)


class TakeHistory:
    """Takes under `root` (default: the user's takes folder), newest first."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else paths.takes_dir()
        self.root.mkdir(parents=True, exist_ok=True)
        remove_stale_temp_files(self.root)
        self._remove_orphans()

    def add(
        self,
        text: str,
        voice: str,
        audio: npt.ArrayLike,
        sample_rate: int,
        settings: dict[str, Any] | None = None,
    ) -> Take:
        """Store a generation; returns its take. Settings must be JSON-serialisable."""
        samples = np.asarray(audio, dtype=np.float32).reshape(-1)
        settings = dict(settings or {})
        try:
            json.dumps(settings)
        except (TypeError, ValueError) as exc:
            raise InputError(f"Take settings must be plain values (numbers, text): {exc}") from exc
        now = datetime.now().astimezone()
        take_id = f"{now.strftime('%Y%m%d-%H%M%S-%f')}-{secrets.token_hex(2)}"
        audio_path = self.root / f"{take_id}.flac"
        write_audio_file(audio_path, samples, sample_rate, file_format="FLAC", subtype="PCM_24")
        record = {
            "id": take_id,
            "text": str(text),
            "voice": str(voice),
            "created": now.isoformat(timespec="seconds"),
            "sample_rate": int(sample_rate),
            "duration": samples.size / float(sample_rate),
            "settings": settings,
        }
        record_path = self.root / f"{take_id}.json"
        try:
            atomic_write_json(record_path, record)
        except OSError as exc:
            audio_path.unlink(missing_ok=True)
            raise explain_write_error(exc, record_path) from exc
        return self._take(record, audio_path)

    def scan(self) -> Scan[Take]:
        """All takes, newest first; unreadable records are reported, never raised."""
        result: Scan[Take] = Scan()
        for record_path in sorted(self.root.glob("*.json"), reverse=True):
            if record_path.name.startswith("."):
                continue
            try:
                result.items.append(self._read(record_path))
            except InputError as exc:
                result.problems.append(Problem(record_path, str(exc)))
        return result

    def list(self) -> list[Take]:
        return self.scan().items

    def get(self, take_id: str) -> Take:
        path = self._record_path(take_id)
        if not path.is_file():
            raise InputError(f"There is no take {take_id!r}; it may have been deleted.")
        return self._read(path)

    def audio(self, take: Take | str) -> tuple[FloatArray, int]:
        """The take's audio (mono float32) and sample rate, for replay."""
        import soundfile as sf

        item = self.get(take) if isinstance(take, str) else take
        try:
            data, rate = sf.read(item.audio_path, dtype="float32", always_2d=False)
        except (RuntimeError, OSError) as exc:
            raise InputError(f"The audio of take {item.id} cannot be read ({exc}); delete the take.") from exc
        return np.asarray(data, dtype=np.float32).reshape(-1), int(rate)

    def export(
        self, take: Take | str, destination: str | os.PathLike[str], *, target_rate: int | None = None,
        subtype: str = "PCM_16",
    ) -> Path:
        audio, rate = self.audio(take)
        return write_wav(destination, audio, rate, target_rate=target_rate, subtype=subtype)

    def delete(self, take: Take | str) -> None:
        """Remove a take: the record first (so it vanishes at once), then its audio."""
        take_id = take if isinstance(take, str) else take.id
        record = self._record_path(take_id)
        if not record.is_file():
            raise InputError(f"There is no take {take_id!r}; it may have been deleted already.")
        record.unlink()
        (self.root / f"{take_id}.flac").unlink(missing_ok=True)

    # -- helpers -------------------------------------------------------------------------------
    def _record_path(self, take_id: str) -> Path:
        if not take_id or any(ch in take_id for ch in "/\\") or take_id.startswith("."):
            raise InputError(f"{take_id!r} is not a take id.")
        return self.root / f"{take_id}.json"

    def _read(self, record_path: Path) -> Take:
        try:
            if record_path.stat().st_size > MAX_RECORD_BYTES:
                raise InputError(f"The take record {record_path.name} is implausibly large.")
            record = json.loads(record_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"The take record {record_path.name} is damaged ({type(exc).__name__}); delete it.") from exc
        audio_path = self.root / f"{record_path.stem}.flac"
        if not audio_path.is_file():
            raise InputError(f"The audio of take {record_path.stem} is missing; delete the take.")
        try:
            return self._take(record, audio_path)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"The take record {record_path.name} is incomplete ({exc}); delete it.") from exc

    @staticmethod
    def _take(record: Any, audio_path: Path) -> Take:
        if not isinstance(record, dict) or not isinstance(record.get("settings", {}), dict):
            raise TypeError("not a take record")
        return Take(
            id=audio_path.stem,
            text=str(record["text"]),
            voice=str(record["voice"]),
            created=str(record["created"]),
            sample_rate=int(record["sample_rate"]),
            duration=float(record["duration"]),
            audio_path=audio_path,
            settings=dict(record.get("settings", {})),
        )

    def _remove_orphans(self) -> None:
        """Audio whose record was never written (killed between the two writes)."""
        cutoff = time.time() - STALE_SECONDS
        for audio_path in self.root.glob("*.flac"):
            try:
                if not audio_path.with_suffix(".json").exists() and audio_path.stat().st_mtime < cutoff:
                    audio_path.unlink()
            except OSError:
                continue
