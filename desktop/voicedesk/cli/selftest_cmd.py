"""`voicedesk self-test` (frozen: `VoiceDesk --self-test`): prove that this installation works.

Runs the core self-test (engine, every language front end, a short clone of the bundled sample
prompt, a spoken sentence written to a wav), then builds the main window offscreen or on screen,
so that a missing Qt plugin or library fails here and not on a user's desktop. Prints one JSON
summary on stdout (progress goes to stderr); exit 0 when everything passed, 1 otherwise, with the
failed step, the error and its trace.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from voicedesk.core.atomic import atomic_write_json


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "self-test",
        help="check that the engine, cloning, speech and the window work here; prints a JSON summary",
    )
    parser.add_argument("--steps", type=int, default=3, help="style-fit steps for the test clone (default 3)")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument(
        "--out", type=Path, default=None, help="folder for the spoken wav (default: a new temporary folder)"
    )
    parser.add_argument("--report", type=Path, default=None, help="also write the JSON summary to this file")
    parser.add_argument("--no-gui", action="store_true", help="skip building the window")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from voicedesk.core.selftest import SelfTestFailed, SelfTestSettings, run_self_test

    if args.steps < 1:
        print("Error: --steps must be at least 1.", file=sys.stderr)
        return 2
    out_dir = args.out or Path(tempfile.mkdtemp(prefix="voicedesk-self-test-"))
    settings = SelfTestSettings(out_dir=out_dir, steps=args.steps, device=args.device)
    try:
        summary = run_self_test(settings, report=_progress)
        if not args.no_gui:
            _progress("window")
            started = time.perf_counter()
            summary["gui"] = check_window()
            summary["timings_s"]["window"] = round(time.perf_counter() - started, 3)
    except SelfTestFailed as exc:
        summary = exc.summary
        _trace(exc.__cause__ or exc)
    except Exception as exc:  # noqa: BLE001 - the window check: report it like a core step
        summary["ok"] = False
        summary["failed_step"] = "window"
        summary["error"] = f"{type(exc).__name__}: {exc}"
        _trace(exc)
    _emit(summary, args.report)
    if not summary["ok"]:
        _say(f"SELF-TEST FAILED at step {summary.get('failed_step')!r}: {summary.get('error')}")
        return 1
    return 0


def check_window() -> dict[str, Any]:
    """Build and show the main window once (no engine load), then close it; Qt facts for the summary."""
    import PySide6
    from PySide6.QtCore import qVersion

    from voicedesk.ui.app import create_application
    from voicedesk.ui.main_window import MainWindow

    app = create_application()
    window = MainWindow(device="cpu")
    try:
        window.show()
        app.processEvents()
        if not window.isVisible():
            raise RuntimeError("the main window did not become visible")
        title = window.windowTitle()
    finally:
        window.close()
        app.processEvents()
    return {"qt": qVersion(), "pyside6": PySide6.__version__, "platform": app.platformName(), "title": title}


def _progress(step: str) -> None:
    _say(f"self-test: {step}…")


def _say(line: str) -> None:
    # A windowed Windows executable has no console: stdout and stderr are None there.
    if sys.stderr is not None:
        print(line, file=sys.stderr, flush=True)


def _trace(exc: BaseException) -> None:
    if sys.stderr is not None:
        traceback.print_exception(exc, file=sys.stderr)


def _emit(summary: dict[str, Any], report: Path | None) -> None:
    if report is not None:
        atomic_write_json(report, summary)
    if sys.stdout is not None:
        print(json.dumps(summary, indent=2, ensure_ascii=False), flush=True)
