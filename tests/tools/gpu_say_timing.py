"""Where a one-shot `voicedesk say` spends its time on CUDA: the engine's load, then each sentence as it finishes.

Run on the GPU machine in a new process per setting (`gpu_sweep_run.sh`, SAY=1): cuDNN's autotuner on or off
(AUTOTUNE=1/0; unset: as the engine sets it) and CUDA graphs on or off (VOICEDESK_CUDA_GRAPHS). Prints one JSON line.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path


def main() -> None:
    started = time.perf_counter()
    import torch

    from voicedesk.core.engine import Engine
    from voicedesk.core.text import phonemize

    pieces = phonemize(Path("resources/sample-texts.txt").read_text(encoding="utf-8"), "en")
    engine = Engine.load(device="cuda")
    if "AUTOTUNE" in os.environ:  # else as the engine sets it
        torch.backends.cudnn.benchmark = os.environ["AUTOTUNE"] == "1"
    loaded = time.perf_counter()
    style = engine.stock_voice("jm_kumo")
    done: list[float] = []
    audio_s = 0.0
    for chunk in engine.speak_chunks(pieces, style, seed=0):
        torch.cuda.synchronize()
        done.append(round(time.perf_counter() - loaded, 3))
        audio_s += len(chunk.audio) / engine.sample_rate
    print(json.dumps({"autotune": torch.backends.cudnn.benchmark, "graphs": engine.graphs is not None,
                      "load_s": round(loaded - started, 3), "sentences_done_s": done, "audio_s": round(audio_s, 2),
                      "total_s": round(time.perf_counter() - started, 3)}))


if __name__ == "__main__":
    main()
