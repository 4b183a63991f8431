"""`voicedesk clone PROMPT --name NAME`: fit a voice to a recording and save it in the voice library.

Progress goes to stderr, the before/after similarity to stdout. The voice is saved only once the fit
and its report are complete, so Ctrl-C (or any failure) leaves the library as it was.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from voicedesk.core.languages import LANGUAGES


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("clone", help="clone a voice from a 3-10 s recording and save it")
    parser.add_argument("prompt", type=Path, help="a recording of the voice (wav, flac, ogg, mp3)")
    parser.add_argument("--name", required=True, help="name for the new voice in the library")
    parser.add_argument("--language", choices=tuple(LANGUAGES), default="en",
                        help="the language the voice will usually speak (default en; en-gb: British English)")
    parser.add_argument("--transcript", default="", metavar="TEXT",
                        help="what the recording says, word for word: the fit then also compares the voice "
                             "with the recording sound by sound, which makes closer clones (default: what the "
                             "transcriber hears in an English recording, when it is installed)")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument("--steps", type=int, help="most fitting steps (default 20)")
    parser.add_argument("--seconds", type=float, help="time budget in seconds for the whole clone (default 60)")
    parser.add_argument("--seed", type=int, default=0, help="make the fit repeatable (default 0)")
    parser.set_defaults(handler=clone)


def settings_from(args: argparse.Namespace) -> Any:
    from dataclasses import replace

    from voicedesk.core.clone.fit import FitSettings
    from voicedesk.core.errors import InputError

    if args.steps is not None and not 1 <= args.steps <= 1000:
        raise InputError("--steps must be between 1 and 1000.")
    if args.seconds is not None and not 1 <= args.seconds <= 3600:
        raise InputError("--seconds must be between 1 and 3600.")
    settings = replace(FitSettings(), seed=args.seed)
    if args.steps is not None:
        settings = replace(settings, steps=args.steps)
    if args.seconds is not None:
        settings = replace(settings, seconds=args.seconds)
    return settings


def clone(args: argparse.Namespace) -> int:
    from voicedesk.core.audio.intake import load_prompt
    from voicedesk.core.clone import stock_profile
    from voicedesk.core.clone.fit import CHECK_TEXT, FitResult, fit_voice
    from voicedesk.core.clone.report import percent
    from voicedesk.core.clone.saving import saved_voice
    from voicedesk.core.clone.words import prompt_words, within_budget, words_within
    from voicedesk.core.engine import Engine
    from voicedesk.core.engine.voices import stock_voice_names
    from voicedesk.core.errors import InputError
    from voicedesk.core.library import VoiceLibrary
    from voicedesk.core.library.names import check_name

    settings = settings_from(args)
    name = check_name(args.name)
    stock_names = stock_voice_names()
    library = VoiceLibrary(reserved_names=stock_names)
    if name.lower() in {s.lower() for s in stock_names} or library.exists(name):  # fail before the slow part
        raise InputError(f"A voice named {name!r} already exists; choose another name with --name.")
    prompt = load_prompt(args.prompt)
    for notice in prompt.notices:
        print(f"Note: {notice}", file=sys.stderr)
    # Typed words are checked before the slow part; heard ones wait for the device (on the CPU, a long
    # prompt's start only).
    typed = prompt_words(prompt, args.transcript, args.language) if args.transcript.strip() else None

    started = time.perf_counter()
    engine = Engine.load(device=args.device)
    print(f"Fitting on {engine.device} ({engine.device_reason}).", file=sys.stderr)
    words = typed or prompt_words(prompt, "", args.language, within=words_within(engine.device))
    if words.notice:
        print(f"Note: {words.notice}", file=sys.stderr)
    elif words.heard:
        print(f"Heard: “{words.text}” (if that is wrong, give the words with --transcript).", file=sys.stderr)
    if words.part_notice:
        print(f"Note: {words.part_notice}", file=sys.stderr)
    settings = within_budget(settings, words)
    stock = engine.fit_basis()
    result: FitResult | None = None
    audio = prompt.audio_16k()
    job = fit_voice(engine.model, stock, audio, settings=settings, prompt_ids=words.ids, said_16k=words.part(audio),
                    graphs=engine.graphs, stock_profile=stock_profile.current(engine, CHECK_TEXT))
    try:
        for item in job:
            if isinstance(item, FitResult):
                result = item
            elif item.stage == "fitting":
                print(f"  step {item.step}/{item.total}  similarity {item.similarity:.2f}  "
                      f"about {item.eta_seconds:.0f} s left", file=sys.stderr)
            else:
                print(f"  {item.stage}…", file=sys.stderr)
    finally:
        job.close()  # on Ctrl-C, ends the fit now; nothing has been saved
    if result is None:
        raise RuntimeError("the fit ended without a result")
    library.save(saved_voice(name, result, prompt, args.language, words.transcript))
    report = result.report
    steps = f"{result.steps} fitting step{'' if result.steps == 1 else 's'}"
    print(f"Saved voice {name!r} ({steps}, {time.perf_counter() - started:.0f} s).")
    print(f"Similarity to the prompt: {percent(report.before)}% before, {percent(report.after)}% after.")
    if result.prompt_pitch_hz and abs(result.pitch.scale - 1) >= 0.01:
        print(f"Pitch: the recording speaks near {result.prompt_pitch_hz:.0f} Hz; the voice speaks "
              f"{'lower' if result.pitch.scale < 1 else 'higher'} than its starting voice to match "
              f"({replace(result.pitch, pace=1.0).describe()}).")  # the pace has its own line
    if result.pitch.pace != 1.0:
        print(f"Pace: the voice speaks {'faster' if result.pitch.pace > 1 else 'slower'} than its starting voice, "
              f"as the recording does (×{result.pitch.pace:.2f}).")
    if report.stock is not None and not report.stock_is_closer:
        print(report.stock_line())
    print(report.verdict)
    return 0
