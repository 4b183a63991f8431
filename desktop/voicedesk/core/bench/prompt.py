"""A 3 s prompt for timing a clone, as raw samples: reading it must not need soundfile where a WAV will do.

Where it comes from, first found wins: a file the user names (WAV through the standard library's
`wave`, anything else through the intake, which needs soundfile); `resources/sample-prompt.wav`;
`resources/sample-prompt.flac` (needs soundfile); espeak-ng speaking a sentence. Without any of them
the clone timing is skipped, and `PromptUnavailable` says why.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import wave
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from voicedesk.core import paths

PROMPT_SECONDS = 3.0
ESPEAK_VOICE = "mb-us1"
ESPEAK_TEXT = "The old lighthouse keeper watched the boats come home before the storm."

Samples = npt.NDArray[np.float32]


class PromptUnavailable(Exception):
    """No prompt could be read or made; the message says why and what to pass instead."""


def read_wav(path: Path) -> tuple[Samples, int]:
    """Samples (float32 in [-1, 1], channels averaged) and rate of a PCM WAV file, with `wave` alone."""
    with wave.open(str(path), "rb") as handle:
        width, channels, rate = handle.getsampwidth(), handle.getnchannels(), handle.getframerate()
        frames = handle.readframes(handle.getnframes())
    data: npt.NDArray[np.floating[Any]]
    if width == 1:
        data = (np.frombuffer(frames, np.uint8).astype(np.float32) - 128) / 128
    elif width in (2, 4):
        kind = np.int16 if width == 2 else np.int32
        data = np.frombuffer(frames, kind).astype(np.float32) / float(np.iinfo(kind).max)
    elif width == 3:
        raw = np.frombuffer(frames, np.uint8).reshape(-1, 3).astype(np.int32)
        data = ((raw[:, 0] | raw[:, 1] << 8 | raw[:, 2] << 16) << 8 >> 8).astype(np.float32) / 2**23
    else:
        raise PromptUnavailable(f"{path} uses {width * 8}-bit samples, which the bench cannot read.")
    return data.reshape(-1, channels).mean(axis=1).astype(np.float32), rate


def bench_prompt(path: Path | None = None) -> tuple[Samples, str]:
    """A 3 s prompt at 16 kHz (trimmed and normalised by the intake) and where it came from."""
    from voicedesk.core.audio.intake import load_prompt

    source: tuple[Samples, int] | Path
    if path is not None:
        source, origin = (read_wav(path) if path.suffix.lower() == ".wav" else path), str(path)
    else:
        source, origin = _default_source()
    try:
        prompt = load_prompt(source)
    except ImportError as exc:  # soundfile missing for a non-WAV file
        raise PromptUnavailable(f"reading {origin} needs {exc.name or exc}; pass a .wav with --prompt") from exc
    audio = prompt.audio_16k()[: int(PROMPT_SECONDS * 16000)]
    return np.ascontiguousarray(audio, dtype=np.float32), origin


def _default_source() -> tuple[tuple[Samples, int] | Path, str]:
    wav = paths.resource_path("sample-prompt.wav")
    if wav.is_file():
        return read_wav(wav), str(wav)
    flac = paths.resource_path("sample-prompt.flac")
    if flac.is_file():
        try:
            import soundfile  # noqa: F401
        except ImportError:
            pass
        else:
            return flac, str(flac)
    espeak = shutil.which("espeak-ng")
    if espeak is None:
        raise PromptUnavailable(
            f"no prompt: {flac} needs soundfile (not installed) and espeak-ng is missing; "
            "pass a .wav recording with --prompt"
        )
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "prompt.wav"
        done = subprocess.run([espeak, "-v", ESPEAK_VOICE, "-w", str(out), ESPEAK_TEXT],
                              capture_output=True, timeout=60, check=False)
        if done.returncode != 0 or not out.is_file():
            done = subprocess.run([espeak, "-w", str(out), ESPEAK_TEXT], capture_output=True, timeout=60,
                                  check=False)
        if done.returncode != 0 or not out.is_file():
            raise PromptUnavailable("espeak-ng could not speak the bench prompt; pass a .wav with --prompt")
        return read_wav(out), f"espeak-ng ({ESPEAK_VOICE})"
