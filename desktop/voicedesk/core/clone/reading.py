"""Lines for the speaker to read aloud while recording a prompt.

A prompt whose words are known clones closer (the fit compares the voice with it sound by sound), and the
double-click build has no transcriber: a line shown while recording is the words of the recording, unless
the speaker says something else (`words.words_of` drops a read line whose length cannot match).
"""

from __future__ import annotations

from collections.abc import Sequence

CHARS_PER_SECOND = 15.0  # an unhurried reading of everyday English, spaces and punctuation included
START_DELAY_S = 0.6  # the speaker starts a little after the recording does, and must end before it stops
# A line that fills at least this share of the time is shown alone: a prompt with ~2.5 s of speech clones closer
# than one with ~2 s (gap closed 0.65 against 0.58 over seven runs each; clone-dev.md, sweep 31).
FILL = 0.75
MIN_CHOICE = 5  # ... when there are at least this many such lines, so that "Another line" has somewhere to go


def reading_seconds(text: str) -> float:
    """About how long reading `text` aloud takes."""
    return len(text) / CHARS_PER_SECOND


def passage(lines: Sequence[str], seconds: float, turn: int = 0) -> str:
    """Lines to read in a recording of `seconds`: the `turn`-th of the lines that alone fill most of it (`FILL`),
    in file order, where there are a few (`MIN_CHOICE`); else from the `turn`-th line on (wrapping around) each
    line that still fits in the time left, one pass; the shortest line when none fits (a very short recording)."""
    if not lines:
        return ""
    budget = seconds - START_DELAY_S
    filling = [line for line in lines if FILL * budget <= reading_seconds(line) <= budget]
    if len(filling) >= MIN_CHOICE:
        return filling[turn % len(filling)]
    chosen: list[str] = []
    start = turn % len(lines)
    for line in (*lines[start:], *lines[:start]):
        if reading_seconds(" ".join([*chosen, line])) <= budget:
            chosen.append(line)
    return " ".join(chosen) if chosen else min(lines, key=len)


def next_turn(lines: Sequence[str], seconds: float, turn: int) -> int:
    """The turn after `turn` whose passage differs from it (a "another line" button): skips the lines that
    start no new passage (those too long to open one in `seconds`)."""
    current = passage(lines, seconds, turn)
    for step in range(1, len(lines) + 1):
        if passage(lines, seconds, turn + step) != current:
            return turn + step
    return turn + 1
