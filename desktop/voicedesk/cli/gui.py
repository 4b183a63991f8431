"""`voicedesk gui` (also `voicedesk` with no command): open the window. Qt is imported only here."""

from __future__ import annotations

import argparse
import time
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("gui", help="open the VoiceDesk window (the default)")
    parser.add_argument(
        "--device",
        choices=("auto", "cpu", "cuda"),
        default=None,
        help="where the voice engine runs (default: the window's setting, initially auto)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    from voicedesk.ui.app import run as run_window

    return run_window(device=args.device, started_at=started)
