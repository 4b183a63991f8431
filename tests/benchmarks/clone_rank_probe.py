"""How the fit's start ranks the stock voices for each development prompt, every voice spoken.

Per target and stock voice: GE2E similarity of the voice saying the prompt's heard words, its predicted
pitch's distance from the prompt's (octaves), the words' aligned envelope distance, the ranking score
and the start weight it would get (fit.py's rule and defaults). Shows which voices are out of pitch reach
(`rank_pitch_gap`) and that they carried no weight. Needs the dev data (`clone_dev.py prepare-device
--data-only DIR`).

Usage: python tests/benchmarks/clone_rank_probe.py DIR/data.npz
"""

from __future__ import annotations

import json
import math
import sys

import numpy as np


def main(data_path: str) -> None:
    import torch

    from voicedesk.core.clone.align import aligned_distance, envelope
    from voicedesk.core.clone.fit import FitSettings, log_pitch, octaves, row_index
    from voicedesk.core.clone.ge2e import GE2E
    from voicedesk.core.clone.judge import trim_edges
    from voicedesk.core.clone.pitch import median_pitch
    from voicedesk.core.clone.torch_audio import resample_24k_to_16k
    from voicedesk.core.engine import Engine

    cfg = FitSettings()
    engine = Engine.load(device="cpu")
    with np.load(data_path) as z:
        ids = json.loads(str(z["ids"]))
        prompts = {k.split(":", 1)[1]: z[k] for k in z.files if k.startswith("prompt:")}
    stock = {n: engine.stock_voice(n) for n in engine.stock_voices()}
    ge2e, gen = GE2E("cpu"), torch.Generator().manual_seed(0)
    for name, audio in prompts.items():
        words = ids["heard"][name]
        prompt = trim_edges(np.asarray(audio, np.float32))
        target = torch.from_numpy(ge2e.embed_numpy(prompt))
        log_f0 = math.log(median_pitch(prompt, 16000) or 100.0)
        target_envelope = envelope(ge2e.mel(torch.from_numpy(prompt)[None])[0])
        said = torch.tensor([[0, *words, 0]])
        rows = []
        with torch.no_grad():
            for voice, style in stock.items():
                styles = np.asarray(style, np.float32).reshape(-1, 256)
                row = torch.from_numpy(styles[row_index(len(words), len(styles))])[None]
                out = engine.model.synthesize(said, row, 1.0, rng=gen)
                wav = resample_24k_to_16k(out.audio)
                sim = float(ge2e.embed([wav])[0] @ target)
                lp = log_pitch(out.f0)
                apart = octaves(float(lp), log_f0) if lp is not None else 0.0
                distance = float(aligned_distance(envelope(ge2e.mel(wav[None])[0]), target_envelope))
                score = sim - cfg.pitch_penalty * apart - cfg.start_prompt_penalty * distance
                rows.append((voice, sim, apart, distance, score))
        best, nearest = max(r[4] for r in rows), min(r[2] for r in rows)
        print(f"{name}: prompt {math.exp(log_f0):.0f} Hz")
        for voice, sim, apart, distance, score in rows:
            weight = math.exp((score - best) / cfg.start_temperature)
            reach = "" if apart <= nearest + cfg.rank_pitch_gap else "  (out of pitch reach)"
            print(f"  {voice:14s} GE2E {sim:.3f}  octaves {apart:.2f}  envelope {distance:5.2f}  "
                  f"score {score:+.3f}  weight {weight:.4f}{reach}")


if __name__ == "__main__":
    main(sys.argv[1])
