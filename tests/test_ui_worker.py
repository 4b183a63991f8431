"""The worker thread: generator jobs with progress, results, failures, cancelling and shutdown."""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Generator, Iterator

import pytest
from PySide6.QtCore import QObject
from pytestqt.qtbot import QtBot

from voicedesk.core.errors import Cancelled, InputError
from voicedesk.ui.stall import StallMeter
from voicedesk.ui.worker import Job, Worker


class Recorder(QObject):
    """Collects one job's signals on the GUI thread, as a panel would."""

    def __init__(self, job: Job) -> None:
        super().__init__()
        self.events: list[tuple[str, object]] = []
        self.threads: set[int] = set()
        job.started.connect(self.on_started)
        job.progress.connect(self.on_progress)
        job.result.connect(self.on_result)
        job.failed.connect(self.on_failed)
        job.finished.connect(self.on_finished)

    def _add(self, kind: str, value: object = None) -> None:
        self.threads.add(threading.get_ident())
        self.events.append((kind, value))

    def on_started(self) -> None:
        self._add("started")

    def on_progress(self, item: object) -> None:
        self._add("progress", item)

    def on_result(self, value: object) -> None:
        self._add("result", value)

    def on_failed(self, exc: object) -> None:
        self._add("failed", exc)

    def on_finished(self) -> None:
        self._add("finished")

    def wait_finished(self, qtbot: QtBot, timeout: int = 5000) -> None:
        qtbot.waitUntil(lambda: "finished" in self.kinds(), timeout=timeout)

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.events]

    def value(self, kind: str) -> object:
        return next(value for k, value in self.events if k == kind)


@pytest.fixture
def worker(qtbot: QtBot) -> Iterator[Worker]:
    w = Worker()
    yield w
    assert w.shutdown(10_000)
    assert not w.running


def counting(n: int, ran_on: list[int]) -> Generator[int, None, str]:
    ran_on.append(threading.get_ident())
    yield from range(n)
    return f"counted {n}"


def test_progress_then_result_then_finished_on_the_gui_thread(worker: Worker, qtbot: QtBot) -> None:
    ran_on: list[int] = []
    job = worker.submit("count", lambda: counting(5, ran_on))
    events = Recorder(job)
    events.wait_finished(qtbot)
    assert events.kinds() == ["started", *["progress"] * 5, "result", "finished"]
    assert [v for k, v in events.events if k == "progress"] == [0, 1, 2, 3, 4]
    assert events.value("result") == "counted 5"
    assert ran_on and ran_on[0] != threading.get_ident()  # the work ran on the worker thread
    assert events.threads == {threading.get_ident()}  # the signals arrived on the GUI thread
    assert job.done and not worker.busy


def test_jobs_run_one_at_a_time_in_order_on_one_thread(worker: Worker, qtbot: QtBot) -> None:
    spans: list[tuple[str, float, float, int]] = []

    def timed(name: str) -> Generator[None, None, None]:
        start = time.perf_counter()
        for _ in range(3):
            time.sleep(0.02)
            yield None
        spans.append((name, start, time.perf_counter(), threading.get_ident()))

    jobs = [worker.submit(name, lambda name=name: timed(name)) for name in ("a", "b", "c")]
    with qtbot.waitSignal(jobs[-1].finished, timeout=5000):
        pass
    assert [s[0] for s in spans] == ["a", "b", "c"]
    assert spans[0][2] <= spans[1][1] and spans[1][2] <= spans[2][1]  # never overlapping
    assert len({s[3] for s in spans}) == 1


def test_a_background_job_yields_the_worker_to_jobs_submitted_meanwhile(worker: Worker, qtbot: QtBot) -> None:
    first_step = threading.Event()

    def background() -> Generator[int, None, str]:
        for step in range(40):
            first_step.set()
            time.sleep(0.02)
            yield step
        return "prepared"

    slow = worker.submit_background("prepare", background)
    slow_events = Recorder(slow)
    qtbot.waitUntil(first_step.is_set, timeout=5000)
    assert not worker.busy  # background work leaves the window's controls enabled
    urgent = worker.submit("speak", lambda: counting(1, []))
    with qtbot.waitSignal(urgent.finished, timeout=5000):
        pass
    assert not slow.done  # the urgent job did not wait for the 40 steps
    slow_events.wait_finished(qtbot)
    assert slow_events.value("result") == "prepared"
    assert slow_events.kinds() == ["started", *["progress"] * 40, "result", "finished"]


def test_a_background_job_cancels_between_steps(worker: Worker, qtbot: QtBot) -> None:
    closed = threading.Event()

    def endless() -> Generator[int, None, None]:
        try:
            while True:
                time.sleep(0.01)
                yield 0
        finally:
            closed.set()

    job = worker.submit_background("endless", endless)
    events = Recorder(job)
    qtbot.waitUntil(lambda: "progress" in events.kinds(), timeout=5000)
    job.cancel()
    events.wait_finished(qtbot)
    assert isinstance(events.value("failed"), Cancelled) and closed.is_set()


def test_failure_is_emitted_as_an_object_and_logged_and_the_worker_survives(
    worker: Worker, qtbot: QtBot, caplog: pytest.LogCaptureFixture
) -> None:
    def broken() -> Generator[int, None, None]:
        yield 1
        raise ValueError("bad tensor shape")

    caplog.set_level(logging.ERROR, logger="voicedesk.ui.worker")
    job = worker.submit("broken", broken)
    events = Recorder(job)
    events.wait_finished(qtbot)
    assert events.kinds() == ["started", "progress", "failed", "finished"]
    error = events.value("failed")
    assert isinstance(error, ValueError) and str(error) == "bad tensor shape"
    assert any("bad tensor shape" in (r.exc_text or "") or r.exc_info for r in caplog.records)

    after = worker.submit("after", lambda: counting(1, []))
    later = Recorder(after)
    later.wait_finished(qtbot)
    assert later.value("result") == "counted 1"


def test_user_errors_arrive_as_the_same_exception(worker: Worker, qtbot: QtBot) -> None:
    def refuses() -> Generator[None, None, None]:
        raise InputError("The prompt is silent; record again.")
        yield None

    job = worker.submit("refuses", refuses)
    events = Recorder(job)
    events.wait_finished(qtbot)
    error = events.value("failed")
    assert isinstance(error, InputError) and "record again" in str(error)


def test_cancel_stops_between_yields_and_runs_the_jobs_cleanup(worker: Worker, qtbot: QtBot) -> None:
    cleaned = threading.Event()
    steps: list[int] = []

    def endless() -> Generator[int, None, None]:
        try:
            i = 0
            while True:
                time.sleep(0.005)
                steps.append(i)
                yield i
                i += 1
        finally:
            cleaned.set()

    job = worker.submit("endless", endless)
    events = Recorder(job)
    with qtbot.waitSignal(job.progress, timeout=5000):
        pass
    job.cancel()
    events.wait_finished(qtbot)
    assert isinstance(events.value("failed"), Cancelled)
    assert "result" not in events.kinds()
    assert cleaned.is_set()
    count = len(steps)
    time.sleep(0.05)
    assert len(steps) == count  # nothing runs after the cancel


def test_a_queued_job_cancelled_before_it_starts_never_runs(worker: Worker, qtbot: QtBot) -> None:
    gate = threading.Event()

    def waits() -> Generator[None, None, None]:
        gate.wait(5)
        yield None

    called: list[bool] = []

    def never() -> Generator[None, None, None]:
        called.append(True)
        yield None

    first = worker.submit("first", waits)
    second = worker.submit("second", never)
    events = Recorder(second)
    second.cancel()
    gate.set()
    events.wait_finished(qtbot)
    assert not called
    assert events.kinds() == ["failed", "finished"]
    assert first.done


def test_shutdown_during_a_job_cancels_it_and_stops_the_thread(qtbot: QtBot) -> None:
    worker = Worker()
    cleaned = threading.Event()

    def long_job() -> Generator[None, None, None]:
        try:
            for _ in range(10_000):
                time.sleep(0.01)
                yield None
        finally:
            cleaned.set()

    job = worker.submit("long", long_job)
    with qtbot.waitSignal(job.progress, timeout=5000):
        pass
    began = time.perf_counter()
    assert worker.shutdown(5000)
    assert time.perf_counter() - began < 1.0
    assert not worker.running and cleaned.is_set() and job.cancelled
    with pytest.raises(RuntimeError):
        worker.submit("too late", long_job)


def test_an_unused_worker_starts_no_thread(qtbot: QtBot) -> None:
    worker = Worker()
    assert not worker.running
    assert worker.shutdown(1000)


def test_gui_stays_responsive_while_a_python_heavy_job_runs(worker: Worker, qtbot: QtBot) -> None:
    """Pure-Python work holds the GIL; the interpreter's switch interval must still let the GUI tick."""

    def busy() -> Generator[None, None, None]:
        # A fixed stretch of wall time, not a fixed amount of work: a fast machine would finish the
        # work before the meter could tick often enough to say anything.
        end = time.perf_counter() + 1.5
        while time.perf_counter() < end:
            total = 0
            for i in range(150_000):
                total += i * i
            yield None

    meter = StallMeter()
    meter.start()
    job = worker.submit("busy", busy)
    qtbot.waitUntil(lambda: job.done, timeout=30_000)
    worst = meter.stop()
    assert meter.ticks > 20, f"the GUI ticked only {meter.ticks} times in 1.5 s"
    assert worst < 100, f"the GUI thread stalled {worst:.0f} ms"


def test_emitting_signals_keeps_reference_counts_intact(qtbot: QtBot) -> None:
    """PySide6 6.12.0 dropped a reference to True on every emit (Python 3.11 then aborts)."""
    job = Job("probe", lambda: counting(0, []))
    events = Recorder(job)
    before = sys.getrefcount(True), sys.getrefcount(False)
    for _ in range(200):
        job.finished.emit()
    assert (sys.getrefcount(True), sys.getrefcount(False)) == before
    assert events.kinds().count("finished") == 200
