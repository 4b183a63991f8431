"""One long-lived worker thread that runs every piece of model work, one job at a time.

Model work (loading the engine, fitting a voice, synthesizing) must not run on the GUI thread, and
must not run twice at once (one model, one device). So there is exactly one `Worker`: a QObject moved
to a QThread. A job is a *generator factory* from the core: the worker calls it on its own thread and
iterates the generator, checking for cancellation between items. Python threads cannot be killed, so
cancelling is cooperative: the job stops at its next `yield` (`generator.close()` runs its cleanup).

Every job reports through the same fixed signal set, emitted on its `Job` handle:
`started()`, `progress(item)` for each yielded item, `result(value)` with the generator's return value,
`failed(exception)` (the exception object, never raised out of the thread; a cancel fails with
`Cancelled`), and `finished()` always last. Receivers are GUI-thread QObjects, so Qt queues the calls.

A *background* job (`submit_background`) is work nobody waits for (preparing GPU graphs): the worker
runs one of its steps at a time, each as its own event, so a job submitted meanwhile runs after the
current step instead of after the whole background job.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Generator
from typing import Any

from PySide6.QtCore import QObject, Qt, QThread, Signal, Slot

from voicedesk.core.errors import Cancelled

log = logging.getLogger(__name__)

JobFactory = Callable[[], Generator[Any, None, Any]]
GIL_SWITCH_INTERVAL_S = 0.001  # how long a thread holding the GIL keeps it while another waits


class Job(QObject):
    """Handle to one submitted job. Lives on the GUI thread; the worker emits its signals."""

    started = Signal()
    progress = Signal(object)
    result = Signal(object)
    failed = Signal(object)
    finished = Signal()

    def __init__(self, name: str, factory: JobFactory, background: bool = False) -> None:
        super().__init__()
        self.name = name
        self.factory = factory
        self.background = background
        self._cancel = threading.Event()
        self._done = threading.Event()

    def cancel(self) -> None:
        """Ask the job to stop at its next step; it then fails with `Cancelled`."""
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def __repr__(self) -> str:
        return f"<Job {self.name}>"


class _Runner(QObject):
    """The object that lives on the worker thread and runs jobs in the order they were submitted."""

    run_requested = Signal(object)
    step_requested = Signal(object, object)  # a background job and its generator

    def __init__(self) -> None:
        super().__init__()
        self.run_requested.connect(self.run)
        # Queued even though sender and receiver share the thread: each step is a new event, behind
        # the jobs submitted meanwhile.
        self.step_requested.connect(self.step, Qt.ConnectionType.QueuedConnection)

    @Slot(object)
    def run(self, job: Job) -> None:
        generator = None
        try:
            if job.cancelled:
                raise Cancelled()
            job.started.emit()
            generator = job.factory()
            if job.background:
                self.step_requested.emit(job, generator)
                return
            value = _drive(generator, job)
        except BaseException as exc:  # noqa: BLE001 - nothing may escape the thread; the GUI decides
            _end(job, generator, exc)
        else:
            _end(job, generator, None, value)

    @Slot(object, object)
    def step(self, job: Job, generator: Generator[Any, None, Any]) -> None:
        """One item of a background job, then the next step queued behind whatever came meanwhile."""
        try:
            if job.cancelled:
                raise Cancelled()
            item = next(generator)
        except StopIteration as stop:
            _end(job, generator, None, stop.value)
        except BaseException as exc:  # noqa: BLE001 - as in `run`
            _end(job, generator, exc)
        else:
            job.progress.emit(item)
            self.step_requested.emit(job, generator)


def _end(job: Job, generator: Generator[Any, None, Any] | None, exc: BaseException | None, value: Any = None) -> None:
    """Close the job's generator (its cleanup runs now when cancelled or failed between yields), then
    emit the outcome and `finished`."""
    try:
        if generator is not None:
            generator.close()
    except BaseException as close_exc:  # noqa: BLE001 - a cleanup that fails is the job's failure
        exc = exc or close_exc
    if isinstance(exc, Cancelled):
        log.info("job %s cancelled", job.name)
        job.failed.emit(exc)
    elif exc is not None:
        log.error("job %s failed", job.name, exc_info=exc)
        job.failed.emit(exc)
    else:
        job.result.emit(value)
    job._done.set()
    job.finished.emit()


def _drive(generator: Generator[Any, None, Any], job: Job) -> Any:
    """Iterate `generator`, emitting each item as progress, until it returns or `job` is cancelled."""
    while True:
        if job.cancelled:
            raise Cancelled()
        try:
            item = next(generator)
        except StopIteration as stop:
            return stop.value
        job.progress.emit(item)


class Worker(QObject):
    """Owns the worker thread. Create once per window; call `shutdown()` before the window goes."""

    _dispatch = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        # Jobs reach the worker thread via the GUI's event loop, so the caller of `submit` has
        # connected to the job's signals before the job can emit any (a signal emitted with no
        # receiver connected is lost).
        self._dispatch.connect(self._forward, Qt.ConnectionType.QueuedConnection)
        self._thread = QThread()
        self._thread.setObjectName("voicedesk-worker")
        self._runner = _Runner()
        self._runner.moveToThread(self._thread)
        self._jobs: list[Job] = []
        self._shut = False  # the thread starts with the first job and never restarts after shutdown

    def submit(self, name: str, factory: JobFactory) -> Job:
        """Queue `factory` to run on the worker thread after the jobs already queued.

        Connect to the returned job's signals right away: the job starts only once the GUI's event
        loop runs again, so no signal is emitted before then.
        """
        return self._queue(Job(name, factory))

    def submit_background(self, name: str, factory: JobFactory) -> Job:
        """Queue `factory` as background work: its steps run one at a time while no other job waits,
        and it does not count as `busy`. Cancel it like any job."""
        return self._queue(Job(name, factory, background=True))

    def _queue(self, job: Job) -> Job:
        if self._shut:
            raise RuntimeError("the worker has been shut down")
        if not self._thread.isRunning():
            # A job's pure-Python stretches hold the GIL; at the default 5 ms switch interval the GUI thread
            # was measured waiting 50-465 ms for it (ticks of a 10 ms timer), at 1 ms under 10 ms.
            sys.setswitchinterval(min(sys.getswitchinterval(), GIL_SWITCH_INTERVAL_S))
            self._thread.start()
        self._jobs = [j for j in self._jobs if not j.done]
        self._jobs.append(job)
        self._dispatch.emit(job)
        return job

    @Slot(object)
    def _forward(self, job: Job) -> None:
        if self._shut:  # shut down while the job waited in the GUI's queue
            job._done.set()
            return
        self._runner.run_requested.emit(job)

    @property
    def busy(self) -> bool:
        return any(not job.done and not job.background for job in self._jobs)

    def cancel_all(self) -> None:
        for job in self._jobs:
            job.cancel()

    def shutdown(self, timeout_ms: int | None = None) -> bool:
        """Cancel every job, stop the thread and wait for it (by default for as long as it takes).

        A job stops at its next yield; one long step (loading weights) is waited for, because a
        QThread destroyed while running aborts the process. Returns False if `timeout_ms` passed first.
        """
        self._shut = True
        self.cancel_all()
        self._thread.quit()
        stopped = bool(self._thread.wait() if timeout_ms is None else self._thread.wait(timeout_ms))
        if not stopped:
            log.error("worker thread still running %d ms after shutdown", timeout_ms)
        return stopped

    @property
    def running(self) -> bool:
        return bool(self._thread.isRunning())
