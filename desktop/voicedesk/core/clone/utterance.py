"""One sentence spoken again and again while fitting, from a changing style, with its timing fixed.

What the model computes from the words alone (ALBERT, the text encoder) is computed once, and the
durations are taken once, from the starting style: durations take no gradient anyway. Every pass from
a style row to 16 kHz speech then has the same shapes and never reads back from the device, so on
CUDA it is recorded as two CUDA graphs, one for the forward and one for the backward, and each later
pass replays them: a fitting step on a GPU is bound by launching thousands of small kernels one by one
(docs/benchmarks/gpu-profile.md), which a replay does in one go. On the CPU the same pass runs eagerly.
A fit on the prompt's words usually captures its whole step around `eager` instead (said_step.py), and
graphs the pass alone only where that capture fails.

This module imports torch at the top: import it only from code that already needs torch.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, cast

import torch

from voicedesk.core.clone.torch_audio import resample_24k_to_16k
from voicedesk.core.engine.config import TIMBRE_DIM
from voicedesk.core.engine.model import frame_tokens, whole_frames

log = logging.getLogger(__name__)

Speech = tuple[torch.Tensor, torch.Tensor]  # 16 kHz audio [samples], F0 [1, 2 × frames]


class FixedUtterance:
    """`utterance(style_row)` → the 16 kHz speech of `ids` [1, T] and its F0, differentiable in the row.

    With `graph`, the outputs of one call are overwritten by the next: use them (and run the backward)
    before calling again."""

    def __init__(self, model: Any, ids: torch.Tensor, start_row: torch.Tensor, *, graph: bool = False,
                 rng: torch.Generator | None = None) -> None:
        self.model = model
        self.rng = rng
        with torch.no_grad():
            self.text = model.encode_text(ids)
            d = model.prosody_features(self.text, start_row[:, TIMBRE_DIM:])
            durations = whole_frames(model.predict_durations(d))
            self.frames = frame_tokens(durations)
        self._speak: Callable[[torch.Tensor], Speech] = self.eager
        self._start = start_row.detach().clone()
        if graph:
            self.capture()

    def capture(self) -> None:
        """From now on replay the pass as CUDA graphs (if they can be captured here)."""
        sample = self._start.clone().requires_grad_(True)
        try:
            graphed = torch.cuda.make_graphed_callables(self.eager, (sample,), num_warmup_iters=1)
            self._speak = cast(Callable[[torch.Tensor], Speech], graphed)
        except RuntimeError as exc:  # a driver or PyTorch that cannot capture it: slower, not broken
            log.warning("fitting without CUDA graphs: %s", exc)

    def eager(self, row: torch.Tensor) -> Speech:
        """The pass itself, never replayed (for a caller that captures a larger graph around it)."""
        d = self.model.prosody_features(self.text, row[:, TIMBRE_DIM:])
        audio, f0 = self.model.speak_frames(self.text, d, self.frames, row, self.rng)
        return resample_24k_to_16k(audio), f0

    def __call__(self, row: torch.Tensor) -> Speech:
        return self._speak(row)
