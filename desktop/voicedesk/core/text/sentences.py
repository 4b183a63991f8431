"""Sentence splitting and length-bounded splitting, linear in the text's length.

Boundaries: `.!?…` followed by whitespace (not after a title such as "Dr." or an initial), CJK
sentence ends (`。！？`) wherever they are, and blank lines. Over-long pieces are cut at a comma-like
mark, else at whitespace, else anywhere: a 5 000-character word still ends up in bounded pieces.
"""

from __future__ import annotations

import re

_BOUNDARY = re.compile(
    r"[。！？]+[」』）】”’\"')]*"  # CJK sentence end: no space needed after it
    r"|[.!?…]+[”’\"')\]]*(?=\s|$)"  # Latin sentence end: must be followed by whitespace
    r"|\n[ \t\r\f\v]*\n"  # blank line: a paragraph break
)
# A period after these (or after a lone capital initial) does not end the sentence.
_NO_BREAK_AFTER = frozenset(
    {"mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "mt", "ft", "vs", "fig", "vol", "ch", "pp", "gen", "gov"}
    | {"sen", "rep", "capt", "lt", "col", "sgt", "rev", "hon", "pres", "e.g", "i.e", "cf", "approx", "dept"}
    | {"univ", "inc", "ltd", "corp", "co", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept"}
    | {"oct", "nov", "dec"}
)
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")
_SOFT_MARKS = ",;:、，；：—–"


def split_sentences(text: str) -> list[str]:
    """Sentences of `text`, stripped, without empty ones; their concatenation keeps every word."""
    out: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        if match.group().startswith(".") and not _ends_sentence(text, match.start(), match.end()):
            continue
        _append(out, text[start : match.end()])
        start = match.end()
    _append(out, text[start:])
    return out


def _ends_sentence(text: str, dot: int, after: int) -> bool:
    if after - dot > 1:  # "..." or ".)" end a sentence
        return True
    word = _WORD_BEFORE.search(text, max(0, dot - 12), dot)
    if word is None:
        return True
    name = word.group(1)
    if len(name) == 1 and name.isupper():  # an initial: "J. K. Rowling"
        return False
    return name.lower() not in _NO_BREAK_AFTER


def _append(out: list[str], piece: str) -> None:
    piece = piece.strip()
    if piece:
        out.append(piece)


def split_long(text: str, max_chars: int) -> list[str]:
    """`text` in pieces of at most `max_chars` characters, cut at the latest comma-like mark, else
    whitespace, in each window (not before a third of it), else hard at `max_chars`."""
    if max_chars < 3:
        raise ValueError("max_chars must be at least 3")
    out: list[str] = []
    start, end = 0, len(text)
    while end - start > max_chars:
        limit = start + max_chars
        floor = start + max_chars // 3
        cut = max((text.rfind(mark, floor, limit) for mark in _SOFT_MARKS), default=-1)
        if cut >= 0:
            cut += 1  # keep the mark with the left piece
        else:
            space = _last_space(text, floor, limit)
            cut = space if space > 0 else limit
        _append(out, text[start:cut])
        start = cut
    _append(out, text[start:end])
    return out


def halve(text: str) -> tuple[str, str]:
    """Two non-empty pieces of `text` (at least 2 characters), cut near the middle at a comma-like
    mark, else whitespace, else exactly in the middle."""
    middle = len(text) // 2
    for marks in (_SOFT_MARKS, None):
        cut = _nearest(text, middle, marks)
        if cut is not None:
            left, right = text[:cut].strip(), text[cut:].strip()
            if left and right:
                return left, right
    return text[:middle], text[middle:]


def _nearest(text: str, middle: int, marks: str | None) -> int | None:
    best: int | None = None
    for i, char in enumerate(text):
        hit = char in marks if marks is not None else char.isspace()
        if hit and 0 < i + 1 < len(text) and (best is None or abs(i + 1 - middle) < abs(best - middle)):
            best = i + 1
    return best


def _last_space(text: str, floor: int, limit: int) -> int:
    for i in range(limit - 1, floor - 1, -1):
        if text[i].isspace():
            return i
    return -1
