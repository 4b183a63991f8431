"""A waveform view of the prompt with two trim handles that pick the part used for cloning."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QLineF, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent, QPen, QPixmap, QResizeEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

HANDLE_GRAB_PX = 8
MIN_SELECTION_S = 0.25


class WaveformView(QWidget):
    """Shows mono samples as a min/max envelope; the user drags the handles to trim both ends."""

    selection_changed = Signal(float, float)  # start and end, in seconds

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("waveform")
        self.setMinimumHeight(96)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMouseTracking(True)
        self._samples = np.zeros(0, dtype=np.float32)
        self._rate = 24000
        self._start = 0.0
        self._end = 0.0
        self._dragging: str | None = None
        self._envelope: tuple[np.ndarray, np.ndarray] | None = None
        self._trace: QPixmap | None = None  # the drawn waveform, redrawn only on resize or new audio
        self._playhead: float | None = None
        self.placeholder = "Record or drop a 3-second clip of the voice to clone"

    def sizeHint(self) -> QSize:
        return QSize(480, 120)

    # --- data ---------------------------------------------------------------------------------------
    def set_audio(self, samples: np.ndarray | None, sample_rate: int) -> None:
        self._samples = np.zeros(0, np.float32) if samples is None else np.asarray(samples, np.float32)
        self._rate = sample_rate
        self._start, self._end = 0.0, self.duration
        self._envelope = None
        self._trace = None
        self._playhead = None
        self.update()
        self.selection_changed.emit(self._start, self._end)

    @property
    def duration(self) -> float:
        return len(self._samples) / self._rate if self._rate else 0.0

    def selection(self) -> tuple[float, float]:
        return self._start, self._end

    def set_selection(self, start: float, end: float) -> None:
        start = min(max(0.0, start), self.duration)
        end = min(max(start, end), self.duration)
        if (start, end) != (self._start, self._end):
            self._start, self._end = start, end
            self.update()
            self.selection_changed.emit(start, end)

    def set_playhead(self, seconds: float | None) -> None:
        self._playhead = seconds
        self.update()

    # --- geometry -----------------------------------------------------------------------------------
    def _plot_rect(self) -> QRectF:
        return QRectF(self.rect()).adjusted(6, 6, -6, -6)

    def _x_of(self, seconds: float) -> float:
        r = self._plot_rect()
        return r.left() + (seconds / self.duration) * r.width() if self.duration else r.left()

    def _seconds_at(self, x: float) -> float:
        r = self._plot_rect()
        return 0.0 if r.width() <= 0 else (x - r.left()) / r.width() * self.duration

    def _envelope_for(self, columns: int) -> tuple[np.ndarray, np.ndarray]:
        """Lowest and highest sample under each pixel column."""
        if self._envelope is None or len(self._envelope[0]) != columns:
            edges = np.linspace(0, len(self._samples), columns + 1).astype(int)[:-1]
            edges = np.minimum(edges, len(self._samples) - 1)
            self._envelope = (
                np.minimum.reduceat(self._samples, edges),
                np.maximum.reduceat(self._samples, edges),
            )
        return self._envelope

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._envelope = None
        self._trace = None
        super().resizeEvent(event)

    # --- painting -----------------------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(pal.base())
        p.drawRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), 8, 8)
        r = self._plot_rect()
        if not self._samples.size:
            p.setPen(pal.placeholderText().color())
            p.drawText(r, Qt.AlignmentFlag.AlignCenter, self.placeholder)
            return
        if self._trace is None or self._trace.size() != self.size():
            self._trace = self._draw_trace()
        p.drawPixmap(0, 0, self._trace)
        mid = r.center().y()
        # Dim what the trim leaves out.
        x0, x1 = self._x_of(self._start), self._x_of(self._end)
        shade = QColor(pal.base().color())
        shade.setAlpha(190)
        p.fillRect(QRectF(r.left(), r.top(), x0 - r.left(), r.height()), shade)
        p.fillRect(QRectF(x1, r.top(), r.right() - x1, r.height()), shade)
        handle = QColor(pal.text().color())
        for x in (x0, x1):
            p.setPen(QPen(handle, 2))
            p.drawLine(QPointF(x, r.top()), QPointF(x, r.bottom()))
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(handle)
            p.drawRoundedRect(QRectF(x - 4, mid - 12, 8, 24), 3, 3)
        if self._playhead is not None:
            p.setPen(QPen(QColor("#e8a33d"), 1.5))
            xp = self._x_of(self._playhead)
            p.drawLine(QPointF(xp, r.top()), QPointF(xp, r.bottom()))

    def _draw_trace(self) -> QPixmap:
        """The envelope as one vertical line per pixel column, into a transparent pixmap."""
        pixmap = QPixmap(self.size())
        pixmap.fill(Qt.GlobalColor.transparent)
        r = self._plot_rect()
        columns = max(1, int(r.width()))
        lows, highs = self._envelope_for(columns)
        peak = max(float(np.abs(self._samples).max()), 1e-6)
        mid, half = r.center().y(), r.height() / 2 * 0.92
        tops = mid - highs / peak * half
        bottoms = mid - lows / peak * half + 0.5
        xs = r.left() + np.arange(columns) + 0.5
        lines = [QLineF(x, top, x, bottom) for x, top, bottom in zip(xs.tolist(), tops.tolist(), bottoms.tolist(), strict=True)]
        painter = QPainter(pixmap)
        painter.setPen(QPen(self.palette().highlight().color(), 1))
        painter.drawLines(lines)
        painter.end()
        return pixmap

    # --- dragging the handles -----------------------------------------------------------------------
    def _handle_near(self, x: float) -> str | None:
        d0, d1 = abs(x - self._x_of(self._start)), abs(x - self._x_of(self._end))
        if min(d0, d1) > HANDLE_GRAB_PX:
            return None
        return "start" if d0 <= d1 else "end"

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if self.duration and event.button() == Qt.MouseButton.LeftButton:
            self._dragging = self._handle_near(event.position().x())
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        x = event.position().x()
        if self._dragging is None:
            near = self.duration and self._handle_near(x)
            self.setCursor(Qt.CursorShape.SizeHorCursor if near else Qt.CursorShape.ArrowCursor)
            return
        t = self._seconds_at(x)
        if self._dragging == "start":
            self.set_selection(min(t, self._end - MIN_SELECTION_S), self._end)
        else:
            self.set_selection(self._start, max(t, self._start + MIN_SELECTION_S))

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        self._dragging = None
        super().mouseReleaseEvent(event)
