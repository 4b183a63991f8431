"""Would the clones sound closer at the speaker's own pitch? An oracle, on a device run's saved fits.

Fitted female voices speak the held-out sentences 7-10 % below the prompt's median pitch (the scale is set on the
prompt's words, and compressing the intonation moves a sentence's median). For each fit in a device run's results
(`clone_dev.py device`), this speaks the held-out sentences again here from the saved style rows, once with the fit's
pitch and once with its scale corrected so that their median F0 lands on the prompt's (the same rows, the same
random source: paired), and prints the judge's similarity to the target's reference for both.

    python tests/benchmarks/clone_pitch_probe.py /work/.device/9/results-*.npz --prefix s35-tv8-typed-seed
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "desktop"))
sys.path.insert(0, str(HERE))

from clone_dev import Scorer, load_local, seeded_fits, speak  # noqa: E402


def spoken(model: Any, styles: list[np.ndarray], held: list[list[int]], pitch: Any) -> list[np.ndarray]:
    """The held-out sentences in `styles` (one per sentence) at `pitch`, seed 0."""
    return [speak(model, style, ids, 0, pitch) for style, ids in zip(styles, held, strict=True)]


def main() -> None:
    import torch

    from voicedesk.core.audio.resample import resample
    from voicedesk.core.clone.pitch import median_pitch
    from voicedesk.core.engine.config import Pitch

    parser = argparse.ArgumentParser()
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--prefix", required=True, help="configs named this followed by a seed number")
    args = parser.parse_args()
    torch.set_num_threads(2)
    model, _ = load_local()
    scorer = Scorer()

    def median_of(audio_24k: list[np.ndarray]) -> float:
        return float(np.median([median_pitch(resample(a, 24000, 16000), 16000) for a in audio_24k]))

    pairs: list[tuple[float, float]] = []
    for path in args.results:
        with np.load(path, allow_pickle=True) as saved:
            held = json.loads(str(saved["ids"]))["held_out"]
            for config, name in seeded_fits(saved, args.prefix):
                rows = saved[f"fit|{config}|{name}|rows"]
                fitted = Pitch(**json.loads(str(saved[f"fit|{config}|{name}|meta"]))["pitch"])
                # One row per judged sentence: repeated, every sentence length picks it.
                styles = [np.repeat(rows[k : k + 1], 510, axis=0) for k in range(len(held))]
                as_fitted = spoken(model, styles, held, fitted)
                prompt = median_pitch(scorer.targets[name].prompt_16k, 16000) or 0.0
                k = prompt / median_of(as_fitted)
                corrected = spoken(model, styles, held, replace(fitted, scale=fitted.scale * k))
                before, after = scorer.similarity(name, as_fitted), scorer.similarity(name, corrected)
                pairs.append((before, after))
                print(f"| {name} | {config} | {fitted.scale:.3f} | {median_of(as_fitted):.0f} | {prompt:.0f} | "
                      f"×{k:.3f} | {before:.3f} | {after:.3f} |", flush=True)
    before, after = np.mean(pairs, axis=0)
    print(f"mean judge similarity over {len(pairs)} fits: {before:.4f} as fitted, {after:.4f} at the prompt's median")


if __name__ == "__main__":
    main()
