"""Generate the bad-input corpus (prompts, voice files, texts) into a folder at test time.

Nothing large is kept in git: the one real recording is the bundled `resources/sample-prompt.flac`;
every other file is derived from it or synthesised here. The hour-long WAV is sparse (its header
declares an hour; the file system stores only the first seconds), so it costs no disk.

Run directly to inspect the files: `python tests/tools/make_bad_corpus.py OUTDIR`.
"""

from __future__ import annotations

import io
import json
import struct
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_PROMPT = ROOT / "resources" / "sample-prompt.flac"


@dataclass(frozen=True)
class Case:
    path: Path
    ok: bool  # True: load_prompt must succeed; False: it must raise a clear InputError
    expect: str  # a word the result's notice or error must contain (lower case)


def speech(rate: int = 16000) -> np.ndarray:
    """The bundled ~3 s speech sample as mono float32 at `rate`."""
    from voicedesk.core.audio.resample import resample

    audio, source_rate = sf.read(SAMPLE_PROMPT, dtype="float32")
    return resample(audio, source_rate, rate)


def _wav_header(frames: int, rate: int, channels: int = 1, bits: int = 16) -> bytes:
    block = channels * bits // 8
    data = frames * block
    return (
        b"RIFF" + struct.pack("<I", 36 + data) + b"WAVE"
        + b"fmt " + struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * block, block, bits)
        + b"data" + struct.pack("<I", data)
    )


def build_prompt_corpus(folder: Path) -> list[Case]:
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    voice = speech(16000)
    cases: list[Case] = []

    def add(name: str, ok: bool, expect: str) -> Path:
        path = folder / name
        cases.append(Case(path, ok, expect))
        return path

    add("empty.wav", False, "empty").write_bytes(b"")
    buffer = io.BytesIO()
    sf.write(buffer, voice, 16000, format="WAV", subtype="PCM_16")
    good_wav = buffer.getvalue()
    add("truncated-header.wav", False, "could not be read").write_bytes(good_wav[:30])
    add("truncated-data.wav", True, "").write_bytes(good_wav[: 44 + 2 * int(2.5 * 16000)])
    add("speech-named.mp3", True, "despite its name").write_bytes(good_wav)
    add("speech.txt", True, "despite its name").write_bytes(good_wav)
    add("not-audio.wav", False, "could not be read").write_bytes(b"Hello, this is a text file.\n" * 200)
    add("png-image.flac", False, "could not be read").write_bytes(b"\x89PNG\r\n\x1a\n" + rng.bytes(4000))
    add("folder.wav", False, "not a file").mkdir()
    add("bogus-rate.wav", False, "sample rate").write_bytes(_wav_header(16000, 3) + b"\x00\x01" * 16000)
    nan = voice.copy()
    nan[5000:5010] = np.nan
    sf.write(add("nan.wav", False, "nan"), nan, 16000, subtype="FLOAT")
    inf = voice.copy()
    inf[100] = np.inf
    sf.write(add("inf.wav", False, "infinity"), inf, 16000, subtype="FLOAT")
    sf.write(add("8bit.wav", True, "8-bit"), voice, 16000, subtype="PCM_U8")
    sf.write(add("8khz.wav", True, "telephone"), speech(8000), 8000)
    sf.write(add("192khz.wav", True, ""), speech(192000), 192000, subtype="PCM_24")
    six = np.stack([voice * g for g in (1.0, 0.8, 0.5, 0.3, 0.0, 0.1)], axis=1)
    sf.write(add("6-channel.wav", True, ""), six, 16000)
    sf.write(add("silence.wav", False, "silent"), np.zeros(48000, dtype=np.float32), 16000)
    sf.write(add("near-silence.wav", False, "silent"), rng.standard_normal(48000) * 1e-5, 16000)
    sf.write(add("white-noise.wav", False, "does not sound like speech"), rng.standard_normal(48000) * 0.2, 16000)
    brown = np.cumsum(rng.standard_normal(48000))
    brown = (brown - brown.mean()) / np.abs(brown - brown.mean()).max() * 0.5
    sf.write(add("brown-noise.wav", False, "does not sound like speech"), brown, 16000)
    t = np.arange(48000) / 16000
    sf.write(add("clipped-square.wav", False, "does not sound like speech"), np.sign(np.sin(2 * np.pi * 150 * t)), 16000)
    sf.write(add("clipped-speech.wav", True, "clipped"), np.clip(voice * 8.0, -1.0, 1.0), 16000)
    sf.write(add("quiet.wav", True, "boosted"), voice * 10 ** (-42 / 20), 16000, subtype="PCM_24")
    sf.write(add("too-short.wav", False, "record about 3 seconds"), voice[: int(0.9 * 16000)], 16000)
    sf.write(add("speech.mp3", True, ""), voice, 16000, format="MP3")
    sf.write(add("speech.ogg", True, ""), voice, 16000, format="OGG", subtype="VORBIS")
    sf.write(add("speech.flac", True, ""), voice, 16000)
    gap = np.zeros(8000, dtype=np.float32)
    sf.write(add("long-45s.wav", True, "only the first 30"), np.tile(np.concatenate([voice, gap]), 13), 16000)
    # An hour of audio: the header declares it, the file is sparse after the first seconds of speech.
    hour = add("one-hour.wav", True, "min long")
    frames = 3600 * 16000
    pcm = (np.clip(voice, -1, 1) * 32767).astype("<i2").tobytes()
    with hour.open("wb") as handle:
        handle.write(_wav_header(frames, 16000) + pcm)
        handle.truncate(44 + 2 * frames)
    return cases


def build_voice_corpus(folder: Path, good: bytes) -> dict[str, Path]:
    """Damaged variants of a good `.vdvoice` export (its bytes given), each named for its defect."""
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(io.BytesIO(good)) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    meta = json.loads(members["meta.json"])
    out: dict[str, Path] = {}

    def variant(name: str, **changes: bytes | None) -> None:
        parts = {**members, **changes}
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for member, data in parts.items():
                if data is not None:
                    archive.writestr(member, data)
        out[name] = folder / f"{name}.vdvoice"
        out[name].write_bytes(buffer.getvalue())

    def raw(name: str, data: bytes) -> None:
        out[name] = folder / f"{name}.vdvoice"
        out[name].write_bytes(data)

    def meta_with(**fields: object) -> bytes:
        return json.dumps({**meta, **fields}).encode()

    def npy(array: np.ndarray) -> bytes:
        buffer = io.BytesIO()
        np.save(buffer, array, allow_pickle=True)
        return buffer.getvalue()

    raw("empty", b"")
    raw("truncated", good[: len(good) // 2])
    raw("not-zip", b"PK\x03\x04" + b"\x00" * 200)
    raw("text", b"name=anna\n")
    variant("no-style", **{"style.npy": None})
    variant("no-meta", **{"meta.json": None})
    variant("no-prompt", **{"prompt.flac": None})
    variant("meta-not-json", **{"meta.json": b"{not json"})
    variant("meta-list", **{"meta.json": b"[1, 2, 3]"})
    variant("wrong-format", **{"meta.json": meta_with(format="something-else")})
    variant("newer-version", **{"meta.json": meta_with(version=99)})
    variant("bad-name", **{"meta.json": meta_with(name="../../etc/passwd")})
    variant("bad-date", **{"meta.json": meta_with(created="yesterday")})
    variant("nested-scores", **{"meta.json": meta_with(scores={"a": {"b": 1}})})
    variant("nan-score", **{"meta.json": meta_with(scores={"a": float("nan")}).replace(b"NaN", b"NaN")})
    variant("style-wrong-shape", **{"style.npy": npy(np.zeros((10, 128), np.float32))})
    variant("style-nan", **{"style.npy": npy(np.full((1, 256), np.nan, np.float32))})
    variant("style-pickle", **{"style.npy": npy(np.array([{"evil": 1}], dtype=object))})
    variant("style-int", **{"style.npy": npy(np.zeros((1, 256), np.int64))})
    variant("style-garbage", **{"style.npy": b"\x93NUMPY garbage"})
    variant("prompt-garbage", **{"prompt.flac": b"fLaC" + b"\x00" * 100})
    # A zip bomb: a member declaring (and inflating to) far more than any voice needs.
    variant("bomb", **{"style.npy": b"\x00" * (20 * 1024 * 1024)})
    return out


# Texts for the speech commands (`voicedesk say`, the Speak box).
BAD_TEXTS = {
    "empty": "",
    "whitespace": " \t\n  \u3000 ",
    "hundred-thousand-chars": ("The quick brown fox jumps over the lazy dog. " * 2300)[:100_000],
    "emoji-only": "😀🎉🔥👍🏽🇯🇵",
    "mixed-scripts": "Hello мир 世界 مرحبا こんにちは 123 ½",
    "control-chars": "Hello\x00\x07\x1b[31m world\x7f\u202e",
    "one-long-word": "a" * 5000,
}


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "bad-corpus")
    for case in build_prompt_corpus(target / "prompts"):
        print(("ok   " if case.ok else "error") + f"  {case.path}")
