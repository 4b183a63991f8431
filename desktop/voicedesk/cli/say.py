"""`voicedesk say`: speak text in a stock or saved voice into a 24 kHz mono 16-bit .wav file.

The file is written atomically once all of it is synthesized: a failed or cancelled run leaves no
partial file and never touches an existing one.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from voicedesk.core.engine.config import NEUTRAL_PITCH, Pitch
from voicedesk.core.engine.envelope import EnvelopeMap
from voicedesk.core.errors import InputError
from voicedesk.core.languages import LANGUAGES

MAX_TEXT_BYTES = 1_000_000


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("say", help="speak text in a voice and save it as a .wav file")
    parser.add_argument(
        "--voice", required=True, help="a stock or saved voice (`voicedesk voices` lists them)"
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--text", help="the text to speak")
    source.add_argument("--text-file", type=Path, help="a UTF-8 text file to speak")
    parser.add_argument("-o", "--output", required=True, type=Path, help="the .wav file to write")
    parser.add_argument(
        "--language",
        choices=tuple(LANGUAGES),
        help="language of the text (default: a saved voice's language; for a stock voice en, en-gb for the "
        "British ones)",
    )
    parser.add_argument("--speed", type=float, default=1.0, help="speaking rate, 0.25–4 (default 1)")
    parser.add_argument("--seed", type=int, help="make the result repeatable")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.set_defaults(handler=say)


def read_text(args: argparse.Namespace) -> str:
    if args.text is not None:
        text: str = args.text
        return text
    path: Path = args.text_file
    try:
        if path.stat().st_size > MAX_TEXT_BYTES:
            raise InputError(f"{path} is larger than 1 MB; split it into smaller files.")
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError as exc:
        raise InputError(f"The text file {path} does not exist; check the path.") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not UTF-8 text; save it as UTF-8 and try again.") from exc
    except OSError as exc:
        raise InputError(
            f"Could not read {path} ({exc.strerror or exc}); check the path and permissions."
        ) from exc


def check_output(path: Path) -> None:
    """Fail before the slow part when the output cannot possibly be written."""
    if path.suffix.lower() != ".wav":
        raise InputError(f"The output must be a .wav file, not {path.name!r}.")
    if path.is_dir():
        raise InputError(f"{path} is a folder; give a file name ending in .wav.")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise InputError(f"The folder {folder} does not exist; create it or choose another output path.")


def resolve_voice(name: str) -> tuple[Any, str | None, Pitch, EnvelopeMap | None]:
    """(style [L, 256], the voice's language or None, its pitch, its envelope map) for a stock or saved voice name."""
    from voicedesk.core.engine.voices import stock_voice, stock_voice_english, stock_voice_names
    from voicedesk.core.library import VoiceLibrary

    stock = stock_voice_names()
    if name in stock:
        return stock_voice(name), stock_voice_english(name), NEUTRAL_PITCH, None
    library = VoiceLibrary(reserved_names=stock)
    if library.exists(name):
        saved = library.load(name)
        return saved.style, saved.language, saved.pitch, saved.envelope
    known = ", ".join([*stock, *library.names()])
    raise InputError(
        f"There is no voice named {name!r}; choose one of: {known} (`voicedesk voices` lists them)."
    )


def say(args: argparse.Namespace) -> int:
    from voicedesk.core.audio.export import write_wav
    from voicedesk.core.engine import Engine, join_chunks
    from voicedesk.core.engine.engine import check_speed
    from voicedesk.core.text import phonemize

    text = read_text(args)
    check_output(args.output)
    check_speed(args.speed)
    style, voice_language, pitch, envelope = resolve_voice(args.voice)
    language = args.language or voice_language or "en"
    # Reading the text first reports unspeakable input before the slower model load.
    pieces = phonemize(text, language)

    started = time.perf_counter()
    engine = Engine.load(device=args.device)
    print(f"Speaking on {engine.device} ({engine.device_reason}).", file=sys.stderr)
    chunks = []
    for chunk in engine.speak_chunks(pieces, style, speed=args.speed, seed=args.seed, pitch=pitch,
                                   envelope=envelope):
        for notice in chunk.notices:
            print(f"Note: {notice}", file=sys.stderr)
        print(f"  {chunk.index + 1}/{chunk.total}: {chunk.text}", file=sys.stderr)
        chunks.append(chunk)
    audio = join_chunks(chunks)
    target = write_wav(args.output, audio, engine.sample_rate, subtype="PCM_16")
    seconds = len(audio) / engine.sample_rate
    print(f"Wrote {target} ({seconds:.1f} s of audio in {time.perf_counter() - started:.1f} s).")
    return 0
