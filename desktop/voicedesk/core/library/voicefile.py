"""The `.vdvoice` file: one saved voice in a zip, the same format in the library and for export.

Members: `meta.json` (format, version, name, language, created, scores, the transcript of the
prompt when there is one, and the voice's pitch when it is not neutral), `style.npy` (float32
`[L, 256]`, loaded with pickles disabled), `prompt.flac` (the normalised prompt) and, for a voice that has
one, `envelope.npy` (its envelope map, `engine/envelope.py`). Decoding treats
the bytes as hostile: sizes are checked before anything is inflated, every field is validated, and any
failure becomes one `CorruptVoiceFile` error naming the file.
"""

from __future__ import annotations

import io
import json
import math
import zipfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from voicedesk.core.engine.config import NEUTRAL_PITCH, Pitch
from voicedesk.core.engine.envelope import EnvelopeMap
from voicedesk.core.errors import InputError
from voicedesk.core.library.names import check_name

FORMAT = "voicedesk-voice"
# Version 2 adds "pitch" ({"scale", "spread"}), version 3 its "pace". A voice with a neutral pitch is
# still written as version 1, which every VoiceDesk reads; one with its own pitch is version 2 (3 with a
# pace of its own), which an older VoiceDesk refuses rather than speaking it at the wrong pitch or pace.
# Version 4 adds `envelope.npy`: a voice with an envelope map is version 4; version 5 its larger form, the
# distributions' shapes matched too (an older VoiceDesk would refuse that map as damaged; it asks for an update).
VERSION = 5
SUFFIX = ".vdvoice"
STYLE_WIDTH = 256
MAX_STYLE_ROWS = 512
MAX_PROMPT_SECONDS = 35.0
MAX_FILE_BYTES = 24 * 1024 * 1024
MAX_TRANSCRIPT_CHARS = 2000
_MEMBER_LIMITS = {
    "meta.json": 64 * 1024,
    "style.npy": MAX_STYLE_ROWS * STYLE_WIDTH * 4 + 4096,
    "prompt.flac": 16 * 1024 * 1024,
    "envelope.npy": 64 * 1024,
}

FloatArray = npt.NDArray[np.float32]
Score = float | int | str | bool | None


class CorruptVoiceFile(InputError):
    """A voice file is damaged or not a VoiceDesk voice."""


@dataclass(frozen=True)
class SavedVoice:
    """A cloned voice: its style, where it came from and how well it matched."""

    name: str
    style: FloatArray  # [L, 256]: [:, :128] timbre, [:, 128:] prosody
    prompt_audio: FloatArray  # mono float32, normalised
    language: str = "en"
    created: str = field(default_factory=lambda: datetime.now().astimezone().isoformat(timespec="seconds"))
    scores: dict[str, Score] = field(default_factory=dict)
    prompt_rate: int = 24000
    transcript: str = ""  # what the prompt says, when the user gave it
    pitch: Pitch = NEUTRAL_PITCH  # how this voice shapes F0 (the fit sets it from the prompt's pitch)
    envelope: EnvelopeMap | None = None  # how its speech's envelope is reshaped (the fit learns it with the words)


def check_style(style: npt.ArrayLike) -> FloatArray:
    """A style as float32 `[L, 256]` with 1 <= L <= 512 and finite values, or `InputError`."""
    array = np.asarray(style)
    if array.ndim == 1:
        array = array.reshape(1, -1)
    if array.ndim != 2 or array.shape[1] != STYLE_WIDTH or not 1 <= array.shape[0] <= MAX_STYLE_ROWS:
        raise InputError(f"A voice style must be [L, {STYLE_WIDTH}] with L up to {MAX_STYLE_ROWS}; got {array.shape}.")
    if not np.issubdtype(array.dtype, np.floating):
        raise InputError(f"A voice style must hold floating-point numbers, not {array.dtype}.")
    out = np.ascontiguousarray(array, dtype=np.float32)
    if not np.isfinite(out).all():
        raise InputError("The voice style contains NaN or infinite values.")
    return out


def check_voice(voice: SavedVoice) -> SavedVoice:
    """Validate every field; returns a copy with arrays in canonical dtype and layout."""
    check_name(voice.name)
    style = check_style(voice.style)
    audio = np.ascontiguousarray(np.asarray(voice.prompt_audio, dtype=np.float32).reshape(-1))
    if not 8000 <= int(voice.prompt_rate) <= 48000:
        raise InputError(f"Prompt audio at {voice.prompt_rate} Hz is outside 8–48 kHz.")
    if audio.size == 0 or audio.size > MAX_PROMPT_SECONDS * voice.prompt_rate or not np.isfinite(audio).all():
        raise InputError("The voice's prompt audio is empty, longer than 35 s or not finite.")
    if not isinstance(voice.language, str) or not 0 < len(voice.language) <= 16:
        raise InputError(f"Invalid language code {voice.language!r}.")
    _check_created(voice.created)
    scores = _check_scores(voice.scores)
    if not isinstance(voice.transcript, str) or len(voice.transcript) > MAX_TRANSCRIPT_CHARS:
        raise InputError(f"The transcript must be text of at most {MAX_TRANSCRIPT_CHARS} characters.")
    if not isinstance(voice.pitch, Pitch):
        raise InputError("The voice's pitch must give a scale, a spread and a pace.")
    envelope = None if voice.envelope is None else EnvelopeMap.from_array(voice.envelope.to_array())
    return SavedVoice(voice.name, style, audio, voice.language, voice.created, scores, int(voice.prompt_rate),
                      voice.transcript, voice.pitch.checked(), envelope)


def _check_created(value: object) -> None:
    if not isinstance(value, str) or len(value) > 64:
        raise InputError("The creation date is missing.")
    try:
        datetime.fromisoformat(value)
    except ValueError as exc:
        raise InputError(f"The creation date {value!r} is not an ISO date.") from exc


def _check_scores(scores: object) -> dict[str, Score]:
    if not isinstance(scores, dict) or len(scores) > 64:
        raise InputError("Scores must be a small mapping of names to numbers or words.")
    out: dict[str, Score] = {}
    for key, value in scores.items():
        ok_value = value is None or isinstance(value, bool | int | str) or (
            isinstance(value, float) and math.isfinite(value)
        )
        if not isinstance(key, str) or len(key) > 64 or not ok_value or (isinstance(value, str) and len(value) > 256):
            raise InputError(f"Invalid score entry {str(key)[:40]!r}.")
        out[key] = value
    return out


def encode(voice: SavedVoice) -> bytes:
    """The `.vdvoice` bytes for a (validated) voice."""
    import soundfile as sf

    voice = check_voice(voice)
    meta = {
        "format": FORMAT,
        "version": _version(voice),
        "name": voice.name,
        "language": voice.language,
        "created": voice.created,
        "scores": voice.scores,
    }
    if voice.transcript:
        meta["transcript"] = voice.transcript
    if voice.pitch != NEUTRAL_PITCH:
        pitch = {"scale": voice.pitch.scale, "spread": voice.pitch.spread}
        if voice.pitch.pace != 1.0:
            pitch["pace"] = voice.pitch.pace
        meta["pitch"] = pitch
    style_bytes = io.BytesIO()
    np.save(style_bytes, voice.style, allow_pickle=False)
    flac = io.BytesIO()
    sf.write(flac, np.clip(voice.prompt_audio, -1.0, 1.0), voice.prompt_rate, format="FLAC", subtype="PCM_24")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("meta.json", json.dumps(meta, indent=2, ensure_ascii=False), zipfile.ZIP_DEFLATED)
        archive.writestr("style.npy", style_bytes.getvalue(), zipfile.ZIP_DEFLATED)
        archive.writestr("prompt.flac", flac.getvalue(), zipfile.ZIP_STORED)
        if voice.envelope is not None:
            envelope_bytes = io.BytesIO()
            np.save(envelope_bytes, voice.envelope.to_array(), allow_pickle=False)
            archive.writestr("envelope.npy", envelope_bytes.getvalue(), zipfile.ZIP_DEFLATED)
    return out.getvalue()


def _version(voice: SavedVoice) -> int:
    """The oldest format that holds everything the voice has (older VoiceDesks read the voices they can speak)."""
    if voice.envelope is not None:
        return 5 if voice.envelope.voice_knots is not None else 4
    if voice.pitch == NEUTRAL_PITCH:
        return 1
    return 2 if voice.pitch.pace == 1.0 else 3


def decode(data: bytes, source: str) -> SavedVoice:
    """Parse `.vdvoice` bytes; any defect raises `CorruptVoiceFile` naming `source`."""
    try:
        return _decode(data)
    except CorruptVoiceFile:
        raise
    except InputError as exc:
        raise CorruptVoiceFile(f"{source} is not a usable voice file: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - hostile bytes can upset zipfile/numpy/libsndfile in many ways
        raise CorruptVoiceFile(
            f"{source} is damaged or not a VoiceDesk voice file ({type(exc).__name__}); "
            "export the voice again from the VoiceDesk that made it."
        ) from exc


def read_file(path: Path) -> SavedVoice:
    """Read and decode a `.vdvoice` file, refusing oversized files before reading them."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise CorruptVoiceFile(f"{path.name} is {size / 1e6:.0f} MB, far larger than any voice file; it is not one.")
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise InputError(f"The file {path} does not exist; check the path.") from exc
    except IsADirectoryError as exc:
        raise InputError(f"{path} is a folder; choose a {SUFFIX} file.") from exc
    except OSError as exc:
        raise InputError(f"Could not read {path} ({exc.strerror or exc}).") from exc
    return decode(data, path.name)


def _member(archive: zipfile.ZipFile, name: str) -> bytes:
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise InputError(f"it has no {name}") from None
    limit = _MEMBER_LIMITS[name]
    if info.file_size > limit:
        raise InputError(f"its {name} is implausibly large")
    with archive.open(info) as handle:
        data = handle.read(limit + 1)  # the header may lie about the size
    if len(data) > limit:
        raise InputError(f"its {name} is implausibly large")
    return data


def _decode(data: bytes) -> SavedVoice:
    import soundfile as sf

    if len(data) > MAX_FILE_BYTES:
        raise InputError("it is far larger than any voice file")
    if not data.startswith(b"PK"):
        raise InputError(
            f"it is not a {SUFFIX} voice file (to make a voice from a recording, use "
            "`voicedesk clone RECORDING --name NAME`)"
        )
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        meta: Any = json.loads(_member(archive, "meta.json").decode("utf-8"))
        style_bytes = _member(archive, "style.npy")
        flac_bytes = _member(archive, "prompt.flac")
        envelope_bytes = _member(archive, "envelope.npy") if "envelope.npy" in archive.namelist() else None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise InputError("its meta.json does not describe a VoiceDesk voice")
    version = meta.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InputError("its format version is missing")
    if version > VERSION:
        raise InputError(f"it was made by a newer VoiceDesk (format {version}); update VoiceDesk to open it")
    style = np.load(io.BytesIO(style_bytes), allow_pickle=False)
    with sf.SoundFile(io.BytesIO(flac_bytes)) as handle:
        if handle.channels != 1 or handle.frames > MAX_PROMPT_SECONDS * handle.samplerate:
            raise InputError("its prompt audio is not mono or is too long")
        audio = handle.read(dtype="float32")
        rate = int(handle.samplerate)
    name, language, created = meta.get("name"), meta.get("language"), meta.get("created")
    if not isinstance(name, str) or not isinstance(language, str) or not isinstance(created, str):
        raise InputError("its name, language or creation date is missing")
    transcript = meta.get("transcript", "")
    pitch = meta.get("pitch", {})
    if not isinstance(pitch, dict) or set(pitch) - {"scale", "spread", "pace"}:
        raise InputError("its pitch is not a scale, a spread and a pace")
    envelope = None
    if envelope_bytes is not None:
        envelope = EnvelopeMap.from_array(np.load(io.BytesIO(envelope_bytes), allow_pickle=False))
    return check_voice(SavedVoice(name, style, audio, language, created, meta.get("scores", {}), rate, transcript,
                                  Pitch(pitch.get("scale", 1.0), pitch.get("spread", 1.0), pitch.get("pace", 1.0)),
                                  envelope))
