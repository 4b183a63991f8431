"""Self-test benchmark: time the voice model with cuDNN on and off, in fp32 and fp16, as ratios.

A `Workload` prepares the model on a device and returns a function that produces audio once and
says how many seconds it made. The harness runs each variant (warm-up runs excluded), reports the
median and real-time factor (RTF: seconds of work per second of audio; below 1 is faster than real
time) and the ratios between variants. On the CPU only fp32 is meaningful (cuDNN and fp16 are GPU
matters), so it reports fp32 with all threads and with one.

`self_test()` is a job generator (progress strings, then the report) for the window's worker;
`run_self_test()` drives it to the end for the command line.
"""

from __future__ import annotations

import contextlib
import datetime
import logging
import statistics
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from voicedesk.core.gpu.report import JsonMixin

log = logging.getLogger(__name__)

RunOnce = Callable[[], float]  # produces audio once; returns its length in seconds


class Workload(Protocol):
    description: str

    def prepare(self, device: str) -> RunOnce: ...


@dataclass(frozen=True)
class Variant(JsonMixin):
    label: str
    precision: str  # "fp32" or "fp16" (autocast)
    cudnn: bool | None  # None on the CPU
    threads: int | None = None  # CPU threads; None keeps torch's setting


@dataclass(frozen=True)
class Timing(JsonMixin):
    variant: Variant
    median_ms: float | None
    runs_ms: tuple[float, ...]
    audio_seconds: float | None
    rtf: float | None
    error: str | None = None


@dataclass(frozen=True)
class SelfTestReport(JsonMixin):
    created_utc: str
    device: str
    device_name: str
    workload: str
    warmup: int
    repeats: int
    timings: tuple[Timing, ...]
    ratios: dict[str, float]
    notes: tuple[str, ...]

    def timing(self, label: str) -> Timing | None:
        return next((t for t in self.timings if t.variant.label == label), None)


CUDA_VARIANTS = (
    Variant("fp32, cuDNN on", "fp32", True),
    Variant("fp32, cuDNN off", "fp32", False),
    Variant("fp16, cuDNN on", "fp16", True),
    Variant("fp16, cuDNN off", "fp16", False),
)

# name -> (slower variant, faster variant): how many times faster the second one is.
CUDA_RATIOS = {
    "cudnn_speedup_fp32": ("fp32, cuDNN off", "fp32, cuDNN on"),
    "cudnn_speedup_fp16": ("fp16, cuDNN off", "fp16, cuDNN on"),
    "fp16_speedup_cudnn_on": ("fp32, cuDNN on", "fp16, cuDNN on"),
    "fp16_speedup_cudnn_off": ("fp32, cuDNN off", "fp16, cuDNN off"),
}

CPU_NOTE = (
    "Running on the CPU: the cuDNN on/off and fp16/fp32 comparisons apply only to an NVIDIA GPU and "
    "were not run. On the CPU VoiceDesk computes in fp32, except the vocoder's upsampling blocks, which "
    "run in bfloat16 where this CPU measured that faster at load (the status line says which)."
)


def cpu_variants(threads: int) -> tuple[Variant, ...]:
    variants = [Variant(f"fp32, {threads} thread{'s' if threads > 1 else ''}", "fp32", None, threads)]
    if threads > 1:
        variants.append(Variant("fp32, 1 thread", "fp32", None, 1))
    return tuple(variants)


@contextlib.contextmanager
def _variant_context(variant: Variant, device: str) -> Iterator[None]:
    import torch

    with contextlib.ExitStack() as stack:
        if variant.cudnn is not None:
            # Only switch cuDNN; its benchmark mode stays as the engine set it.
            benchmark = torch.backends.cudnn.benchmark
            stack.enter_context(torch.backends.cudnn.flags(enabled=variant.cudnn, benchmark=benchmark))
        if variant.precision == "fp16":
            stack.enter_context(torch.autocast(device_type=device, dtype=torch.float16))
        if variant.threads is not None:
            previous = torch.get_num_threads()
            torch.set_num_threads(variant.threads)
            stack.callback(torch.set_num_threads, previous)
        yield


def _sync(device: str) -> None:
    if device == "cuda":
        import torch

        torch.cuda.synchronize()


def time_variant(run: RunOnce, variant: Variant, device: str, warmup: int, repeats: int) -> Timing:
    """Median wall time of `repeats` runs after `warmup` runs, under the variant's settings."""
    try:
        with _variant_context(variant, device):
            for _ in range(warmup):
                run()
            _sync(device)
            runs, audio = [], 0.0
            for _ in range(repeats):
                start = time.perf_counter()
                audio = run()
                _sync(device)
                runs.append((time.perf_counter() - start) * 1000)
    except Exception as exc:  # noqa: BLE001 - one variant failing (fp16 on an old GPU) is a result
        log.info("self-test variant %s failed", variant.label, exc_info=True)
        return Timing(variant, None, (), None, None, error=f"{type(exc).__name__}: {exc}".splitlines()[0])
    median = statistics.median(runs)
    rtf = median / 1000 / audio if audio > 0 else None
    return Timing(variant, median, tuple(runs), audio, rtf)


def ratios(timings: tuple[Timing, ...], pairs: dict[str, tuple[str, str]]) -> dict[str, float]:
    by_label = {t.variant.label: t.median_ms for t in timings}
    result = {}
    for name, (slow, fast) in pairs.items():
        slow_ms, fast_ms = by_label.get(slow), by_label.get(fast)
        if slow_ms and fast_ms:
            result[name] = round(slow_ms / fast_ms, 3)
    return result


def _device_name(device: str) -> str:
    import platform

    import torch

    if device == "cuda":
        return str(torch.cuda.get_device_name())
    return f"{platform.processor() or platform.machine()} CPU, {torch.get_num_threads()} threads"


# (warm-up runs, timed runs) per variant when not given: a CPU synthesis takes seconds, a GPU one milliseconds.
DEFAULT_RUNS = {"cuda": (2, 5), "cpu": (1, 3)}


def self_test(
    workload: Workload, device: str, *, warmup: int | None = None, repeats: int | None = None
) -> Generator[str, None, SelfTestReport]:
    """Time `workload` on `device` ("cuda" or "cpu"); yields progress lines, returns the report."""
    import torch

    default_warmup, default_repeats = DEFAULT_RUNS.get(device, DEFAULT_RUNS["cpu"])
    warmup = default_warmup if warmup is None else warmup
    repeats = default_repeats if repeats is None else repeats

    yield f"Preparing {workload.description} on {device}…"
    try:
        run = workload.prepare(device)
    except Exception as exc:  # noqa: BLE001 - e.g. out of GPU memory while loading: a result to report
        log.info("self-test workload could not be prepared", exc_info=True)
        failed = f"The model could not be prepared on {device}: {type(exc).__name__}: {exc}".splitlines()[0]
        return _report(workload, device, warmup, repeats, (), {}, [failed])
    variants: tuple[Variant, ...]
    if device == "cuda":
        variants, pairs, notes = CUDA_VARIANTS, CUDA_RATIOS, []
    else:
        threads = torch.get_num_threads()
        variants = cpu_variants(threads)
        pairs = {"thread_speedup": (variants[-1].label, variants[0].label)} if threads > 1 else {}
        notes = [CPU_NOTE]
    timings = []
    for number, variant in enumerate(variants, start=1):
        yield f"Timing {variant.label} ({number}/{len(variants)})…"
        timings.append(time_variant(run, variant, device, warmup, repeats))
    notes.extend(f"{t.variant.label} could not run: {t.error}" for t in timings if t.error)
    return _report(workload, device, warmup, repeats, tuple(timings), pairs, notes)


def _report(
    workload: Workload,
    device: str,
    warmup: int,
    repeats: int,
    timings: tuple[Timing, ...],
    pairs: dict[str, tuple[str, str]],
    notes: list[str],
) -> SelfTestReport:
    return SelfTestReport(
        created_utc=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        device=device,
        device_name=_device_name(device),
        workload=workload.description,
        warmup=warmup,
        repeats=repeats,
        timings=timings,
        ratios=ratios(timings, pairs),
        notes=tuple(notes),
    )


def run_self_test(workload: Workload, device: str, *, warmup: int | None = None, repeats: int | None = None,
                  progress: Callable[[str], Any] | None = None) -> SelfTestReport:
    job = self_test(workload, device, warmup=warmup, repeats=repeats)
    while True:
        try:
            line = next(job)
        except StopIteration as done:
            report: SelfTestReport = done.value
            return report
        if progress is not None:
            progress(line)


def format_self_test(report: SelfTestReport) -> str:
    lines = [f"Self-test on {report.device_name} ({report.device}): {report.workload}",
             f"  median of {report.repeats} timed run(s) after {report.warmup} warm-up run(s)"]
    for t in report.timings:
        if t.error:
            lines.append(f"  {t.variant.label:<18} failed: {t.error}")
            continue
        rtf = f", RTF {t.rtf:.4f}" if t.rtf is not None else ""
        lines.append(f"  {t.variant.label:<18} {t.median_ms:9.1f} ms for {t.audio_seconds:.2f} s of audio{rtf}")
    for name, value in report.ratios.items():
        lines.append(f"  {name.replace('_', ' ')}: {value:.2f}x")
    lines.extend(f"  Note: {note}" for note in report.notes)
    return "\n".join(lines)
