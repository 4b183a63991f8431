"""Turn a finished fit into a library voice: its style, scores and the normalised prompt."""

from __future__ import annotations

from typing import Any

from voicedesk.core.clone.fit import FitResult
from voicedesk.core.library.voicefile import SavedVoice


def saved_voice(name: str, result: FitResult, prompt: Any, language: str = "en") -> SavedVoice:
    """A SavedVoice for `result`; `prompt` is the intake Prompt the fit was made from."""
    return SavedVoice(
        name=name,
        style=result.style,
        prompt_audio=prompt.audio,
        prompt_rate=prompt.sample_rate,
        language=language,
        scores={
            "similarity_before": round(result.report.before, 4),
            "similarity_after": round(result.report.after, 4),
            "verdict": result.report.verdict,
            "steps": result.steps,
            "seconds": round(result.seconds, 1),
        },
    )
