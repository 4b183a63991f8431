"""The desktop window: a thin PySide6 layer over `voicedesk.core` (imports Qt; the core never does)."""
