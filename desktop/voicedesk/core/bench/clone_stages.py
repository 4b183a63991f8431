"""A clone timed by stage, from the progress its fit reports: what bounds a clone's time.

- `prepare_s`: from the start to the first fitting step (intake, the prompt's embedding, ranking the
  stock voices, the fitting pass's setup, CUDA graph capture where there is one, the start's check).
- `step_s`: the median fitting step (steps that also check the voice take longer; the median skips them).
- `finish_s`: from the last step to the result (a last check, the report's speech and the judge).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterable
from typing import Any

from voicedesk.core.clone.fit import FitProgress, FitResult


def run_timed(job: Iterable[FitProgress | FitResult]) -> tuple[FitResult, dict[str, Any]]:
    """Run a `fit_voice` job to its result, timing its stages (`seconds` is the whole job)."""
    started = time.perf_counter()
    steps_at: list[float] = []
    for item in job:
        now = time.perf_counter() - started
        if isinstance(item, FitResult):
            return item, _stages(steps_at, now)
        if item.stage == "fitting":
            steps_at.append(now)
    raise RuntimeError("the fit ended without a result")


def _stages(steps_at: list[float], total: float) -> dict[str, Any]:
    gaps = [b - a for a, b in zip(steps_at, steps_at[1:], strict=False)]
    step = statistics.median(gaps) if gaps else None
    return {
        "seconds": total,
        "prepare_s": (steps_at[0] - step) if step is not None else None,
        "step_s": step,
        "finish_s": (total - steps_at[-1]) if steps_at else None,
    }
