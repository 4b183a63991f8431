"""Text cleanup shared by the language front ends: invisible characters out, and characters a front
end cannot read replaced by a space and reported (never dropped silently)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

_INVISIBLE = re.compile(
    r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff\ufe00-\ufe0f]"
)
_SAMPLES_SHOWN = 5
_SAMPLE_CHARS = 20


def remove_invisible(text: str) -> tuple[str, list[str]]:
    """Control characters, zero-width marks and variation selectors → removed (tabs and line breaks
    stay; they are whitespace). Returns the text and a notice when something was removed."""
    text = unicodedata.normalize("NFC", text)
    cleaned, count = _INVISIBLE.subn("", text)
    notices = [f"Ignored {count} invisible control character{'s' if count != 1 else ''}."] if count else []
    return cleaned, notices


def keep_speakable(text: str, speakable: Callable[[str], bool], language: str) -> tuple[str, list[str]]:
    """Each run of characters that `speakable` rejects becomes one space; the runs are reported in
    one notice (a few samples and a count), so the user learns what will not be heard."""
    kept: list[str] = []
    skipped: list[str] = []
    run: list[str] = []
    for char in text:
        if char.isspace() or speakable(char):
            if run:
                skipped.append("".join(run))
                run = []
                kept.append(" ")
            kept.append(char)
        else:
            run.append(char)
    if run:
        skipped.append("".join(run))
        kept.append(" ")
    return "".join(kept), ([skipped_notice(skipped, language)] if skipped else [])


def skipped_notice(skipped: list[str], language: str) -> str:
    distinct = list(dict.fromkeys(skipped))
    shown = ", ".join(f"“{_short(s)}”" for s in distinct[:_SAMPLES_SHOWN])
    more = f" and {len(distinct) - _SAMPLES_SHOWN} more" if len(distinct) > _SAMPLES_SHOWN else ""
    return f"Skipped {shown}{more}: no {language} reading for {'it' if len(skipped) == 1 else 'them'}."


def _short(text: str) -> str:
    return text if len(text) <= _SAMPLE_CHARS else text[:_SAMPLE_CHARS] + "…"
