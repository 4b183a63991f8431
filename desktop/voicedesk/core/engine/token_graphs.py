"""Synthesis's token-rate half (text, prosody features, durations) replayed as CUDA graphs.

The text half of a sentence is ~280 small launches (ALBERT's twelve layers, five LSTMs, the text
encoder); on a fast GPU the host issuing them is most of its time. Padded to a bucket of token counts
(`masked_tokens.py` keeps the padding out of the real tokens' numbers), it replays as one graph per
bucket. The durations it ends with are then read back by the host, which decides the frame count.

    tokens = TokenGraphs(model)
    for _ in tokens.prepare_steps(): ...
    model.infer(ids, ref_s, front=tokens.front)

As with `frame_graphs.FrameGraphs`, speaking never captures (a length without a graph is eager), and
`capture=False` runs the padded pass eagerly: the tests' view on the CPU.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

from voicedesk.core.engine.config import MAX_PHONEMES, STYLE_DIM, TIMBRE_DIM
from voicedesk.core.engine.cuda_capture import capture, graph_key
from voicedesk.core.engine.masked_tokens import front_padded, split_lstms
from voicedesk.core.engine.model import KokoroModel, TextFeatures

log = logging.getLogger(__name__)

TOKEN_STEP = 32  # bucket lengths are multiples of this many tokens
MAX_TOKENS = MAX_PHONEMES + 2  # the model's longest input: phonemes and the two pads
Front = tuple[TextFeatures, torch.Tensor, torch.Tensor]


def token_bucket(n_tokens: int) -> int:
    return min(-(-n_tokens // TOKEN_STEP) * TOKEN_STEP, -(-MAX_TOKENS // TOKEN_STEP) * TOKEN_STEP)


@dataclass
class _Bucket:
    ids: torch.Tensor
    real: torch.Tensor
    style: torch.Tensor  # the prosody half of the style row
    speed: torch.Tensor
    outputs: tuple[torch.Tensor, ...] | None = None
    graph: torch.cuda.CUDAGraph | None = field(default=None, repr=False)


class TokenGraphs:
    """One CUDA graph per token-count bucket for one model, captured by `prepare_steps`."""

    def __init__(self, model: KokoroModel, capture: bool = True, autotune: bool = False) -> None:
        self.model = model
        self.capture = capture
        self.autotune = autotune  # cuDNN's autotuner while capturing (cuda_capture.py: off by default)
        self.failure: str | None = None
        self._split = split_lstms(model)
        self._buckets: dict[tuple[int, bool, bool], _Bucket] = {}
        self._pool: Any = None

    @property
    def captured(self) -> int:
        return sum(bucket.graph is not None for bucket in self._buckets.values())

    def front(self, input_ids: torch.Tensor, prosody_style: torch.Tensor, speed: float) -> Front | None:
        """Text features, prosody features [1, T, 640] and unrounded durations [T] of token ids [1, T]
        through the bucket that holds them; None where there is no graph for it (speak eagerly)."""
        n = int(input_ids.shape[1])
        length = token_bucket(n)
        if self.failure is not None or n > length:
            return None
        bucket = self._buckets.get(graph_key(length)) if self.capture else self._bucket(length)
        if bucket is None:
            return None
        bucket.ids.zero_()
        bucket.ids[:, :n].copy_(input_ids)
        bucket.real.fill_(n)
        bucket.style.copy_(prosody_style)
        bucket.speed.fill_(speed)
        d_en, t_en, d, raw = self._run(bucket)
        # Views into the graph's outputs, read before the next replay; the durations outlive it.
        return TextFeatures(d_en=d_en[..., :n], t_en=t_en[..., :n]), d[:, :n], raw[:n].clone()

    def prepare_steps(self) -> Iterator[int]:
        """Capture the buckets one at a time, shortest first, yielding the count after each."""
        for length in range(TOKEN_STEP, token_bucket(MAX_TOKENS) + 1, TOKEN_STEP):
            if self.failure is not None:
                return
            try:
                self._bucket(length)
            except torch.OutOfMemoryError:
                log.warning("GPU memory ran short capturing text graphs; %d captured", self.captured)
                torch.cuda.empty_cache()
                return
            yield self.captured

    def _run(self, bucket: _Bucket) -> tuple[torch.Tensor, ...]:
        if bucket.graph is not None:
            bucket.graph.replay()
            assert bucket.outputs is not None
            return bucket.outputs
        return self._pass(bucket)

    def _pass(self, bucket: _Bucket) -> tuple[torch.Tensor, ...]:
        return front_padded(self.model, self._split, bucket.ids, bucket.real, bucket.style, bucket.speed)

    def _bucket(self, length: int) -> _Bucket | None:
        key = graph_key(length)
        if key not in self._buckets:
            device = self.model.device
            with torch.inference_mode(False):
                bucket = _Bucket(
                    ids=torch.zeros(1, length, dtype=torch.long, device=device),
                    real=torch.full((), length, dtype=torch.long, device=device),
                    style=torch.zeros(1, STYLE_DIM - TIMBRE_DIM, device=device),
                    speed=torch.ones((), device=device),
                )
            if self.capture:
                try:
                    self._capture(bucket)
                except torch.OutOfMemoryError:
                    raise
                except RuntimeError as exc:  # slower, not broken: the text half stays eager
                    log.warning("text half without CUDA graphs: %s", exc)
                    self.failure = str(exc).splitlines()[0]
                    return None
            self._buckets[key] = bucket
        return self._buckets[key]

    def _capture(self, bucket: _Bucket) -> None:
        """Capture on probe inputs (random tokens, three short of the bucket) and check the replay."""
        with torch.inference_mode(False), torch.no_grad():
            rng = torch.Generator(device=bucket.ids.device).manual_seed(0)
            bucket.ids.copy_(torch.randint(1, 178, bucket.ids.shape, generator=rng, device=bucket.ids.device))
            bucket.real.fill_(bucket.ids.shape[1] - 3)
            bucket.style.copy_(torch.randn(bucket.style.shape, generator=rng, device=bucket.style.device) * 0.2)
            if self._pool is None:
                self._pool = torch.cuda.graph_pool_handle()
            graph, outputs, expected = capture(lambda: self._pass(bucket), self._pool, self.autotune)
            real = int(bucket.real)
            # The real tokens of d_en, t_en [1, C, T], d [1, T, C] and the durations [T].
            pairs = [(outputs[0][..., :real], expected[0][..., :real]), (outputs[1][..., :real], expected[1][..., :real]),
                     (outputs[2][:, :real], expected[2][:, :real]), (outputs[3][:real], expected[3][:real])]
            if not all(torch.allclose(got.float(), want.float(), rtol=1e-3, atol=1e-2) for got, want in pairs):
                raise RuntimeError("a replayed text graph disagreed with the eager pass")
        bucket.graph, bucket.outputs = graph, outputs

