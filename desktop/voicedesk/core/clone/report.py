"""The quality report shown for every clone: similarity to the prompt before and after fitting, and of the
closest stock voice (a clone further from the prompt than a stock voice is not worth using, and the user is told).

Every number comes from the independent judge (cosine of d-vectors), each voice speaking the same sentence.
Calibration on the development voices: two recordings of one speaker score 0.80-0.94, different speakers
0.1-0.6; the verdict's bands follow that.
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
    """Judge similarity to the prompt of the starting voice (`before`), the fitted one (`after`) and the closest
    stock voice (`stock`, named `stock_voice`; None when the stock voices' profile is not built)."""

    before: float
    after: float
    stock_voice: str = ""
    stock: float | None = None

    @property
    def stock_is_closer(self) -> bool:
        return self.stock is not None and self.stock >= self.after

    @property
    def verdict(self) -> str:
        if self.stock_is_closer:
            return (f"The stock voice {self.stock_voice} is closer to the prompt ({percent(self.stock or 0)}%): "
                    "pick it in the voices list, or clone a longer, clearer recording.")
        return verdict(self.after)

    def stock_line(self) -> str:
        """"Closest stock voice: af_heart, 56%." ("" without the profile)."""
        return f"Closest stock voice: {self.stock_voice}, {percent(self.stock)}%." if self.stock is not None else ""

    def summary(self) -> str:
        closest = "" if self.stock_is_closer or self.stock is None else f" {self.stock_line()}"
        return (
            f"Similarity to the prompt: {percent(self.before)}% before, {percent(self.after)}% after. "
            f"{self.verdict}{closest}"
        )
