"""Logging to a rotating file in the user log folder; the user sees sentences, the log keeps traces."""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

from voicedesk.core import paths

LOG_NAME = "voicedesk.log"


def log_file() -> Path:
    return paths.log_dir() / LOG_NAME


def setup_logging(level: int = logging.INFO) -> Path:
    """Attach one rotating file handler to the `voicedesk` logger (idempotent)."""
    target = log_file()
    logger = logging.getLogger("voicedesk")
    logger.setLevel(level)
    for handler in logger.handlers:
        if isinstance(handler, logging.handlers.RotatingFileHandler) and Path(handler.baseFilename) == target:
            return target
    handler = logging.handlers.RotatingFileHandler(target, maxBytes=2_000_000, backupCount=3, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    return target
