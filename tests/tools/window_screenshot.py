"""Take docs/screenshot.png: the real window under Xvfb, after a real prompt → clone → speak.

    python tests/tools/window_screenshot.py [OUT.png] [--steps N]

Starts its own Xvfb (via -displayfd, so it never collides with another display) and a throwaway
VOICEDESK_HOME, speaks a prompt with espeak-ng's MBROLA voice mb-us1, clones it on the CPU, speaks a
line, and grabs the window.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROMPT_TEXT = "The weather was lovely, so we walked down to the harbour and watched the boats."
LINE = "Welcome back to the channel. Today we are building a cabin in the woods."


def start_xvfb() -> tuple[subprocess.Popen[bytes], str]:
    read_fd, write_fd = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1400x960x24", "-nolisten", "tcp"],
        pass_fds=(write_fd,),
    )
    os.close(write_fd)
    with os.fdopen(read_fd) as pipe:
        display = pipe.readline().strip()
    if not display:
        raise RuntimeError("Xvfb did not report a display")
    return xvfb, f":{display}"


def wait_for(condition, app, timeout: float) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the window did not get there in time")
        app.processEvents()
        time.sleep(0.02)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", nargs="?", default=str(ROOT / "docs" / "screenshot.png"))
    parser.add_argument("--steps", type=int, default=6)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="vd-shot-"))
    os.environ["VOICEDESK_HOME"] = str(home)
    os.environ["QT_QPA_PLATFORM"] = "xcb"
    xvfb, display = start_xvfb()
    os.environ["DISPLAY"] = display
    try:
        prompt = home / "anna.wav"
        subprocess.run(["espeak-ng", "-v", "mb-us1", "-w", str(prompt), PROMPT_TEXT], check=True)

        from voicedesk.ui.app import create_application
        from voicedesk.ui.main_window import MainWindow

        app = create_application()
        window = MainWindow(device="cpu")
        window.resize(1320, 860)
        window.show()
        window.start_engine()
        wait_for(lambda: window.context.engine is not None and not window.context.busy, app, 600)
        window.prompt.import_file(prompt)
        window.prompt.waveform.set_selection(0.1, window.prompt.waveform.duration - 0.2)
        wait_for(lambda: window.prompt.prompt is not None, app, 10)
        window.clone.name_edit.setText("anna")
        window.clone.steps = args.steps
        window.clone.start()
        wait_for(lambda: window.clone.job is None, app, 900)
        window.speak.text.setPlainText(LINE)
        window.speak.speak()
        wait_for(lambda: window.speak.job is None, app, 300)
        window.speak.text.setPlainText(LINE + " First, the foundations.")
        for _ in range(30):
            app.processEvents()
            time.sleep(0.02)
        window.grab().save(args.out)
        print(f"saved {args.out}")
        window.close()
        return 0
    finally:
        xvfb.terminate()
        xvfb.wait(10)


if __name__ == "__main__":
    sys.exit(main())
