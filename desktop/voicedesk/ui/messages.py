"""Turning a failed job's exception into the sentence the user reads (the trace goes to the log)."""

from __future__ import annotations

from voicedesk.core import logs
from voicedesk.core.errors import Cancelled, VoiceDeskError


def user_message(exc: BaseException) -> str:
    if isinstance(exc, Cancelled):
        return str(exc)
    if isinstance(exc, VoiceDeskError):
        return str(exc)
    if isinstance(exc, MemoryError):
        return "Ran out of memory. Close other programs, or use a shorter text or prompt, and try again."
    return (
        f"Something unexpected went wrong ({type(exc).__name__}: {exc}). Try again; if it keeps "
        f"happening, send the log file with a bug report: {logs.log_file()}"
    )
