"""The GPU status panel: a real widget offscreen, fed by the real probe (and by injected broken machines)."""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any

import pytest
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMainWindow
from pytestqt.qtbot import QtBot

from gpu_fakes import FakeNvml, FakeTorch, raising
from voicedesk.core.gpu import State, choose_device
from voicedesk.core.gpu.probe import probe
from voicedesk.core.gpu.selftest import SelfTestReport, self_test
from voicedesk.core.gpu.workloads import DecoderShapedStack
from voicedesk.ui.status_panel import STATE_COLOURS, StatusPanel, device_badge_text
from voicedesk.ui.worker import Worker


@pytest.fixture
def worker(qtbot: QtBot) -> Iterator[Worker]:
    w = Worker()
    yield w
    assert w.shutdown(30_000)


def tiny_self_test(device: str) -> Any:
    # The real harness on a small real workload: 50 ms of audio, one timed run per variant.
    def factory() -> Generator[str, None, SelfTestReport]:
        return self_test(DecoderShapedStack(0.05), device, warmup=0, repeats=1)

    return factory


def row(panel: StatusPanel, topic: str) -> tuple[str, str, str]:
    dot, _name, value = panel.rows[topic]
    return value.text(), str(dot.property("state")), dot.styleSheet()


def test_rows_on_this_machine_come_from_a_real_probe_on_the_worker(qtbot: QtBot, worker: Worker) -> None:
    panel = StatusPanel(run_job=worker.submit, self_test_factory=tiny_self_test)
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.choice_changed, timeout=60_000):
        pass  # the constructor already submitted the probe
    assert list(panel.rows) == ["driver", "gpu", "torch", "cuda", "cudnn", "check", "precision", "device"]
    assert row(panel, "driver") == ("not found", "warn", f"color: {STATE_COLOURS[State.WARN]};")
    assert row(panel, "torch")[1] == "ok"
    assert row(panel, "device")[0] == "cpu (no NVIDIA driver found)"
    assert "No NVIDIA driver found" in panel.advice.text()
    assert panel.self_test_button.isEnabled()

    # Run self-test: through the worker, results shown, and part of the copied report.
    panel.self_test_button.click()
    assert not panel.self_test_button.isEnabled()  # busy while it runs
    qtbot.waitUntil(lambda: panel.self_test is not None, timeout=60_000)
    qtbot.waitUntil(panel.self_test_button.isEnabled, timeout=5_000)
    shown = panel.self_test_view.toPlainText()
    assert "fp32" in shown and "RTF" in shown
    assert "apply only to an NVIDIA GPU" in shown

    panel.copy_button.click()
    copied = QGuiApplication.clipboard().text()
    assert copied.startswith("VoiceDesk GPU report")
    assert "No NVIDIA driver found" in copied
    assert "Self-test on" in copied


def test_failure_rows_are_red_and_advice_names_the_fix(qtbot: QtBot) -> None:
    error = RuntimeError("cuDNN error: CUDNN_STATUS_NOT_INITIALIZED")
    report = probe(FakeNvml(), FakeTorch(conv=raising(error, only_with_cudnn=True)))
    panel = StatusPanel()
    qtbot.addWidget(panel)
    panel.show_choice(choose_device("auto", report=report))
    value, state, style = row(panel, "cudnn")
    assert (value, state) == ("9.19.0, failed to run", "fail")
    assert style == f"color: {STATE_COLOURS[State.FAIL]};"
    assert row(panel, "driver")[1] == "ok"
    assert "LD_LIBRARY_PATH" in panel.advice.text()
    assert not panel.self_test_button.isEnabled()  # no worker given: nothing to run it on


def test_all_good_machine_and_the_badge(qtbot: QtBot) -> None:
    choice = choose_device("auto", report=probe(FakeNvml(), FakeTorch()))
    assert device_badge_text(choice) == "GPU · NVIDIA H200"
    window = QMainWindow()
    qtbot.addWidget(window)
    panel = StatusPanel(window)  # inside a main window: compact, a badge that opens the full panel
    assert panel.compact
    panel.show_choice(choice)
    assert panel.badge.text() == "GPU · NVIDIA H200"
    assert panel.badge.property("state") == "ok"
    assert all(row(panel, topic)[1] == "ok" for topic in panel.rows)
    panel.open_details()
    assert panel.details.isVisible()


def test_in_the_real_main_window_it_is_a_badge_that_probes_only_when_opened(qtbot: QtBot) -> None:
    from ui_support import close_window, open_window

    window = open_window(qtbot, engine=None)
    try:
        panel = window.status_panel
        assert isinstance(panel, StatusPanel) and panel.compact
        assert not window.context.busy  # nothing submitted at start-up: the engine's load goes first
        panel.open_details()
        with qtbot.waitSignal(panel.choice_changed, timeout=60_000):
            pass
        assert panel.details.isVisible()
        assert panel.badge.text() == "CPU · no NVIDIA driver found"
        assert panel.self_test_button.isEnabled()
    finally:
        close_window(window)


def test_badge_follows_the_loaded_engine(qtbot: QtBot, cpu_engine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from voicedesk.core.gpu import device

    panel = StatusPanel()
    qtbot.addWidget(panel)
    monkeypatch.setattr(device, "_cached", None)  # nothing probed yet: the engine's own words
    panel.show_engine(cpu_engine)
    assert panel.badge.text() == f"CPU · {cpu_engine.device_reason}"
    assert panel.choice is None
    # How speech is computed, with the reason (the precision trial's outcome) on hover.
    expected = "CPU, vocoder in bfloat16" if cpu_engine.model.vocoder_bf16 else "CPU, float32"
    assert row(panel, "speech")[0] == expected
    assert panel.rows["speech"][2].toolTip() == cpu_engine.device_reason

    report = probe()
    monkeypatch.setattr(device, "_cached", report)  # the engine's load probed: reuse that report
    panel.show_engine(cpu_engine)
    assert panel.choice is not None and panel.choice.report is report
    assert row(panel, "device")[0] == "cpu (no NVIDIA driver found)"
