"""Entry point of the frozen app (`VoiceDesk`): the same command line as `voicedesk`.

A double-click starts it with no arguments, which opens the window. `VoiceDesk --self-test` is the
spelling the build scripts and users call for the headless smoke test; it maps to the `self-test`
command so the frozen and the source app share one implementation.
"""

from __future__ import annotations

import multiprocessing
import sys


def frozen_argv(args: list[str]) -> list[str]:
    """Translate launcher flags into commands (`--self-test ...` → `self-test ...`)."""
    if args[:1] == ["--self-test"]:
        return ["self-test", *args[1:]]
    return args


def run() -> int:
    # Windows starts child processes by re-running the executable; this keeps them from opening a window.
    multiprocessing.freeze_support()
    from voicedesk.cli import main

    return main(frozen_argv(sys.argv[1:]))


if __name__ == "__main__":
    sys.exit(run())
