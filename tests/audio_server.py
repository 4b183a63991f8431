"""A real PulseAudio server for tests: a null-sink speaker and a virtual microphone fed by a null sink.

Layout (as in the design notes): sink `speaker` (what VoiceDesk plays; capture `speaker.monitor`),
sink `micfeed` (what a test plays into) and source `vmic` on `micfeed.monitor` (what VoiceDesk
records). Defaults are `speaker` and `vmic`. The server runs in a fresh XDG_RUNTIME_DIR so it never
meets a desktop's own server; `env()` gives the variables a client needs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

RATE = 48000


class PulseServer:
    def __init__(self) -> None:
        self.runtime = Path(tempfile.mkdtemp(prefix="vd-pulse-"))
        self.runtime.chmod(0o700)
        self.socket = self.runtime / "pulse" / "native"
        self.started = False

    @staticmethod
    def available() -> bool:
        return all(shutil.which(tool) for tool in ("pulseaudio", "pactl", "pacat"))

    def env(self) -> dict[str, str]:
        """What a client needs to reach this server. ALSA's `default` device goes to PulseAudio only
        when it finds the server's runtime dir, hence XDG_RUNTIME_DIR as well as PULSE_SERVER."""
        return {"PULSE_SERVER": f"unix:{self.socket}", "XDG_RUNTIME_DIR": str(self.runtime)}

    def _server_env(self) -> dict[str, str]:
        # A private runtime dir and home keep the server away from any desktop session's server.
        return {**os.environ, "HOME": str(self.runtime), **self.env()}

    def _run(self, *args: str, timeout: float = 10) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(args), env=self._server_env(), capture_output=True, text=True, timeout=timeout)

    def start(self) -> None:
        result = self._run(
            "pulseaudio", "--daemonize=yes", "--exit-idle-time=-1", "--disallow-exit", "-n",
            "--use-pid-file=yes", "--log-target=stderr",
            "--load=module-native-protocol-unix auth-anonymous=1",
            "--load=module-null-sink sink_name=speaker rate=48000",
            "--load=module-null-sink sink_name=micfeed rate=48000",
            "--load=module-virtual-source source_name=vmic master=micfeed.monitor",
            "--load=module-always-sink",
        )
        if result.returncode != 0:
            raise RuntimeError(f"pulseaudio did not start: {result.stderr.strip()[-400:]}")
        deadline = time.monotonic() + 10
        while self._run("pactl", "info").returncode != 0:
            if time.monotonic() > deadline:
                raise RuntimeError("pulseaudio started but does not answer")
            time.sleep(0.1)
        for args in (("set-default-sink", "speaker"), ("set-default-source", "vmic")):
            self._run("pactl", *args).check_returncode()
        self.started = True

    def stop(self) -> None:
        if self.started:
            self._run("pulseaudio", "--kill")
            self.started = False
        shutil.rmtree(self.runtime, ignore_errors=True)

    # -- feeding and capturing -----------------------------------------------------------------
    def play_into(self, sink: str, audio: np.ndarray, rate: int = RATE) -> subprocess.Popen[bytes]:
        """Start playing mono float32 `audio` into `sink` (e.g. "micfeed"); returns the pacat process."""
        proc = subprocess.Popen(
            ["pacat", "--playback", f"--device={sink}", "--format=float32le", f"--rate={rate}",
             "--channels=1", "--latency-msec=20"],
            stdin=subprocess.PIPE, env=self._server_env(),
        )
        data = np.asarray(audio, "<f4").tobytes()

        def feed() -> None:  # pacat reads at playback speed: writing blocks, so not on the test's thread
            assert proc.stdin is not None
            try:
                proc.stdin.write(data)
                proc.stdin.close()
            except (BrokenPipeError, ValueError):
                pass  # pacat was stopped early

        threading.Thread(target=feed, daemon=True).start()
        return proc

    def capture(self, source: str, rate: int = RATE) -> Capture:
        """Start recording mono float32 from `source` (e.g. "speaker.monitor"); `.stop()` returns it."""
        return Capture(source, rate, self._server_env())

    def pactl(self, *args: str) -> str:
        result = self._run("pactl", *args)
        result.check_returncode()
        return result.stdout


class Capture:
    """parec reading a source in the background; its output is read as it comes (a pipe read only
    after parec is killed loses what parec still buffered)."""

    def __init__(self, source: str, rate: int, env: dict[str, str]) -> None:
        self.rate = rate
        self._proc = subprocess.Popen(
            ["parec", f"--device={source}", "--format=float32le", f"--rate={rate}", "--channels=1",
             "--latency-msec=10"],
            stdout=subprocess.PIPE, env=env,
        )
        self._data = bytearray()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for chunk in iter(lambda: self._proc.stdout.read1(65536), b""):  # type: ignore[union-attr]
            self._data.extend(chunk)

    @property
    def seconds(self) -> float:
        return len(self._data) / 4 / self.rate

    def stop(self) -> np.ndarray:
        self._proc.terminate()
        self._proc.wait(timeout=10)
        self._reader.join(timeout=10)
        usable = len(self._data) // 4 * 4
        return np.frombuffer(bytes(self._data[:usable]), dtype="<f4").copy()
