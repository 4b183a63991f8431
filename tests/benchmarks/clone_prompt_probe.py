"""What a ~3 s prompt holds for the judge: its own similarity to the target's reference, beside one held-out
sentence's, the same-speaker ceiling (two sentences), and a dev run's fitted voice and best stock voice.

    python tests/benchmarks/clone_prompt_probe.py docs/benchmarks/clone-dev-cpu-sweep33-five-seed0.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "desktop"))
sys.path.insert(0, str(HERE))

from clone_dev import Scorer, cache_folder  # noqa: E402
from clone_devset import TARGETS, target  # noqa: E402


def main(run: Path) -> None:
    scorer = Scorer()
    fitted = json.loads(run.read_text(encoding="utf-8"))["targets"]
    print("| target | prompt s | prompt | one held-out sentence | ceiling (two) | fitted | best stock |")
    print("|---|---|---|---|---|---|---|")
    for name in TARGETS:
        t = target(name, cache_folder())
        prompt = float(scorer.judge.embed_many([t.prompt_16k]) @ scorer.refs[name])
        one = float(scorer.judge.embed_many([t.held_out_16k[0]]) @ scorer.refs[name])
        row = fitted[name]
        print(f"| {name} | {t.prompt_16k.size / 16000:.2f} | {prompt:.3f} | {one:.3f} | {scorer.ceiling[name]:.3f} "
              f"| {row['fitted']:.3f} | {row['nearest_stock']:.3f} ({row['nearest_voice']}) |")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
