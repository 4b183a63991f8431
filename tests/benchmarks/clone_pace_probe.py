"""How well does the fit read a prompt's pace? A probe on fitted voices (clone-dev.md, sweep 29).

The fit gives a voice the prompt's pace: how long the model takes to say the prompt's words against how long
the prompt lasts (`fit.voice_pace`). Said in one piece, a long prompt's words take the style row of a long text,
and the pauses between its sentences count as speech; the engine speaks a text a sentence at a time, each with
its own row. Here every fitted voice says the prompt's words again on this CPU, a sentence at a time, with the
saved row nearest each sentence's length (only the spoken sentences' rows are saved), and the pace is read
without the prompt's pauses between sentences (`fit.sentence_ids`, `fit.voice_pace`). Both readings are
compared with the pace that makes the voice's held-out sentences last as long as the target's own recordings
of them (the oracle), and the judge scores the held-out speech at the device's pace, at this one and at pace 1
(paired: same styles, same machine).

Usage (from the repository root, venv active):
    python tests/benchmarks/clone_pace_probe.py RESULTS.npz [...] --data DATA.npz --configs a,b [--paces-only] [--json F]
(RESULTS: `clone_dev.py device` output, with the fits' style rows; DATA: its data.npz.)
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
from clone_devset import target  # noqa: E402

from voicedesk.core.audio.resample import resample  # noqa: E402
from voicedesk.core.clone.fit import sentence_ids, voice_pace  # noqa: E402
from voicedesk.core.clone.judge import trim_edges  # noqa: E402
from voicedesk.core.engine.config import Pitch  # noqa: E402


def at_16k(audio_24k: np.ndarray) -> np.ndarray:
    return resample(audio_24k, 24000, 16000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+")
    parser.add_argument("--data", required=True)
    parser.add_argument("--configs", required=True)
    parser.add_argument("--json")
    parser.add_argument("--paces-only", action="store_true", help="read the paces and the oracle; judge nothing")
    args = parser.parse_args()

    files: dict[str, Any] = {}
    for path in args.results:
        with np.load(path) as z:
            files.update({k: z[k] for k in z.files})
    data = np.load(args.data)
    ids = json.loads(str(data["ids"]))
    spoken_ids = [*ids["held_out"], *ids["wer_extra"]]
    stock_audio: dict[str, list[np.ndarray]] = {}
    for key in sorted(k for k in files if k.startswith("stock|")):
        stock_audio.setdefault(key.split("|")[1], []).append(files[key].astype(np.float32))
    model, _ = clone_dev.load_local()
    scorer = clone_dev.Scorer()
    report: dict[str, Any] = {}
    for config in args.configs.split(","):
        arms: dict[str, dict[str, Any]] = {"device": {}, "sentences": {}, "pace-1": {}}
        measured: dict[str, Any] = {}
        for key in sorted(k for k in files if k.startswith(f"fit|{config}|") and k.endswith("|meta")):
            name = key.split("|")[2]
            meta = json.loads(str(files[key]))
            rows = files[f"fit|{config}|{name}|rows"].astype(np.float32)
            said = clone_dev.words_of(config, ids, name)
            kind = clone_dev.prompt_kind(config)
            prompt = data[f"said_{kind}:{name}" if clone_dev.whole(config) else
                          f"{clone_dev.keyed('prompt', kind)}:{name}"].astype(np.float32)
            assert said is not None, f"{config} fits without words: no pace to measure"

            def nearest_row(n: int, rows: np.ndarray = rows) -> np.ndarray:
                return rows[int(np.argmin([abs(len(s) - n) for s in spoken_ids]))][None]

            pieces = sentence_ids(said)
            speech = [torch.from_numpy(at_16k(clone_dev.speak(model, nearest_row(len(p)), p))) for p in pieces]
            pace = voice_pace(speech, prompt)
            pitch = meta["pitch"]
            for arm, p in (("device", pitch["pace"]), ("sentences", pace), ("pace-1", 1.0))[2 if args.paces_only else 0:]:
                audio = [clone_dev.speak(model, r[None], h, pitch=Pitch(pitch["scale"], pitch["spread"], p))
                         for r, h in zip(rows[:2], spoken_ids[:2], strict=True)]
                arms[arm][name] = {**meta, "audio": audio}
            # The oracle: the pace at which the voice's held-out sentences last as long as the target's.
            theirs = sum(trim_edges(a).size for a in target(name, clone_dev.cache_folder()).held_out_16k)
            oracle = sum(trim_edges(at_16k(a)).size for a in arms["pace-1"][name]["audio"]) / theirs
            measured[name] = {"device": pitch["pace"], "sentences": pace, "oracle": oracle,
                              "sentences_in_words": len(pieces)}
            print(f"{config} {name}: pace on the device {pitch['pace']:.3f}, a sentence at a time {pace:.3f} "
                  f"({len(pieces)}), oracle {oracle:.3f}", flush=True)
        errors = {arm: float(np.mean([abs(np.log(m[arm] / m["oracle"])) for m in measured.values()]))
                  for arm in ("device", "sentences")}
        print(f"{config}: mean |log(pace / oracle)| {errors}")
        report[config] = {"paces": measured, "log_error": errors}
        for arm, fitted in ({} if args.paces_only else arms).items():
            report[config][arm] = clone_dev.score(scorer, stock_audio, fitted, with_wer=False)
            clone_dev.print_table(f"{config}, {arm}", report[config][arm])
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2, default=float) + "\n")


if __name__ == "__main__":
    main()
