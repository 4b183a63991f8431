"""A fitting step on the prompt's words with fixed shapes, so that on CUDA the whole step is one graph.

With the prompt's words every step speaks the same words (`FixedUtterance`) and computes the same terms
from that speech. Here each term keeps one shape from step to step: the encoder hears the speech
cropped by a fixed amount at a random place (random numbers drawn where the speech is), averages over
speech frames are masked means, and the frame-by-frame envelope distance follows a DTW path that the
host finds from the speech of the step before (the timing is fixed, so the path barely moves between
steps). On CUDA the forward pass and its backward are captured once and replayed at every step: the
host only finds the next path while the GPU works. On the CPU the same step runs eagerly.

This module imports torch at the top: import it only from code that already needs torch.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from voicedesk.core.clone.align import N_CEPSTRA, cepstra, dct_matrix, dtw_path, path_cost, speech_frames
from voicedesk.core.clone.fit import F0_VOICED_HZ, MIN_VOICED, shape_frames
from voicedesk.core.clone.torch_audio import augment_fixed_length
from voicedesk.core.clone.utterance import FixedUtterance, Speech

log = logging.getLogger(__name__)

CROP = 3200  # samples at 16 kHz cut from the edges (0.2 s), split between them at random


@dataclass(frozen=True)
class Targets:
    """What the step pulls the speech toward, all measured on the prompt."""

    embedding: torch.Tensor  # [256] GE2E
    log_f0: float | None  # log of the median pitch, None if the prompt has none
    shape: torch.Tensor  # [40] long-term spectral shape (fit.spectral_shape)
    envelope: torch.Tensor  # [speech frames, N_CEPSTRA] (align.envelope)


@dataclass(frozen=True)
class Weights:
    pitch: float
    spectrum: float
    prompt: float
    spectrum_voiced: bool
    augment: bool
    crop: int = CROP  # samples the encoder's augmentation cuts from the speech's edges
    views: int = 1  # differently augmented copies of the speech the encoder hears; their similarities averaged


class SaidStep:
    """`step()` computes the loss of the current style (read through `style`) and leaves its gradient in
    the parameters' `.grad`; it returns the GE2E similarity, as a tensor. When graphed, the `.grad`
    tensors are the graph's: the caller must not set them to None."""

    def __init__(self, utterance: FixedUtterance, ge2e: Any, targets: Targets, weights: Weights,
                 style: Callable[[], torch.Tensor], regulariser: Callable[[], torch.Tensor],
                 params: list[torch.Tensor], *, graph: bool = False, rng: torch.Generator | None = None,
                 first: torch.Tensor | None = None) -> None:
        """`first`: the 16 kHz speech of the starting style, if the caller has already spoken it."""
        self.utterance, self.ge2e, self.targets, self.weights = utterance, ge2e, targets, weights
        self.style, self.regulariser, self.params, self.rng = style, regulariser, params, rng
        target_env = targets.envelope
        self._target_env_np = target_env.detach().cpu().double().numpy()
        self._dct = torch.from_numpy(dct_matrix(40, N_CEPSTRA)).to(target_env)
        with torch.no_grad():
            wav = utterance(style())[0] if first is None else first
            mel = ge2e.mel(wav.unsqueeze(0))[0]
        # The longest DTW path through frames × target frames; shorter paths are padded with weight 0.
        longest = int(mel.shape[0]) + int(target_env.shape[0])
        device = target_env.device
        self._rows = torch.zeros(longest, dtype=torch.long, device=device)
        self._cols = torch.zeros(longest, dtype=torch.long, device=device)
        self._path_weights = torch.zeros(longest, device=device)
        self._set_path(cepstra(mel, self._dct), speech_frames(mel))
        self._graph: torch.cuda.CUDAGraph | None = None
        self._outputs: tuple[torch.Tensor, ...] = ()
        if graph:
            try:
                self._capture()
            except RuntimeError as exc:  # a driver or PyTorch that cannot capture it: slower, not broken
                log.warning("fitting without a CUDA graph of the whole step: %s", exc)
                self._graph = None
                utterance.capture()  # the pass alone, then

    # -- the terms ---------------------------------------------------------------------------------

    def _set_path(self, envelope: torch.Tensor, speech: torch.Tensor) -> None:
        """The DTW path from this speech's speech frames to the prompt's, into the path buffers."""
        frames = np.flatnonzero(speech.cpu().numpy())
        ours = envelope.detach().cpu().double().numpy()[frames]
        cost = path_cost(ours, self._target_env_np)
        rows, cols = dtw_path(cost)
        n = len(rows)
        padded = np.zeros(self._rows.shape[0], dtype=np.int64)
        padded[:n] = frames[rows]
        self._rows.copy_(torch.from_numpy(padded))
        padded[:] = 0
        padded[:n] = cols
        self._cols.copy_(torch.from_numpy(padded))
        weights = np.zeros(self._rows.shape[0], dtype=np.float32)
        weights[:n] = 1.0 / (n * N_CEPSTRA)  # the mean over path and coefficients, as aligned_distance
        self._path_weights.copy_(torch.from_numpy(weights))

    def _loss(self, speak: Callable[[torch.Tensor], Speech] | None = None) -> tuple[torch.Tensor, ...]:
        """Similarity, loss, the speech's envelope and speech frames; the pass eager unless `speak` is
        given (a graphed pass, when the whole step could not be captured)."""
        w, t = self.weights, self.targets
        wav, f0 = (speak or self.utterance.eager)(self.style())
        mel = self.ge2e.mel(wav.unsqueeze(0))[0]
        envelope, speech = cepstra(mel, self._dct), speech_frames(mel)
        frames = shape_frames(mel, w.spectrum_voiced).float()  # spectral_shape's frames, as a mask
        ltas = torch.log((mel * frames[:, None]).sum(0) / frames.sum().clamp_min(1.0) + 1e-10)
        shape = (ltas - ltas.mean() - t.shape).square().mean()
        said = (self._path_weights[:, None] * (envelope[self._rows] - t.envelope[self._cols]).square()).sum()
        heard = [augment_fixed_length(wav, self.rng, w.crop) if w.augment else wav for _ in range(w.views)]
        similarity = torch.stack([self.ge2e.embed_one(view) for view in heard]).mean(0) @ t.embedding
        loss = 1 - similarity + w.spectrum * shape + w.prompt * said + self.regulariser()
        if t.log_f0 is not None:
            voiced = (f0 > F0_VOICED_HZ).float()
            count = voiced.sum()
            log_f0 = (torch.log(f0.clamp_min(1.0)) * voiced).sum() / count.clamp_min(1.0)
            loss = loss + w.pitch * (count >= MIN_VOICED).float() * (log_f0 - t.log_f0) ** 2
        return similarity, loss, envelope.detach(), speech

    # -- running -----------------------------------------------------------------------------------

    def _capture(self) -> None:
        side = torch.cuda.Stream()  # type: ignore[no-untyped-call]
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # one warm-up pass: lazy initialisation must not happen in capture
            for p in self.params:
                p.grad = None
            torch.autograd.backward(self._loss()[1])
        torch.cuda.current_stream().wait_stream(side)
        for p in self.params:
            p.grad = None
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            outputs = self._loss()
            torch.autograd.backward(outputs[1])
        self._graph, self._outputs = graph, outputs

    def step(self) -> torch.Tensor:
        if self._graph is not None:
            self._graph.replay()  # writes the gradients into the same `.grad` tensors every time
            similarity, loss, envelope, speech = self._outputs
        else:
            for p in self.params:
                p.grad = None
            similarity, loss, envelope, speech = self._loss(self.utterance)
            torch.autograd.backward(loss)
        self._set_path(envelope, speech)  # for the next step: reads the speech back, waits for the GPU
        return similarity.detach()

