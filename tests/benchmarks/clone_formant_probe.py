"""Can the prompt's words tell a voice's formant scale? A probe on fitted voices (clone-dev.md, sweep 28).

A style cannot move the voice's formants as a whole (a vocal tract's length); resampling can: speaking at
speed 1/α and pitch 1/α, then playing the result α times faster scales every formant by α and leaves pitch
and timing as they were. Sweep 10 found that the judge prefers α ≈ 1.06 for the espeak voices, but nothing
the app measures picked it then. Here each fitted voice says the prompt's words at every α of a grid, and
the mel-cepstral distortion along a time alignment with the prompt (the fit's own envelope distance,
align.py) picks one; the judge then compares the voice's held-out speech at that α with α = 1. The judge
only scores; it picks nothing (its own best α is printed as the oracle).

Usage (from the repository root, venv active):
    python tests/benchmarks/clone_formant_probe.py RESULTS.npz [...] --configs a,b [--json F]
(RESULTS: `clone_dev.py device` output, with the fits' style rows.)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "desktop"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import clone_dev  # noqa: E402
from clone_devset import TARGETS, target  # noqa: E402

from voicedesk.core.audio.resample import resample  # noqa: E402
from voicedesk.core.clone.align import aligned_distance, envelope  # noqa: E402
from voicedesk.core.clone.ge2e import GE2E  # noqa: E402
from voicedesk.core.clone.judge import trim_edges  # noqa: E402
from voicedesk.core.engine.config import Pitch  # noqa: E402

ALPHAS = (0.92, 0.95, 0.98, 1.0, 1.02, 1.04, 1.06, 1.08, 1.1)
RATE = 24000


def scaled(model: Any, row: np.ndarray, ids: list[int], pitch: Pitch, alpha: float) -> np.ndarray:
    """24 kHz speech of `ids` with every formant scaled by `alpha`, pitch and timing as `pitch` has them."""
    slow = Pitch(pitch.scale / alpha, pitch.spread, pitch.pace / alpha)
    audio = clone_dev.speak(model, row[None], ids, pitch=slow)
    return audio if alpha == 1.0 else resample(audio, round(RATE * alpha), RATE)


def envelope_distance(ge2e: GE2E, audio_24k: np.ndarray, prompt_envelope: torch.Tensor) -> float:
    wav = torch.from_numpy(trim_edges(resample(audio_24k, RATE, 16000)))
    with torch.no_grad():
        return float(aligned_distance(envelope(ge2e.mel(wav.unsqueeze(0))[0]), prompt_envelope))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+")
    parser.add_argument("--configs", required=True)
    parser.add_argument("--json")
    args = parser.parse_args()
    torch.set_num_threads(2)
    files: dict[str, Any] = {}
    for path in args.results:
        with np.load(path) as z:
            files.update({k: z[k] for k in z.files})
    ids = json.loads(str(files["ids"]))
    spoken = [*ids["held_out"], *ids["wer_extra"]]
    model, _ = clone_dev.load_local()
    ge2e = GE2E("cpu")
    scorer = clone_dev.Scorer()
    stock_sims = {n: max(scorer.similarity(n, [files[f"stock|{v}|{k}"].astype(np.float32) for k in range(2)])
                         for v in sorted({k.split("|")[1] for k in files if k.startswith("stock|")})) for n in TARGETS}
    report: dict[str, Any] = {}
    for config in args.configs.split(","):
        report[config] = {}
        for name in TARGETS:
            rows = files[f"fit|{config}|{name}|rows"]
            pitch = Pitch(**json.loads(str(files[f"fit|{config}|{name}|meta"]))["pitch"])
            words = ids["heard"][name]
            nearest = int(np.argmin([abs(len(s) - len(words)) for s in spoken]))
            prompt = trim_edges(target(name, clone_dev.cache_folder()).prompt_16k)
            with torch.no_grad():
                prompt_envelope = envelope(ge2e.mel(torch.from_numpy(prompt).unsqueeze(0))[0])
            distance = {a: envelope_distance(ge2e, scaled(model, rows[nearest], words, pitch, a), prompt_envelope)
                        for a in ALPHAS}
            gap = {}
            for a in ALPHAS:
                held = [scaled(model, rows[k], spoken[k], pitch, a) for k in range(len(ids["held_out"]))]
                sim = scorer.similarity(name, held)
                gap[a] = (sim - stock_sims[name]) / (scorer.ceiling[name] - stock_sims[name])
            picked = min(distance, key=lambda a: distance[a])
            oracle = max(gap, key=lambda a: gap[a])
            report[config][name] = {"distance": distance, "gap_closed": gap, "picked": picked, "oracle": oracle}
            print(f"{config} {name:9s} picked α {picked:.2f}: gap {gap[1.0]:.2f} -> {gap[picked]:.2f}   "
                  f"(oracle α {oracle:.2f}: {gap[oracle]:.2f})   distance "
                  + " ".join(f"{a:g}:{d:.3f}" for a, d in distance.items()), flush=True)
        base = np.mean([r["gap_closed"][1.0] for r in report[config].values()])
        picked_mean = np.mean([r["gap_closed"][r["picked"]] for r in report[config].values()])
        print(f"{config}: mean gap closed {base:.3f} at α 1, {picked_mean:.3f} at the picked α", flush=True)
        if args.json:  # after every configuration: a long run stopped early keeps what it measured
            Path(args.json).write_text(json.dumps(report, indent=1, default=float) + "\n")


if __name__ == "__main__":
    main()
