"""A clone's time divided into preparation, steps and finish, from the progress its fit reports."""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import pytest

from voicedesk.core.bench.clone_stages import run_timed
from voicedesk.core.clone.fit import FitProgress, FitResult
from voicedesk.core.clone.report import QualityReport

RESULT = FitResult(style=np.zeros((510, 256), np.float32), report=QualityReport(0.5, 0.7), start={},
                   steps=4, seconds=0.0, ge2e_before=0.5, ge2e_after=0.7, prompt_pitch_hz=None)


def _job(prepare: float, steps: list[float], finish: float) -> Iterator[FitProgress | FitResult]:
    yield FitProgress(0, len(steps), 0.0, 1.0, "preparing")
    time.sleep(prepare)
    for i, seconds in enumerate(steps, 1):
        time.sleep(seconds)
        yield FitProgress(i, len(steps), 0.6, 1.0)
    yield FitProgress(len(steps), len(steps), 0.6, 0.1, "judging")
    time.sleep(finish)
    yield RESULT


def test_stages_add_up_and_the_median_step_skips_a_slow_check() -> None:
    result, stages = run_timed(_job(0.3, [0.05, 0.05, 0.25, 0.05], 0.2))
    assert result is RESULT
    assert stages["step_s"] == pytest.approx(0.05, abs=0.03)
    assert stages["prepare_s"] == pytest.approx(0.3, abs=0.05)
    assert stages["finish_s"] == pytest.approx(0.2, abs=0.05)
    assert stages["seconds"] == pytest.approx(0.9, abs=0.1)


def test_a_fit_without_steps_has_no_step_time() -> None:
    _, stages = run_timed(_job(0.0, [], 0.0))
    assert stages["step_s"] is None and stages["prepare_s"] is None and stages["finish_s"] is None


def test_a_job_that_ends_without_a_result_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="without a result"):
        run_timed(iter([FitProgress(0, 1, 0.0, 1.0, "preparing")]))
