"""Measures how responsive the GUI thread is: the longest gap between ticks of a 10 ms timer.

A timer on the event loop fires late when the loop is blocked (a slot that computes too long, or a
worker thread holding the GIL). The worst lateness during a job is what a user feels as a freeze.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, Qt, QTimer


class StallMeter(QObject):
    def __init__(self, interval_ms: int = 10, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.interval_ms = interval_ms
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._tick)
        self._last = 0.0
        self._began = 0.0
        self.worst_ms = 0.0
        self.ticks = 0
        self.stalls: list[tuple[float, float]] = []  # (seconds after start, ms) of each stall over 50 ms

    def start(self) -> None:
        self.worst_ms = 0.0
        self.ticks = 0
        self.stalls = []
        self._last = self._began = time.perf_counter()
        self._timer.start()

    def stop(self) -> float:
        """Stop measuring; returns the worst stall in ms (the longest gap minus the timer interval)."""
        self._timer.stop()
        return self.worst_ms

    @property
    def active(self) -> bool:
        return bool(self._timer.isActive())

    def _tick(self) -> None:
        now = time.perf_counter()
        gap_ms = (now - self._last) * 1000 - self.interval_ms
        self._last = now
        self.ticks += 1
        self.worst_ms = max(self.worst_ms, gap_ms)
        if gap_ms > 50:
            self.stalls.append((round(now - self._began - gap_ms / 1000, 2), round(gap_ms)))
