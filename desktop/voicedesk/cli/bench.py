"""`voicedesk bench`: time synthesis, first audio, cloning and model loading on this machine.

Progress goes to stderr; the result to stdout as a table, or with `--json` as one JSON object.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("bench", help="measure how fast VoiceDesk speaks, clones and loads here")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per measurement (median; default 3)")
    parser.add_argument("--quick", action="store_true",
                        help="a short run: shorter paragraph, one clone step, no cold load")
    parser.add_argument("--prompt", type=Path,
                        help="a recording to clone (a .wav needs no extra libraries; default: the sample prompt)")
    parser.add_argument("--transcript", default="",
                        help="what the prompt says, in English (default: what the transcriber hears, if installed)")
    parser.set_defaults(handler=bench)


def _finite(value: Any) -> Any:
    """JSON has no NaN or infinity: write them as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def bench(args: argparse.Namespace) -> int:
    from voicedesk.core.bench.run import BenchSettings, format_table, run_bench
    from voicedesk.core.errors import InputError

    if not 1 <= args.repeats <= 100:
        raise InputError("--repeats must be between 1 and 100.")
    settings = BenchSettings(device=args.device, repeats=args.repeats, quick=args.quick, prompt=args.prompt,
                             transcript=args.transcript)
    result = run_bench(settings, progress=lambda line: print(line, file=sys.stderr, flush=True))
    if args.json:
        print(json.dumps(_finite(result), indent=2))
    else:
        print(format_table(result))
    return 0
