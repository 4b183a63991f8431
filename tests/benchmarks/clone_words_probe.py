"""Can the fit tell that the words it was given are not the prompt's? (clone-dev.md, sweep 30)

A line shown while recording becomes the recording's words unless the speaker changes them; if they said
something else, the fit pulls the voice toward the wrong sounds. This probe speaks, in each stock voice,
the prompt's real words, a misread line and decoy lines of about the same length, and measures each
speech's aligned envelope distance from each development prompt (`align.aligned_distance`, the fit's own
term). Printed: per target, the distance of the real and the misread words over the decoys' median.

    python tests/benchmarks/clone_words_probe.py [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "desktop"))

DECOYS = 6  # reading lines nearest the prompt's length, besides the misread one


def distances(model: Any, stock: dict[str, np.ndarray], prompt_16k: np.ndarray,
              texts: dict[str, str]) -> dict[str, float]:
    """Per text: the aligned envelope distance of its speech from the prompt, the mean over the stock voices."""
    import torch

    from voicedesk.core.clone.align import aligned_distance, envelope
    from voicedesk.core.clone.fit import row_index, text_ids
    from voicedesk.core.clone.ge2e import GE2E
    from voicedesk.core.clone.judge import trim_edges
    from voicedesk.core.clone.torch_audio import resample_24k_to_16k

    ge2e = GE2E("cpu")
    target = envelope(ge2e.mel(torch.from_numpy(trim_edges(prompt_16k)).unsqueeze(0))[0])
    out: dict[str, float] = {}
    for name, text in texts.items():
        ids = text_ids(text)
        tokens = torch.tensor([[0, *ids, 0]], dtype=torch.long)
        values = []
        for style in stock.values():
            row = torch.from_numpy(np.asarray(style[row_index(len(ids), len(style))], np.float32)).unsqueeze(0)
            with torch.inference_mode():
                wav = resample_24k_to_16k(model.synthesize(tokens, row, 1.0, rng=torch.Generator().manual_seed(0)).audio)
                values.append(float(aligned_distance(envelope(ge2e.mel(wav.unsqueeze(0))[0]), target)))
        out[name] = float(np.mean(values))
    return out


def main() -> None:
    from clone_dev import cache_folder, load_local
    from clone_devset import MISREAD_TEXT, PROMPT_TEXT, TARGETS, target

    from voicedesk.core import paths

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    lines = [line for line in paths.resource_lines("reading-lines.txt") if line != MISREAD_TEXT]
    decoys = sorted(lines, key=lambda line: abs(len(line) - len(PROMPT_TEXT)))[:DECOYS]
    texts = {"real": PROMPT_TEXT, "misread": MISREAD_TEXT, **{f"decoy{k}": t for k, t in enumerate(decoys)}}
    model, stock = load_local()
    results: dict[str, Any] = {"texts": texts, "targets": {}}
    print("| target | real / decoys | misread / decoys | decoys' spread (max / min) |\n|---|---|---|---|")
    for name in TARGETS:
        found = distances(model, stock, target(name, cache_folder()).prompt_16k, texts)
        decoy = np.array([v for k, v in found.items() if k.startswith("decoy")])
        median = float(np.median(decoy))
        results["targets"][name] = found
        print(f"| {name} | {found['real'] / median:.2f} | {found['misread'] / median:.2f} | "
              f"{decoy.max() / decoy.min():.2f} |", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
