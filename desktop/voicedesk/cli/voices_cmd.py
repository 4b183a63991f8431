"""`voicedesk voices`: list stock and saved voices; export, import, rename and delete saved ones.

The listing prints one voice per line, name first (names never contain spaces), so scripts can
`cut -f1` it. Damaged library files are reported on stderr and skipped.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from voicedesk.core.engine.config import NEUTRAL_PITCH
from voicedesk.core.errors import VoiceDeskError
from voicedesk.core.library.voicefile import SUFFIX
from voicedesk.core.library.voices import VoiceLibrary


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("voices", help="list voices; export, import, rename or delete saved voices")
    parser.set_defaults(handler=list_voices)
    sub = parser.add_subparsers(dest="voices_command", metavar="ACTION")

    export = sub.add_parser("export", help=f"write a saved voice to one {SUFFIX} file")
    export.add_argument("name")
    export.add_argument("file")
    export.set_defaults(handler=export_voice)

    imp = sub.add_parser("import", help=f"add a voice from a {SUFFIX} file")
    imp.add_argument("file")
    imp.add_argument("--name", help="save it under this name instead of the one stored in the file")
    imp.set_defaults(handler=import_voice)

    rename = sub.add_parser("rename", help="rename a saved voice")
    rename.add_argument("old")
    rename.add_argument("new")
    rename.set_defaults(handler=rename_voice)

    delete = sub.add_parser("delete", help="move a saved voice to the library's trash folder")
    delete.add_argument("name")
    delete.set_defaults(handler=delete_voice)

    add = sub.add_parser("add-stock", help="add Kokoro's English and other stock voices (kokoro-js from npm) and "
                                           "profile them for clone reports")
    add.add_argument("--from", dest="tarball", metavar="FILE", help="the kokoro-js-1.2.1.tgz package, already downloaded")
    add.add_argument("--if-missing", action="store_true",
                     help="download nothing when the voices are already added (their profile is still built if missing)")
    add.set_defaults(handler=add_stock)


def add_stock(args: argparse.Namespace) -> int:
    from voicedesk.core.engine import voice_pack

    if not (args.if_missing and voice_pack.read_pack()):
        try:
            tarball = Path(args.tarball).read_bytes() if args.tarball else voice_pack.download()
        except OSError as exc:
            print(f"Error: cannot read {args.tarball}: {exc.strerror or exc}.", file=sys.stderr)
            return 2
        path, count = voice_pack.install(tarball)
        print(f"Added {count} Kokoro stock voices ({voice_pack.PACKAGE}, checked) in {path}.")
    return profile_stock_voices()


def profile_stock_voices() -> int:
    """Build the stock voices' judge profile (clone reports name the closest stock voice) unless it is current."""
    import time

    from voicedesk.core.clone import stock_profile
    from voicedesk.core.clone.fit import CHECK_TEXT
    from voicedesk.core.clone.judge import Judge
    from voicedesk.core.engine.engine import Engine

    engine = Engine.load()
    names = engine.stock_voices()
    profile_key = stock_profile.key(engine.stock_styles(), CHECK_TEXT)
    if stock_profile.load(profile_key):
        return 0
    started = time.perf_counter()
    print(f"Profiling {len(names)} stock voices for clone reports on {engine.device}…", flush=True)

    def progress(done: int, total: int) -> None:
        if done % 10 == 0 or done == total:
            print(f"  {done} of {total}", flush=True)

    profile = stock_profile.build(engine, Judge(), CHECK_TEXT, names, progress)
    path = stock_profile.save(profile, profile_key)
    print(f"Profiled {len(profile)} stock voices in {time.perf_counter() - started:.0f} s ({path}).")
    return 0


def stock_voices() -> list[tuple[str, str]]:
    """(name, description) of the engine's stock voices, read without loading the model."""
    from voicedesk.core.engine.voices import describe_stock_voice, stock_voice_names

    return [(name, describe_stock_voice(name)) for name in stock_voice_names()]


def _library() -> tuple[VoiceLibrary, list[tuple[str, str]]]:
    try:
        stock = stock_voices()
    except (VoiceDeskError, ImportError) as exc:  # the engine package is optional for managing files
        print(f"Warning: stock voices unavailable: {exc}", file=sys.stderr)
        stock = []
    return VoiceLibrary(reserved_names=[name for name, _ in stock]), stock


def list_voices(args: argparse.Namespace) -> int:
    library, stock = _library()
    for name, description in stock:
        print(f"{name}\tstock\t{description}")
    scan = library.scan()
    for voice in scan.items:
        scores = " ".join(f"{key}={_short(value)}" for key, value in voice.scores.items())
        if voice.pitch != NEUTRAL_PITCH:
            scores += f" pitch_scale={voice.pitch.scale:.3f} pitch_spread={voice.pitch.spread:.3f}"
            if voice.pitch.pace != 1.0:
                scores += f" pace={voice.pitch.pace:.3f}"
        print(f"{voice.name}\tsaved\t{voice.language}\t{voice.created}\t{scores}".rstrip())
    for problem in scan.problems:
        print(f"Warning: {problem.message}", file=sys.stderr)
    return 0


def _short(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value).replace(" ", "_")


def export_voice(args: argparse.Namespace) -> int:
    library, _ = _library()
    target = library.export(args.name, args.file)
    print(f"Exported {args.name} to {target}")
    return 0


def import_voice(args: argparse.Namespace) -> int:
    library, _ = _library()
    voice = library.import_file(args.file, name=args.name)
    print(f"Imported {voice.name}")
    return 0


def rename_voice(args: argparse.Namespace) -> int:
    library, _ = _library()
    voice = library.rename(args.old, args.new)
    print(f"Renamed {args.old} to {voice.name}")
    return 0


def delete_voice(args: argparse.Namespace) -> int:
    library, _ = _library()
    trash = library.delete(args.name)
    print(f"Deleted {args.name} (kept in {trash.parent} until you empty it)")
    return 0
