"""A titled card: one step of the window's flow (Prompt, Clone, Speak, Takes & export)."""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QVBoxLayout, QWidget


class Card(QFrame):
    def __init__(self, step: str, title: str, hint: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setProperty("card", True)  # styled as a card (objectName is left for the panel's own name)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(16, 12, 16, 14)
        outer.setSpacing(10)
        head = QHBoxLayout()
        head.setSpacing(10)
        if step:
            badge = QLabel(step)
            badge.setObjectName("stepBadge")
            head.addWidget(badge)
        heading = QLabel(title)
        heading.setObjectName("cardTitle")
        head.addWidget(heading)
        if hint:
            sub = QLabel(hint)
            sub.setObjectName("cardHint")
            head.addWidget(sub)
        head.addStretch(1)
        self.header = head
        outer.addLayout(head)
        self.body = QVBoxLayout()
        self.body.setSpacing(8)
        outer.addLayout(self.body)
