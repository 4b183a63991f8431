"""Test-wide setup: user data in a temporary VOICEDESK_HOME, Qt offscreen, no network."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(autouse=True)
def voicedesk_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test gets its own user data root; the converted-weights cache is shared across tests."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("VOICEDESK_HOME", str(home))
    shared_cache = tmp_path_factory.getbasetemp() / "shared-cache"
    shared_cache.mkdir(exist_ok=True)
    monkeypatch.setenv("VOICEDESK_CACHE", str(shared_cache))
    return home


@pytest.fixture
def models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty models folder in place of the repository's, and the stock list read afresh around the test."""
    from voicedesk.core import paths
    from voicedesk.core.engine import voices

    folder = tmp_path / "models"
    folder.mkdir()
    monkeypatch.setattr(paths, "portable_models_dir", lambda: folder)
    monkeypatch.setattr(paths, "bundled_models_dir", lambda: folder)
    voices._stock.cache_clear()
    yield folder
    voices._stock.cache_clear()


@pytest.fixture(autouse=True)
def no_dangling_qthreads(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fails any test that leaves a QThread running, then stops it so later tests are unaffected.

    Active only where a test module already imported Qt, so the core's tests never load it.
    """
    if "PySide6.QtCore" not in sys.modules:
        yield
        return
    from PySide6.QtCore import QThread

    started: list[QThread] = []
    original = QThread.start

    def recording_start(self: QThread, *args: object) -> None:
        started.append(self)
        original(self, *args)

    monkeypatch.setattr(QThread, "start", recording_start)
    yield
    running = [thread for thread in started if thread.isRunning()]
    for thread in running:
        thread.quit()
        thread.wait(10_000)
    if running:
        pytest.fail(f"the test left {len(running)} QThread(s) running: {[t.objectName() for t in running]}")


@pytest.fixture(scope="session")
def pulse_server() -> Iterator[object]:
    """A real PulseAudio server (virtual microphone `vmic` fed by sink `micfeed`; default sink `speaker`).

    PortAudio is restarted once the server is up, so it sees the server's devices; the first capture
    is made here because a fresh server takes a second or two to deliver its first block.
    """
    from audio_server import PulseServer

    if not PulseServer.available():
        pytest.fail("pulseaudio/pactl/pacat are missing; run tests/tools/install-system-deps.sh")
    server = PulseServer()
    server.start()
    previous = {key: os.environ.get(key) for key in server.env()}
    os.environ.update(server.env())
    try:
        from voicedesk.core.audio import devices
        from voicedesk.core.audio.recorder import Recorder

        devices.rescan()
        warm = Recorder(max_seconds=0.1)
        warm.start()
        warm.wait(15)
        warm.stop()
        yield server
    finally:
        for key, value in previous.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        server.stop()


@pytest.fixture(scope="session")
def cpu_engine(tmp_path_factory: pytest.TempPathFactory) -> object:
    """The real Kokoro engine on the CPU, loaded once per session (weights in the shared cache)."""
    from voicedesk.core.engine import Engine

    cache = tmp_path_factory.getbasetemp() / "shared-cache"
    cache.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VOICEDESK_CACHE", str(cache))
        patch.setenv("VOICEDESK_HOME", str(tmp_path_factory.mktemp("engine-home")))
        return Engine.load("cpu")
