"""Whether the vocoder speaks in bfloat16 on this CPU: measured at load, not guessed.

On the CPU nine tenths of synthesis is the vocoder's upsampling blocks (convolutions over 120 positions
per 25 ms frame). CPUs with native bfloat16 (AMX, AVX512-BF16: recent Xeons, Ryzen 7000 and later) run
them 1.6-1.7× faster in bfloat16 with the voice unchanged to the judge (docs/benchmarks/bench-cpu.md);
CPUs without it emulate bfloat16, which can be slower than float32. So where the CPU has AMX (the
matrix units these measurements come from) bfloat16 is taken without a trial; elsewhere the engine times
a short vocoder pass both ways and keeps bfloat16 only where it clearly wins. A trial run while the
machine is busy can miss the gain (seen: a load-time trial beside other work kept float32 and clones took
66-81 s instead of 34-58 s), which is why AMX is not left to it. VOICEDESK_CPU_BF16=1 or 0 decides instead.

This module imports torch at the top: import it only where the model is needed.
"""

from __future__ import annotations

import os
import time

import torch

from voicedesk.core.engine.model import KokoroModel

MIN_SPEEDUP = 1.2  # below this the difference is within what a busy machine's timing varies by
TRIAL_FRAMES = 24  # 0.6 s of speech: long enough to time, short enough not to slow the load down
ENV = "VOICEDESK_CPU_BF16"


def choose_vocoder_bf16(model: KokoroModel) -> tuple[bool, str]:
    """(use bfloat16, a short reason for the status line) for `model` on the CPU."""
    setting = os.environ.get(ENV, "").strip()
    if setting in ("0", "1"):
        return setting == "1", f"vocoder in {'bfloat16' if setting == '1' else 'float32'} ({ENV}={setting})"
    if has_amx():
        return True, "vocoder in bfloat16 (this CPU has AMX)"
    capability = torch.backends.cpu.get_cpu_capability()
    if not capability.startswith("AVX512"):
        return False, f"vocoder in float32 (this CPU, {capability}, has no fast bfloat16)"
    speedup = vocoder_speedup(model)
    if speedup >= MIN_SPEEDUP:
        return True, f"vocoder in bfloat16, {speedup:.1f}× faster on this CPU"
    return False, f"vocoder in float32 (bfloat16 only {speedup:.2f}× as fast here)"


def has_amx() -> bool:
    """Whether this CPU has AMX tiles for bfloat16 (recent Xeons), as PyTorch's own CPU probe says."""
    probe = getattr(torch.cpu, "_is_amx_tile_supported", None)  # private: absent in some releases
    return bool(probe and probe())


def vocoder_speedup(model: KokoroModel, frames: int = TRIAL_FRAMES) -> float:
    """Float32 time over bfloat16 time for a vocoder pass of `frames` frames (best of two each)."""
    gen = model.decoder.generator
    rng = torch.Generator().manual_seed(0)
    channels = gen.ups[0].in_channels
    x = torch.randn(1, channels, 2 * frames, generator=rng)
    timbre = torch.randn(1, model.decoder.encode.norm1.fc.in_features, generator=rng) * 0.2
    f0 = torch.full((1, 2 * frames), 140.0)
    previous = model.vocoder_bf16
    best = {False: float("inf"), True: float("inf")}
    try:
        with torch.inference_mode():
            for bf16 in (False, True):  # one switch each: switching bfloat16 on copies the blocks
                model.vocoder_bf16 = bf16
                for round_ in range(3):  # the first round warms up the path (oneDNN builds its kernels)
                    started = time.perf_counter()
                    model.vocode(x, timbre, f0, rng)
                    if round_ > 0:
                        best[bf16] = min(best[bf16], time.perf_counter() - started)
    finally:
        model.vocoder_bf16 = previous
    return best[False] / best[True]
