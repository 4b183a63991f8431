"""Headless self-test: engine, text front ends, cloning and speech, end to end, once each.

`VoiceDesk --self-test` (the frozen app) and `voicedesk self-test` (from source) run it. Its point
is to prove that an installation holds everything VoiceDesk needs at run time — weights, data files
of every front end and encoder, native libraries — by using each of them once: the engine loads
(from the bundle's models folder when frozen), a line in every language is turned into phonemes, the
bundled sample prompt is cloned with a small step budget, and a sentence spoken in the cloned voice
is written to a wav. Every step is timed; the summary is plain, JSON-ready data.

A failing step raises `SelfTestFailed`, which names the step and carries the summary so far.
"""

from __future__ import annotations

import math
import platform
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import voicedesk
from voicedesk.core import paths

SAMPLE_PROMPT = "sample-prompt.flac"
SAMPLE_WORDS = "The quick morning train left the station right on time."  # what it says: typed, as a user may
SENTENCE = "VoiceDesk works: this sentence was spoken in a voice cloned a moment ago."
# One short line per language front end: each loads that front end's dictionaries and models.
TEXT_SAMPLES = {"en": "Hello there.", "en-gb": "Hello there.", "ja": "こんにちは。", "zh": "你好。"}
# What a healthy spoken sentence looks like (seconds, peak level).
SPOKEN_SECONDS = (1.5, 20.0)
MIN_PEAK = 0.02


class SelfTestFailed(Exception):
    """One step failed; `summary` holds what ran before it (and the failure)."""

    def __init__(self, step: str, summary: dict[str, Any], cause: BaseException) -> None:
        super().__init__(f"self-test step {step!r} failed: {type(cause).__name__}: {cause}")
        self.step = step
        self.summary = summary


@dataclass(frozen=True)
class SelfTestSettings:
    out_dir: Path  # where the spoken wav goes
    steps: int = 3  # style-fit steps: enough to run every part of the fit, cheap on a CPU
    device: str = "auto"


class _Run:
    def __init__(self, report: Callable[[str], None]) -> None:
        self.report = report
        self.summary: dict[str, Any] = {"ok": False, "timings_s": {}}

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        self.report(name)
        started = time.perf_counter()
        try:
            yield
        except Exception as exc:
            self.summary["failed_step"] = name
            self.summary["error"] = f"{type(exc).__name__}: {exc}"
            raise SelfTestFailed(name, self.summary, exc) from exc
        finally:
            self.summary["timings_s"][name] = round(time.perf_counter() - started, 3)


def run_self_test(settings: SelfTestSettings, report: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    """Run every step; returns the summary (with "ok": True) or raises SelfTestFailed.

    `report` is called with each step's name as it starts (for a progress line).
    """
    run = _Run(report)
    summary = run.summary
    summary.update(_environment())
    started = time.perf_counter()

    with run.step("engine"):
        from voicedesk.core.engine import Engine

        engine = Engine.load(settings.device)
        import torch

        summary["torch"] = torch.__version__
        summary["torch_cuda"] = torch.version.cuda
        summary["device"] = str(engine.device)
        summary["device_reason"] = str(engine.device_reason)
        summary["paths"]["weights"] = str(_weights_in_use())

    with run.step("text"):
        from voicedesk.core.text import phonemize

        summary["phonemes"] = {
            language: "".join(chunk.phonemes for chunk in phonemize(line, language))
            for language, line in TEXT_SAMPLES.items()
        }

    with run.step("prompt"):
        from voicedesk.core.audio.intake import load_prompt

        prompt = load_prompt(paths.resource_path(SAMPLE_PROMPT))
        summary["prompt_seconds"] = round(float(prompt.duration), 2)

    with run.step("clone"):
        from voicedesk.core.clone import stock_profile
        from voicedesk.core.clone.fit import CHECK_TEXT, FitSettings, fit_voice, run_to_end, transcript_ids

        fit = run_to_end(
            fit_voice(
                engine.model,
                engine.fit_basis(),
                prompt.audio_16k(),
                # No wall-time budget: a slow machine must still run the steps (and their backward pass).
                settings=FitSettings(steps=settings.steps, check_every=settings.steps, seconds=math.inf),
                stock_profile=stock_profile.current(engine, CHECK_TEXT),
                prompt_ids=transcript_ids(SAMPLE_WORDS, "en", float(prompt.duration)),
            )
        )
        if fit.steps < 1:
            raise RuntimeError("the voice fit ran no steps")
        summary["clone"] = {
            "steps": fit.steps,
            "ge2e_before": round(fit.ge2e_before, 4),
            "ge2e_after": round(fit.ge2e_after, 4),
            "judge_before": round(fit.report.before, 4),
            "judge_after": round(fit.report.after, 4),
            # The stock voice the judge hears closest to the prompt (None: the stock voices' profile is missing).
            "closest_stock": fit.report.stock_voice or None,
            "start": {name: round(weight, 3) for name, weight in fit.start.items()},
            "pace": round(fit.pitch.pace, 3),
            "envelope_map": fit.envelope is not None,  # learned from the voice's speech of the words
        }

    with run.step("speak"):
        from voicedesk.core.engine import join_chunks

        audio = join_chunks(engine.synthesize(SENTENCE, fit.style, seed=0, pitch=fit.pitch, envelope=fit.envelope))
        seconds = audio.size / engine.sample_rate
        peak = float(np.max(np.abs(audio))) if audio.size else 0.0
        if not np.all(np.isfinite(audio)):
            raise RuntimeError("the spoken audio contains NaN or infinite samples")
        if not SPOKEN_SECONDS[0] <= seconds <= SPOKEN_SECONDS[1] or peak < MIN_PEAK:
            raise RuntimeError(f"the spoken sentence looks wrong: {seconds:.2f} s long, peak {peak:.3f}")
        summary["speech"] = {"seconds": round(seconds, 2), "peak": round(peak, 3)}

    with run.step("export"):
        from voicedesk.core.audio.export import write_wav

        settings.out_dir.mkdir(parents=True, exist_ok=True)
        wav = write_wav(settings.out_dir / "self-test.wav", audio, engine.sample_rate)
        summary["paths"]["wav"] = str(wav)
        summary["speech"]["wav_bytes"] = wav.stat().st_size

    summary["timings_s"]["total"] = round(time.perf_counter() - started, 3)
    summary["ok"] = True
    return summary


def _weights_in_use() -> Path:
    from voicedesk.core.engine import weights

    for candidate in weights.bundled_weight_paths():
        if candidate.is_file():
            return candidate
    if paths.is_frozen():
        # A frozen app that converts at run time would need the int8 model packages, which it lacks.
        raise RuntimeError(f"the bundle has no converted Kokoro weights in {paths.bundled_models_dir()}")
    return weights.cache_path()


def _environment() -> dict[str, Any]:
    return {
        "voicedesk": voicedesk.__version__,
        "frozen": paths.is_frozen(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "numpy": np.__version__,
        "executable": sys.executable,
        "paths": {
            "install_root": str(paths.install_root()),
            "bundled_models": str(paths.bundled_models_dir()),
            "prompt": str(paths.resource_path(SAMPLE_PROMPT)),
        },
    }
