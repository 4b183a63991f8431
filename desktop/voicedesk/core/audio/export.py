"""Atomic audio export: a failed write never leaves a partial file or damages an existing one."""

from __future__ import annotations

import errno
import io
import os
from pathlib import Path

import numpy as np
import numpy.typing as npt

from voicedesk.core.atomic import atomic_writer
from voicedesk.core.audio.resample import resample
from voicedesk.core.errors import InputError, VoiceDeskError

EXPORT_RATES = (24000, 44100, 48000)
SUBTYPES = ("PCM_16", "PCM_24", "FLOAT")


class ExportError(VoiceDeskError):
    """A file could not be written; the message says what to do."""


def explain_write_error(exc: OSError, target: Path) -> ExportError:
    """Turn an OSError from writing `target` into advice the user can follow."""
    folder = target.parent
    code = exc.errno
    if code in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        return ExportError(f"The disk holding {folder} is full; free some space or save to another drive.")
    if code in (errno.EROFS, errno.EACCES, errno.EPERM):
        return ExportError(f"VoiceDesk may not write to {folder} (read-only or no permission); choose another folder.")
    if code == errno.ENOENT or not folder.is_dir():
        return ExportError(f"The folder {folder} no longer exists (a removed drive?); choose another folder.")
    if code == errno.ENAMETOOLONG:
        return ExportError(f"The file name {target.name!r} is too long; choose a shorter name.")
    return ExportError(f"Could not write {target} ({exc.strerror or exc}); choose another folder or file name.")


def write_audio_file(
    path: str | os.PathLike[str],
    audio: npt.ArrayLike,
    sample_rate: int,
    *,
    file_format: str = "WAV",
    subtype: str = "PCM_16",
) -> Path:
    """Write mono or `[frames, channels]` float audio atomically; returns the path written."""
    import soundfile as sf

    target = Path(path)
    data = np.asarray(audio, dtype=np.float32)
    if data.size == 0:
        raise InputError("There is no audio to save; generate or record something first.")
    # PCM conversion in libsndfile wraps rather than clips; NaN would become noise.
    data = np.clip(np.nan_to_num(data, nan=0.0, posinf=1.0, neginf=-1.0), -1.0, 1.0)
    # Encode in memory first: an encoder error then never touches the disk, and the file system's
    # own errors (disk full, read-only) surface from one plain write as OSError with its errno.
    encoded = io.BytesIO()
    sf.write(encoded, data, int(sample_rate), subtype=subtype, format=file_format)
    try:
        with atomic_writer(target) as handle:
            handle.write(encoded.getbuffer())
    except OSError as exc:
        raise explain_write_error(exc, target) from exc
    return target


def write_wav(
    path: str | os.PathLike[str],
    audio: npt.ArrayLike,
    sample_rate: int,
    *,
    target_rate: int | None = None,
    subtype: str = "PCM_16",
) -> Path:
    """Export a .wav, resampled to `target_rate` (24000, 44100 or 48000; None keeps the rate).

    `subtype` is "PCM_16", "PCM_24" or "FLOAT" (32-bit float). The file is written atomically.
    """
    if subtype not in SUBTYPES:
        raise InputError(f"Unknown bit depth {subtype!r}; choose one of {', '.join(SUBTYPES)}.")
    rate = int(sample_rate if target_rate is None else target_rate)
    if target_rate is not None and rate not in EXPORT_RATES:
        raise InputError(f"Cannot export at {rate} Hz; choose 24000, 44100 or 48000.")
    data = np.asarray(audio, dtype=np.float32)
    if data.ndim != 1:
        data = data.reshape(data.shape[0], -1).mean(axis=1, dtype=np.float32)
    if rate != sample_rate:
        data = resample(data, int(sample_rate), rate)
    return write_audio_file(path, data, rate, file_format="WAV", subtype=subtype)
