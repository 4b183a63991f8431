"""The bench's measurements. Every timing is taken after warm-up and is a median over `repeats`.

- `load_cold_s`: the first load on a fresh machine: the int8 ONNX joined and converted into an empty
  (temporary) cache, then the engine loaded from it. `load_s`: the engine loaded from converted weights.
- `synthesis_rtf` (a paragraph) and `synthesis_rtf_short` (a short line): seconds of work per second of
  audio for `Engine.synthesize`, text front end included; below 1 is faster than real time.
- `first_audio_s`: from the call until the first chunk of a one-sentence line is ready.
- On CUDA, `graphs_s`: capturing synthesis's CUDA graphs (`Engine.prepare_graphs`; `graphs` of the
  frame half, `text_graphs` of the token half; the window does this in the background after loading),
  and `graphs_speedup` / `first_audio_eager_s`: the paragraph and the first audio without them.
- `clone_s`: a 3 s prompt to a finished fit at the default budget (`FitSettings()`), encoders loaded;
  `clone` says how that run's time divides (`clone_stages.py`: preparation, a step, the finish).
- On CUDA, cuDNN on/off and fp16/fp32 as speed ratios of the paragraph spoken eagerly (the GPU
  self-test's harness).
  On the CPU, ONNX Runtime running the same int8 Kokoro on the paragraph's phonemes, as a ratio.
Anything that cannot be measured here is left out with its reason under `skipped`.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import math
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voicedesk.core.bench import system
from voicedesk.core.errors import VoiceDeskError

log = logging.getLogger(__name__)

VOICE = "jf_alpha"
SHORT_LINE = "Hello there, how are you today?"
FIRST_LINE = "The train to the coast leaves at noon."
PARAGRAPH = (
    "The old lighthouse stood at the edge of the cliff, its white paint worn thin by a century of storms. "
    "Every evening the keeper climbed the narrow stairs, trimmed the wick and watched the beam sweep "
    "across the water. Ships that passed in the night never saw him, but they trusted the light. "
    "When the keeper finally retired, the town gathered on the rocks to thank him, and for once the "
    "sea was calm."
)
QUICK_PARAGRAPH = "The old lighthouse stood at the edge of the cliff. Every evening the keeper climbed the stairs."
NOT_ON_CPU = "n/a on CPU"

Progress = Callable[[str], None]


@dataclass(frozen=True)
class BenchSettings:
    device: str = "auto"
    repeats: int = 3
    quick: bool = False  # a short paragraph, one clone step, no cold load, no warm-up clone
    prompt: Path | None = None  # a recording to clone (WAV needs no soundfile); default: the sample prompt
    transcript: str = ""  # what the prompt says; empty: what the transcriber hears (none without it)


def _timed_runs(fn: Callable[[], Any], repeats: int, sync: Callable[[], None]) -> list[tuple[float, Any]]:
    """`fn` run `repeats` times: each run's seconds (the device drained) and its value."""
    runs = []
    for _ in range(repeats):
        started = time.perf_counter()
        value = fn()
        sync()
        runs.append((time.perf_counter() - started, value))
    return runs


def _median_time(fn: Callable[[], Any], repeats: int, sync: Callable[[], None]) -> tuple[float, Any]:
    runs = _timed_runs(fn, repeats, sync)
    return statistics.median(seconds for seconds, _ in runs), runs[-1][1]


@contextlib.contextmanager
def _temporary_cache() -> Iterator[Path]:
    """Point the weights cache at an empty folder for the duration (the user's cache is not touched)."""
    previous = os.environ.get("VOICEDESK_CACHE")
    with tempfile.TemporaryDirectory(prefix="voicedesk-bench-") as folder:
        os.environ["VOICEDESK_CACHE"] = folder
        try:
            yield Path(folder)
        finally:
            if previous is None:
                os.environ.pop("VOICEDESK_CACHE", None)
            else:
                os.environ["VOICEDESK_CACHE"] = previous


def run_bench(settings: BenchSettings, progress: Progress = lambda _: None) -> dict[str, Any]:
    """Measure everything; returns one JSON-ready dict (see the module doc for the keys)."""
    if settings.repeats < 1:
        raise VoiceDeskError("--repeats must be at least 1.")
    out: dict[str, Any] = {"date": system.utc_now(), "quick": settings.quick, "repeats": settings.repeats,
                           "load_average_before": system.load_average(), "skipped": {}}

    progress("Importing PyTorch and the model code…")
    started = time.perf_counter()
    import torch

    from voicedesk.core.engine import Engine, model  # noqa: F401  (model: the Kokoro code, timed here)

    out["import_s"] = time.perf_counter() - started

    # The cold load converts into an empty temporary cache, and the cached loads then read that one.
    with contextlib.nullcontext() if settings.quick else _temporary_cache():
        engine = _load(settings, out, progress)
    device = engine.device
    out["device"], out["device_reason"] = device, engine.device_reason
    out["versions"], out["machine"] = system.versions(device), system.machine(device)

    def sync() -> None:
        if device == "cuda":
            torch.cuda.synchronize()

    style = engine.stock_voice(VOICE)
    paragraph = QUICK_PARAGRAPH if settings.quick else PARAGRAPH
    out["texts"] = {"voice": VOICE, "short": SHORT_LINE, "first_audio": FIRST_LINE, "paragraph": paragraph}

    def speak(text: str) -> float:
        return float(sum(chunk.seconds for chunk in engine.synthesize(text, style, seed=0)))

    if engine.graphs is not None:
        progress("Capturing synthesis's CUDA graphs…")
        started = time.perf_counter()
        out["graphs"] = engine.prepare_graphs()
        out["graphs_s"] = time.perf_counter() - started
        out["text_graphs"] = engine.graphs.tokens.captured
    progress("Warming up synthesis…")
    speak(paragraph)
    speak(SHORT_LINE)
    progress("Timing synthesis…")
    seconds, audio = _median_time(lambda: speak(SHORT_LINE), settings.repeats, sync)
    out["synthesis_rtf_short"], out["short_audio_s"] = seconds / audio, audio
    seconds, audio = _median_time(lambda: speak(paragraph), settings.repeats, sync)
    out["synthesis_rtf"], out["paragraph_audio_s"], out["paragraph_s"] = seconds / audio, audio, seconds

    def first_audio() -> None:
        stream = engine.synthesize(FIRST_LINE, style, seed=0)
        next(stream)
        stream.close()

    out["first_audio_s"], _ = _median_time(first_audio, settings.repeats, sync)
    graphs = engine.graphs
    if graphs is not None:
        progress("Timing synthesis without CUDA graphs…")
        engine.graphs = None
        speak(paragraph)
        seconds, _ = _median_time(lambda: speak(paragraph), settings.repeats, sync)
        out["graphs_speedup"] = seconds / out["paragraph_s"]
        out["first_audio_eager_s"], _ = _median_time(first_audio, settings.repeats, sync)
        engine.graphs = graphs
        out["graphs_failure"] = graphs.failure

    if device == "cuda":
        out["onnxruntime"] = None
        out["ours_vs_onnxruntime"] = "n/a on CUDA (ONNX Runtime runs on the CPU)"
        _cuda_ratios(engine, style, paragraph, settings, out, progress)
    else:
        out["cudnn_speedup"] = out["fp16_speedup"] = NOT_ON_CPU
        _onnxruntime(engine, style, paragraph, settings, out, progress)

    _clone(engine, settings, out, progress, sync)

    out["peak_host_mb"] = system.peak_host_mb()
    out["peak_gpu_mb"] = round(torch.cuda.max_memory_allocated() / 2**20, 1) if device == "cuda" else None
    out["load_average_after"] = system.load_average()
    return out


def _load(settings: BenchSettings, out: dict[str, Any], progress: Progress) -> Any:
    """Cold load (conversion into the empty temporary cache) unless quick, then timed loads from the cache."""
    from voicedesk.core.engine import Engine, weights

    if settings.quick:
        out["load_cold_s"] = None
        _skip(out, "load_cold_s", "not measured with --quick")
        progress("Loading the engine (warm-up)…")
        Engine.load(settings.device)  # converts into the cache if nothing is converted yet
    else:
        progress("Cold load: converting the int8 ONNX into an empty cache…")
        try:
            started = time.perf_counter()
            weights.load_state_dict(bundled=False)
            converted = time.perf_counter() - started
            started = time.perf_counter()
            Engine.load(settings.device)
            out["load_cold_s"] = converted + time.perf_counter() - started
        except VoiceDeskError as exc:
            out["load_cold_s"] = None
            _skip(out, "load_cold_s", str(exc))
    gc.collect()
    progress("Timing cached loads…")
    times, engine = [], None
    for _ in range(settings.repeats):
        engine = None
        gc.collect()
        started = time.perf_counter()
        engine = Engine.load(settings.device)
        times.append(time.perf_counter() - started)
    out["load_s"] = statistics.median(times)
    return engine


def _skip(out: dict[str, Any], key: str, reason: str) -> None:
    out["skipped"][key] = reason


def _cuda_ratios(engine: Any, style: Any, paragraph: str, settings: BenchSettings, out: dict[str, Any],
                 progress: Progress) -> None:
    """cuDNN on/off and fp16/fp32 on the paragraph, through the GPU self-test's timing harness; all four
    eager, since graphs exist only for the engine's own settings (fp32, cuDNN on) and a ratio of a
    replay to eager passes would measure the graphs, not cuDNN or fp16."""
    from voicedesk.core.gpu.selftest import CUDA_RATIOS, CUDA_VARIANTS, ratios, time_variant
    from voicedesk.core.text import phonemize

    chunks = phonemize(paragraph, "en")
    timings = []
    graphs, engine.graphs = engine.graphs, None
    try:
        for variant in CUDA_VARIANTS:
            progress(f"Timing {variant.label}…")

            def run(fp16: bool = variant.precision == "fp16") -> float:
                # The engine's own autocast switch must agree with the variant, or it would turn fp16 off.
                engine.fp16 = fp16
                return float(sum(chunk.seconds for chunk in engine.speak_chunks(chunks, style, seed=0)))

            timings.append(time_variant(run, variant, "cuda", warmup=1, repeats=settings.repeats))
    finally:
        engine.fp16, engine.graphs = False, graphs
    found = ratios(tuple(timings), CUDA_RATIOS)
    out["cuda_variants"] = {t.variant.label: {"median_ms": t.median_ms, "rtf": t.rtf, "error": t.error}
                            for t in timings}
    out["cudnn_speedup"] = found.get("cudnn_speedup_fp32")
    out["fp16_speedup"] = found.get("fp16_speedup_cudnn_on")
    out["cuda_ratios"] = found


def _onnxruntime(engine: Any, style: Any, paragraph: str, settings: BenchSettings, out: dict[str, Any],
                 progress: Progress) -> None:
    import torch

    from voicedesk.core.bench.onnx_kokoro import compare_with_onnxruntime
    from voicedesk.core.text import phonemize

    progress("Timing ONNX Runtime against PyTorch on the paragraph's phonemes…")
    phonemes = [chunk.phonemes for chunk in phonemize(paragraph, "en")]
    try:
        found = compare_with_onnxruntime(engine, phonemes, style, torch.get_num_threads(), settings.repeats)
    except (VoiceDeskError, ImportError) as exc:
        out["onnxruntime"] = out["ours_vs_onnxruntime"] = None
        _skip(out, "onnxruntime", str(exc))
        return
    out["onnxruntime"] = {k: v for k, v in found.items() if k != "runs"}
    out["ours_vs_onnxruntime"] = found["ratio_pytorch_to_onnxruntime"]


def _clone(engine: Any, settings: BenchSettings, out: dict[str, Any], progress: Progress,
           sync: Callable[[], None]) -> None:
    from voicedesk.core.bench.clone_stages import run_timed
    from voicedesk.core.bench.prompt import PromptUnavailable, bench_prompt
    from voicedesk.core.clone.fit import FitSettings, fit_voice, run_to_end

    out["clone_s"] = None
    try:
        prompt, origin = bench_prompt(settings.prompt)
        progress("Loading the speaker encoders…")
        from voicedesk.core.clone.ge2e import GE2E
        from voicedesk.core.clone.judge import Judge

        started = time.perf_counter()
        ge2e, judge = GE2E(engine.device), Judge()
        out["encoders_load_s"] = time.perf_counter() - started
    except (PromptUnavailable, VoiceDeskError, ImportError) as exc:
        _skip(out, "clone_s", str(exc))
        return
    stock = engine.fit_basis()
    timed = FitSettings(steps=1, check_every=1) if settings.quick else FitSettings()
    if not settings.quick:
        progress("Warming up cloning (one step)…")
        run_to_end(fit_voice(engine.model, stock, prompt, settings=FitSettings(steps=1, check_every=1,
                   seconds=math.inf), ge2e=ge2e, judge=judge, prompt_ids=_words(prompt, settings.transcript).ids,
                   graphs=engine.graphs))
    runs = 1 if settings.quick else settings.repeats
    progress(f"Timing {'a clone' if runs == 1 else f'{runs} clones'} ({timed.steps} steps at most, "
             f"{timed.seconds:g} s budget)…")
    def one_clone() -> tuple[Any, dict[str, Any], Any]:
        words = _words(prompt, settings.transcript)  # as the app does: listening is part of the clone's time
        result, stages = run_timed(fit_voice(engine.model, stock, prompt, settings=timed, ge2e=ge2e, judge=judge,
                                             prompt_ids=words.ids, graphs=engine.graphs))
        return result, stages, words

    timings = _timed_runs(one_clone, runs, sync)
    seconds, (result, stages, words) = sorted(timings, key=lambda t: t[0])[len(timings) // 2]  # the median run
    out["clone_s"] = seconds
    out["clone"] = {"prompt": origin, "prompt_s": len(prompt) / 16000, "steps": result.steps, "words": words.text or None,
                    "budget_steps": timed.steps, "budget_s": timed.seconds, "runs_s": [t[0] for t in timings],
                    **{k: v for k, v in stages.items() if k != "seconds"},
                    "judge_before": result.report.before, "judge_after": result.report.after}


def _words(prompt_16k: Any, typed: str) -> Any:
    """The PromptWords the app would use for the bench prompt: `typed`, else what it hears (none
    without the transcriber)."""
    from voicedesk.core.clone.words import words_of

    return words_of(lambda: prompt_16k, len(prompt_16k) / 16000, typed, "en")


def _clone_detail(clone: dict[str, Any]) -> str:
    step = clone.get("step_s")
    return f" ({clone['steps']} steps" + (f" of {step:.2f} s" if step is not None else "") + ")"


def format_table(result: dict[str, Any]) -> str:
    """The result as a plain two-column table for a terminal."""

    def num(value: Any, unit: str = "", digits: int = 3) -> str:
        if value is None:
            return "skipped"
        if isinstance(value, str):
            return value
        return f"{value:.{digits}f}{unit}"

    versions, machine = result.get("versions", {}), result.get("machine", {})
    ort = result.get("onnxruntime") or {}
    rows = [
        ("device", f"{result.get('device')} ({result.get('device_reason')})"),
        ("synthesis RTF, paragraph", f"{num(result.get('synthesis_rtf'))} "
                                     f"({num(result.get('paragraph_audio_s'), ' s', 1)} of audio)"),
        ("synthesis RTF, short line", num(result.get("synthesis_rtf_short"))),
        ("first audio, one sentence", num(result.get("first_audio_s"), " s")),
        ("clone, 3 s prompt", num(result.get("clone_s"), " s", 1)
         + (_clone_detail(result["clone"]) if result.get("clone") else "")),
        ("load, cached", num(result.get("load_s"), " s", 2)),
        ("load, cold (conversion)", num(result.get("load_cold_s"), " s", 1)),
        ("peak host memory", num(result.get("peak_host_mb"), " MB", 0)),
        ("peak GPU memory", num(result.get("peak_gpu_mb"), " MB", 0) if result.get("device") == "cuda"
         else NOT_ON_CPU),
        ("CUDA graphs vs eager", num(result.get("graphs_speedup"), "x", 2)
         + (f" ({result['graphs']} captured in {result['graphs_s']:.1f} s)" if result.get("graphs") else "")
         if result.get("device") == "cuda" else NOT_ON_CPU),
        ("cuDNN on vs off", num(result.get("cudnn_speedup"), "x", 2)),
        ("fp16 vs fp32", num(result.get("fp16_speedup"), "x", 2)),
        ("ours / ONNX Runtime (RTF)", num(result.get("ours_vs_onnxruntime"), "", 2)
         + (f" (ORT RTF {ort['rtf_median']['onnxruntime']:.3f})" if ort else "")),
        ("versions", ", ".join(f"{k} {v}" for k, v in versions.items() if v is not None)),
        ("machine", f"{machine.get('cpu')}, {machine.get('cpu_count')} CPUs"
                    + (f", {machine['gpu']}" if machine.get("gpu") else "")),
    ]
    width = max(len(name) for name, _ in rows)
    lines = [f"VoiceDesk bench, {result.get('date')}, median of {result.get('repeats')} after warm-up"
             + (" (quick)" if result.get("quick") else "")]
    lines += [f"  {name:<{width}}  {value}" for name, value in rows]
    lines += [f"  skipped {key}: {why}" for key, why in result.get("skipped", {}).items()]
    return "\n".join(lines)
