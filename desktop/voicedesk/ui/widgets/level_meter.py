"""A horizontal input level meter: peak level in dBFS, green to amber to red."""

from __future__ import annotations

import math

from PySide6.QtCore import QRectF, QSize
from PySide6.QtGui import QColor, QLinearGradient, QPainter, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

FLOOR_DB = -60.0


class LevelMeter(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("levelMeter")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._fraction = 0.0
        self.setToolTip("Input level")

    def sizeHint(self) -> QSize:
        return QSize(160, 10)

    def minimumSizeHint(self) -> QSize:
        return QSize(60, 10)

    def set_peak(self, peak: float) -> None:
        """`peak` is the block's largest absolute sample (1.0 = full scale)."""
        db = 20 * math.log10(peak) if peak > 0 else FLOOR_DB
        self._fraction = min(1.0, max(0.0, (db - FLOOR_DB) / -FLOOR_DB))
        self.update()

    @property
    def fraction(self) -> float:
        return self._fraction

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        r = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        p.setPen(QColor(0, 0, 0, 0))
        p.setBrush(self.palette().base())
        p.drawRoundedRect(r, 4, 4)
        if self._fraction <= 0:
            return
        grad = QLinearGradient(r.topLeft(), r.topRight())
        grad.setColorAt(0.0, QColor("#3fb27f"))
        grad.setColorAt(0.75, QColor("#e8c33d"))
        grad.setColorAt(1.0, QColor("#e0524a"))
        p.setBrush(grad)
        p.drawRoundedRect(QRectF(r.left(), r.top(), r.width() * self._fraction, r.height()), 4, 4)
