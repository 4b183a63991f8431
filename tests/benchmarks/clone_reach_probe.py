"""How far a fitted voice reaches, heard by both encoders: the one the fit optimises (GE2E) and the judge.

For each target, from a device run's saved held-out speech (`clone_dev.py device`): the fitted voice's held-out
sentences against the target's reference recordings and against the prompt, beside the target's own held-out
recordings against the prompt, and the prompt against the reference. If GE2E heard the fitted voice as close to
the speaker as the judge does not, the judge would be disagreeing with the fit's encoder; if both hear it equally
far, the fit's reach is what is missing.

    python tests/benchmarks/clone_reach_probe.py /work/.device/9/results-*.npz --prefix s35-tv8-typed-seed
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "desktop"))
sys.path.insert(0, str(HERE))

from clone_dev import cache_folder, seeded_fits  # noqa: E402
from clone_devset import TARGETS, target  # noqa: E402

COLUMNS = ("fitted~reference", "fitted~prompt", "own held-out~prompt", "prompt~reference")


def main() -> None:
    import torch

    from voicedesk.core.audio.resample import resample
    from voicedesk.core.clone.ge2e import GE2E
    from voicedesk.core.clone.judge import Judge, trim_edges

    parser = argparse.ArgumentParser()
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--prefix", required=True, help="configs named this followed by a seed number")
    args = parser.parse_args()
    ge2e, judge = GE2E("cpu"), Judge()

    def ge2e_of(wavs: list[np.ndarray]) -> np.ndarray:
        with torch.no_grad():
            embeds = ge2e.embed([torch.from_numpy(trim_edges(np.asarray(w, np.float32))) for w in wavs])
        mean = embeds.mean(0).numpy()
        return mean / np.linalg.norm(mean)

    encoders = {"GE2E": ge2e_of, "judge": judge.embed_many}
    rows: dict[str, dict[str, list[float]]] = {name: {f"{e} {c}": [] for e in encoders for c in COLUMNS} for name in TARGETS}
    for path in args.results:
        with np.load(path, allow_pickle=True) as saved:
            for config, name in seeded_fits(saved, args.prefix):
                held = [resample(saved[f"fit|{config}|{name}|audio{i}"].astype(np.float32), 24000, 16000) for i in (0, 1)]
                t = target(name, cache_folder())
                for label, embed in encoders.items():
                    fitted, reference, prompt = embed(held), embed(list(t.reference_16k)), embed([t.prompt_16k])
                    own = embed(list(t.held_out_16k))
                    for column, value in zip(COLUMNS, (fitted @ reference, fitted @ prompt, own @ prompt,
                                                       prompt @ reference), strict=True):
                        rows[name][f"{label} {column}"].append(float(value))
    heads = list(next(iter(rows.values())))
    print("| target | runs | " + " | ".join(heads) + " |")
    print("|---" * (len(heads) + 2) + "|")
    for name, columns in rows.items():
        runs = len(columns[heads[0]])
        print(f"| {name} | {runs} | " + " | ".join(f"{np.mean(v):.3f}" if v else "-" for v in columns.values()) + " |")
    means = [np.mean([np.mean(rows[n][h]) for n in TARGETS if rows[n][h]]) for h in heads]
    print("| mean | | " + " | ".join(f"{m:.3f}" for m in means) + " |")


if __name__ == "__main__":
    main()
