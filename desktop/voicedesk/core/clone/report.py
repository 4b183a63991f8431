"""The quality report shown for every clone: similarity to the prompt before and after fitting.

Both numbers come from the independent judge (cosine of d-vectors). Calibration on the development
voices: two recordings of one speaker score 0.80-0.94, different speakers 0.1-0.6; the verdict's
bands follow that.
"""

from __future__ import annotations

from dataclasses import dataclass

# (lowest similarity, words) from best to worst.
VERDICTS: tuple[tuple[float, str], ...] = (
    (0.75, "Very close to the prompt's voice."),
    (0.60, "Clearly resembles the prompt's voice."),
    (0.45, "Somewhat like the prompt's voice; a longer, cleaner recording may help."),
    (-1.0, "Not much like the prompt's voice; try a clearer recording of 3-10 s of speech."),
)


def percent(similarity: float) -> int:
    return round(100 * min(1.0, max(0.0, similarity)))


def verdict(similarity: float) -> str:
    return next(words for floor, words in VERDICTS if similarity >= floor)


@dataclass(frozen=True)
class QualityReport:
    """Judge similarity to the prompt of the starting voice (`before`) and the fitted one (`after`)."""

    before: float
    after: float

    @property
    def verdict(self) -> str:
        return verdict(self.after)

    def summary(self) -> str:
        return (
            f"Similarity to the prompt: {percent(self.before)}% before, {percent(self.after)}% after. "
            f"{self.verdict}"
        )
