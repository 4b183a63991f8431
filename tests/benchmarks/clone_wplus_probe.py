"""Would a timbre per decoder block help cloning? A probe on the development voices (clone-dev.md, sweep 12).

The fitted voice gives every decoder block the same 128-number timbre. Here each of the decoder's 13
style-conditioned blocks (its encode block, four decode blocks, the generator's six resblocks and two
noise blocks) gets its own offset on top of that timbre ("W+" in the image-generation literature), fitted
after the shipped fit on the prompt's own words with the fit's own loss (GE2E similarity, the aligned
envelope distance, the spectral shape) and a penalty on the offsets. The judge then compares the
held-out speech of the voice with and without the offsets (one set of styles, the same random source:
a paired comparison), as gaps closed, and Whisper checks the words still come through.

Usage (repository root, venv active): python tests/benchmarks/clone_wplus_probe.py [--steps 20] [--lr 0.05]
    [--reg 0.01] [--targets a,b] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "desktop"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import clone_dev  # noqa: E402
from clone_devset import TARGETS, target  # noqa: E402

from voicedesk.core.clone.align import aligned_distance, envelope  # noqa: E402
from voicedesk.core.clone.fit import (  # noqa: E402
    TIMBRE,
    FitResult,
    FitSettings,
    _fitting_mode,
    fit_voice,
    row_index,
    spectral_shape,
)
from voicedesk.core.clone.ge2e import GE2E  # noqa: E402
from voicedesk.core.clone.judge import Judge, trim_edges  # noqa: E402
from voicedesk.core.clone.torch_audio import resample_24k_to_16k  # noqa: E402
from voicedesk.core.clone.utterance import FixedUtterance  # noqa: E402

BLOCKS = ("decoder.encode", *(f"decoder.decode.{i}" for i in range(4)),
          *(f"decoder.generator.resblocks.{i}" for i in range(6)), *(f"decoder.generator.noise_res.{i}" for i in range(2)))


@contextmanager
def block_offsets(model: Any, offsets: torch.Tensor) -> Iterator[None]:
    """While inside, every style-conditioned layer of block b adds offsets[b] to the timbre it reads."""
    handles = []
    for b, prefix in enumerate(BLOCKS):
        for name, module in model.named_modules():
            if name.startswith(prefix + ".") and name.endswith(".fc") and isinstance(module, torch.nn.Linear):
                handles.append(module.register_forward_pre_hook(lambda _m, args, b=b: (args[0] + offsets[b],)))
    assert len(handles) == 58, f"expected the decoder's 58 style-conditioned layers, found {len(handles)}"
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


def fit_offsets(model: Any, result: FitResult, prompt_16k: np.ndarray, said_ids: list[int], ge2e: GE2E,
                steps: int, lr: float, reg: float, seed: int = 0) -> tuple[torch.Tensor, list[float]]:
    """The per-block offsets for a fitted voice, by Adam on the prompt's words; returns them and GE2E per step."""
    cfg = FitSettings()
    gen = torch.Generator().manual_seed(seed)
    prompt = torch.from_numpy(trim_edges(prompt_16k.astype(np.float32)))
    target_vec = torch.from_numpy(ge2e.embed_numpy(prompt.numpy()))
    with torch.no_grad():
        target_shape = spectral_shape(ge2e, prompt)
        target_env = envelope(ge2e.mel(prompt.unsqueeze(0))[0])
    ids = torch.tensor([[0, *said_ids, 0]])
    row = torch.from_numpy(result.style[row_index(len(said_ids), len(result.style))]).unsqueeze(0)
    utterance = FixedUtterance(model, ids, row, rng=gen)
    with torch.no_grad():
        d = model.prosody_features(utterance.text, row[:, TIMBRE:])
    offsets = torch.zeros(len(BLOCKS), TIMBRE, requires_grad=True)
    optimiser = torch.optim.Adam([offsets], lr=lr)
    sims: list[float] = []
    with _fitting_mode(model, ge2e, source_grad=False), block_offsets(model, offsets):
        for _ in range(steps):
            audio, _f0 = model.speak_frames(utterance.text, d, utterance.frames, row, gen, pitch=result.pitch)
            wav = resample_24k_to_16k(audio)
            sim = ge2e.embed([wav])[0] @ target_vec
            loss = (1 - sim + cfg.prompt_weight * aligned_distance(envelope(ge2e.mel(wav.unsqueeze(0))[0]), target_env)
                    + cfg.spectrum_weight * (spectral_shape(ge2e, wav) - target_shape).square().mean()
                    + reg * offsets.square().sum())
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            sims.append(float(sim.detach()))
    return offsets.detach(), sims


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--reg", type=float, default=0.01)
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--json")
    args = parser.parse_args()
    torch.set_num_threads(2)
    model, stock = clone_dev.load_local()
    ids = clone_dev.text_ids()
    ge2e, judge, scorer = GE2E(), Judge(), clone_dev.Scorer()
    stock_audio = {v: [clone_dev.speak(model, s, h) for h in ids["held_out"]] for v, s in stock.items()}
    rows: dict[str, Any] = {}
    for name in args.targets.split(","):
        prompt = target(name, clone_dev.cache_folder()).prompt_16k
        started = time.perf_counter()
        result = next(item for item in fit_voice(model, stock, prompt, ge2e=ge2e, judge=judge, fit_ids=ids["fit"],
                                                 check_ids=ids["check"], prompt_ids=ids["prompt"],
                                                 settings=FitSettings(seconds=600))
                      if isinstance(item, FitResult))
        fit_s = time.perf_counter() - started
        started = time.perf_counter()
        offsets, sims = fit_offsets(model, result, prompt, ids["prompt"], ge2e, args.steps, args.lr, args.reg)
        offsets_s = time.perf_counter() - started

        def held_out(with_offsets: bool, result: FitResult = result, offsets: torch.Tensor = offsets) -> list[np.ndarray]:
            with block_offsets(model, offsets if with_offsets else torch.zeros_like(offsets)):
                return [clone_dev.speak(model, result.style, h, pitch=result.pitch) for h in ids["held_out"]]

        nearest = max(scorer.similarity(name, audio) for audio in stock_audio.values())
        ceiling = scorer.ceiling[name]
        plain, plus = held_out(False), held_out(True)
        row = {"nearest_stock": nearest, "ceiling": ceiling, "fit_s": fit_s, "offsets_s": offsets_s,
               "ge2e_steps": sims, "offsets_rms": float(offsets.square().mean().sqrt())}
        for label, audio in (("shipped", plain), ("per_block", plus)):
            sim = scorer.similarity(name, audio)
            row[label] = {"similarity": sim, "gap_closed": (sim - nearest) / (ceiling - nearest), "wer": scorer.wer(audio)}
        rows[name] = row
        print(f"{name:9s} fit {fit_s:5.1f} s + offsets {offsets_s:5.1f} s  GE2E {sims[0]:.3f}->{sims[-1]:.3f}  "
              f"gap {row['shipped']['gap_closed']:.2f} -> {row['per_block']['gap_closed']:.2f}  "
              f"WER {row['shipped']['wer']:.1%} -> {row['per_block']['wer']:.1%}", flush=True)
    for label in ("shipped", "per_block"):
        gaps = [r[label]["gap_closed"] for r in rows.values()]
        print(f"{label:9s} mean gap closed {np.mean(gaps):.3f}, min {min(gaps):.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                               "torch": torch.__version__, "targets": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
