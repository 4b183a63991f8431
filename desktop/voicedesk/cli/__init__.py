"""The `voicedesk` command line. With no command it opens the window (Qt is imported only then).

Each command lives in its own module here and exposes `register(subparsers)`, which adds its parser
and sets `handler` (a function taking the parsed arguments and returning an exit code).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from voicedesk import __version__
from voicedesk.core.errors import Cancelled, VoiceDeskError
from voicedesk.core.logs import setup_logging

# Modules under voicedesk.cli, each one command (or a group of subcommands).
COMMAND_MODULES: tuple[str, ...] = ("gui", "voices_cmd", "selftest_cmd", "doctor", "say", "clone_cmd", "bench")

log = logging.getLogger("voicedesk.cli")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="voicedesk",
        description="Clone a voice locally and speak any line in it. With no command, opens the window.",
    )
    parser.add_argument("--version", action="version", version=f"VoiceDesk {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"voicedesk.cli.{name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    log_path = setup_logging()
    parser = build_parser()
    args = parser.parse_args(args_list or ["gui"])
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        return int(handler(args))
    except Cancelled as exc:
        print(str(exc), file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("Cancelled; nothing was saved.", file=sys.stderr)
        return 130
    except VoiceDeskError as exc:
        log.info("command %s failed: %s", args.command, exc)
        print(f"Error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - the last line of defence: a sentence, not a traceback
        log.exception("unexpected failure in %s", args.command)
        print(
            f"Error: VoiceDesk hit an unexpected problem ({type(exc).__name__}: {exc}). "
            f"Details are in {log_path}; please include that file in a bug report.",
            file=sys.stderr,
        )
        return 1
