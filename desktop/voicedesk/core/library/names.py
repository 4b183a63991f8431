"""Voice names: short, safe as file names on every OS, usable on the command line without quotes."""

from __future__ import annotations

import re
import unicodedata

from voicedesk.core.errors import InputError

MAX_NAME_LENGTH = 48
_VALID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_WINDOWS_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)), *(f"lpt{i}" for i in range(1, 10))}


def suggest_name(text: str) -> str:
    """A valid name close to `text` ("Grandma's voice!" -> "Grandmas-voice")."""
    ascii_text = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode("ascii")
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "-", ascii_text.replace("'", "")).strip("-._")
    cleaned = re.sub(r"-{2,}", "-", cleaned)[:MAX_NAME_LENGTH].rstrip("-._")
    if not cleaned or cleaned.split(".")[0].lower() in _WINDOWS_RESERVED:
        cleaned = f"voice-{cleaned}" if cleaned else "voice"
    return cleaned


def check_name(name: object) -> str:
    """Return `name` if it is a valid voice name; otherwise raise `InputError` with a suggestion."""
    if not isinstance(name, str) or not name.strip():
        raise InputError("A voice needs a name: letters, digits, '-', '_' or '.', e.g. 'anna-calm'.")
    problem = ""
    if len(name) > MAX_NAME_LENGTH:
        problem = f"is longer than {MAX_NAME_LENGTH} characters"
    elif not _VALID.fullmatch(name) or name.endswith("."):
        problem = "may only use letters, digits, '-', '_' and '.', starting with a letter or digit (no spaces)"
    elif name.split(".")[0].lower() in _WINDOWS_RESERVED:
        problem = "is reserved by Windows"
    if problem:
        shown = name if len(name) <= 60 else name[:57] + "..."
        raise InputError(f"The voice name {shown!r} {problem}; try {suggest_name(name)!r}.")
    return name
