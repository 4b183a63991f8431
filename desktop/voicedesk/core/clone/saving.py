"""Turn a finished fit into a library voice: its style, scores and the normalised prompt."""

from __future__ import annotations

from typing import Any

from voicedesk.core.clone.fit import FitResult
from voicedesk.core.library.voicefile import SavedVoice


def saved_voice(name: str, result: FitResult, prompt: Any, language: str = "en", transcript: str = "") -> SavedVoice:
    """A SavedVoice for `result`; `prompt` is the intake Prompt the fit was made from, `transcript`
    what it says (if the user gave it)."""
    return SavedVoice(
        name=name,
        style=result.style,
        prompt_audio=prompt.audio,
        prompt_rate=prompt.sample_rate,
        language=language,
        transcript=transcript.strip(),
        pitch=result.pitch,
        envelope=result.envelope,
        scores={
            "similarity_before": round(result.report.before, 4),
            "similarity_after": round(result.report.after, 4),
            "verdict": result.report.verdict,
            **({"closest_stock_voice": result.report.stock_voice, "closest_stock_similarity": round(result.report.stock, 4)}
               if result.report.stock is not None else {}),
            "steps": result.steps,
            "seconds": round(result.seconds, 1),
        },
    )
