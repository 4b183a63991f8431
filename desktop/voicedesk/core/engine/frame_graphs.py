"""Synthesis's frame-rate half (F0 and energy, decoder, vocoder) replayed as CUDA graphs.

Eagerly, a sentence on a fast GPU is ~3 000 small kernels launched one by one by the host, which takes
4-8× longer than the GPU's own work (docs/benchmarks/gpu-profile.md). A CUDA graph launches them all
at once, but replays one fixed shape, and every sentence has its own length. So sentences are padded
up to a length bucket and the pass is masked to give the unpadded result (`masked_frames.py`): one
graph per bucket serves every sentence that fits it. Text encoding, durations and the shared LSTM (a
few dozen launches) stay eager; they decide the length.

    graphs = FrameGraphs(model)
    graphs.prepare(max_frames)  # or step by step: for _ in graphs.prepare_steps(max_frames): ...
    model.infer(ids, ref_s, speaker=graphs.speak_frames)

Capturing a bucket takes ~0.3 s on an H200 (10× a sentence's replay), so speaking never captures: a
sentence whose bucket has no graph yet is spoken eagerly, which is what a graph would replay.

On the CPU there is nothing to capture: `capture=False` runs the same padded pass eagerly (the tests'
view of the graphs' inputs and outputs).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

from voicedesk.core.engine.config import KOKORO_CONFIG, NEUTRAL_PITCH, STYLE_DIM, Pitch
from voicedesk.core.engine.cuda_capture import capture, graph_key
from voicedesk.core.engine.masked_frames import samples_per_frame, speak_padded
from voicedesk.core.engine.model import KokoroModel, TextFeatures
from voicedesk.core.engine.token_graphs import TokenGraphs

log = logging.getLogger(__name__)

# (up to this many frames, round up to a multiple of this); a frame is 25 ms. Finer buckets waste less
# padding, coarser ones capture fewer graphs; beyond the last, sentences are spoken eagerly.
BUCKETS = ((256, 32), (512, 64), (2048, 128))
HIDDEN = KOKORO_CONFIG["hidden_dim"]  # channels of the shared LSTM's output and of the text encoding


def bucket_frames(frames: int) -> int | None:
    """The padded length for `frames`, or None when it is longer than every bucket."""
    for limit, step in BUCKETS:
        if frames <= limit:
            return -(-frames // step) * step
    return None


def all_buckets(max_frames: int) -> list[int]:
    """Every bucket length up to the one that holds `max_frames`."""
    last = bucket_frames(max_frames) or BUCKETS[-1][0]
    lengths: list[int] = []
    start = 0
    for limit, step in BUCKETS:
        lengths += range(start + step, min(limit, last) + 1, step)
        start = limit
    return lengths


@dataclass
class _Bucket:
    """Static inputs and outputs of one padded length; the graph reads and writes these tensors."""

    shared: torch.Tensor
    asr: torch.Tensor
    ref_s: torch.Tensor
    initial: torch.Tensor
    noise: torch.Tensor
    real_frames: torch.Tensor
    pitch: torch.Tensor  # [2]: the voice's pitch scale and spread
    outputs: tuple[torch.Tensor, torch.Tensor] | None = None
    graph: torch.cuda.CUDAGraph | None = field(default=None, repr=False)


class FrameGraphs:
    """One CUDA graph per length bucket for one model, captured when a bucket is first needed."""

    def __init__(self, model: KokoroModel, capture: bool = True, autotune: bool = False) -> None:
        self.model = model
        self.capture = capture
        self.autotune = autotune  # cuDNN's autotuner while capturing (cuda_capture.py: off by default)
        self.tokens = TokenGraphs(model, capture, autotune)  # the pass's token-rate half, graphed the same way
        self.failure: str | None = None  # why capturing stopped; from then on the pass is eager
        self._buckets: dict[tuple[int, bool, bool], _Bucket] = {}
        self._pool: Any = None  # one memory pool for all graphs: they never run at once
        self._samples_per_frame = samples_per_frame(model)
        self._harmonics = int(model.decoder.generator.m_source.l_sin_gen.dim)

    @property
    def captured(self) -> int:
        return sum(bucket.graph is not None for bucket in self._buckets.values())

    def speak_frames(
        self,
        text: TextFeatures,
        d: torch.Tensor,
        frames: torch.Tensor,
        ref_s: torch.Tensor,
        rng: torch.Generator | None = None,
        pitch: Pitch = NEUTRAL_PITCH,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """`KokoroModel.speak_frames` through the bucket that holds this many frames."""
        model = self.model
        n = int(frames.shape[0])
        length = bucket_frames(n)
        if length is None or self.failure is not None:
            return model.speak_frames(text, d, frames, ref_s, rng, pitch)
        bucket = self._buckets.get(graph_key(length)) if self.capture else self._bucket(length)
        if bucket is None:
            return model.speak_frames(text, d, frames, ref_s, rng, pitch)
        samples = n * self._samples_per_frame
        bucket.shared.zero_()
        bucket.shared[..., :n].copy_(model.shared_prosody(d, frames))
        bucket.asr.zero_()
        bucket.asr[..., :n].copy_(text.t_en.index_select(-1, frames))
        bucket.ref_s.copy_(ref_s)
        bucket.initial.zero_()
        bucket.noise.zero_()
        randomness = model.source_randomness(samples, rng, ref_s.device)
        if randomness is not None:
            bucket.initial.copy_(randomness[0])
            bucket.noise[:, :samples].copy_(randomness[1])
        bucket.real_frames.fill_(n)
        bucket.pitch[0], bucket.pitch[1] = pitch.scale, pitch.spread  # scalar fills: no copy from the host
        audio, f0 = self._run(bucket)
        return audio[:samples].clone(), f0[:, : 2 * n].clone()

    def prepare(self, max_frames: int) -> int:
        """Capture every bucket up to `max_frames` now; returns how many graphs there are."""
        for _ in self.prepare_steps(max_frames):
            pass
        return self.captured

    def prepare_steps(self, max_frames: int) -> Iterator[int]:
        """Capture the buckets up to `max_frames` one at a time, shortest (the commonest sentences)
        first, each with a bucket of the text graphs, yielding the number of frame graphs after each;
        stops early when capturing fails."""
        tokens = self.tokens.prepare_steps()
        for length in all_buckets(max_frames):
            next(tokens, None)
            if self.failure is not None:
                return
            try:
                self._bucket(length)
            except torch.OutOfMemoryError:  # the longer sentences stay eager
                log.warning("GPU memory ran short capturing speech graphs; %d captured", self.captured)
                torch.cuda.empty_cache()
                return
            yield self.captured
        for _ in tokens:  # the text graphs of longer chunks
            yield self.captured

    def _run(self, bucket: _Bucket) -> tuple[torch.Tensor, torch.Tensor]:
        if bucket.graph is not None:
            bucket.graph.replay()
            assert bucket.outputs is not None
            return bucket.outputs
        return self._pass(bucket)

    def _pass(self, bucket: _Bucket) -> tuple[torch.Tensor, torch.Tensor]:
        randomness = (bucket.initial, bucket.noise)
        return speak_padded(self.model, bucket.shared, bucket.asr, bucket.ref_s, randomness, bucket.real_frames,
                            bucket.pitch)

    def _bucket(self, length: int) -> _Bucket | None:
        """The bucket of `length` for the current settings, captured now if it has no graph yet."""
        key = graph_key(length)
        if key not in self._buckets:
            bucket = self._new_bucket(length)
            if self.capture:
                try:
                    self._capture(bucket)
                except torch.OutOfMemoryError:
                    raise  # not a capture that cannot work: `prepare_steps` stops, speaking goes on
                except RuntimeError as exc:  # a driver or PyTorch that cannot capture it: slower, not broken
                    log.warning("speaking without CUDA graphs: %s", exc)
                    self.failure = str(exc).splitlines()[0]
                    return None
            self._buckets[key] = bucket
        return self._buckets[key]

    def _new_bucket(self, length: int) -> _Bucket:
        device = self.model.device
        with torch.inference_mode(False):  # plain tensors: the graph writes them outside inference mode too
            return _Bucket(
                shared=torch.zeros(1, HIDDEN, length, device=device),
                asr=torch.zeros(1, HIDDEN, length, device=device),
                ref_s=torch.zeros(1, STYLE_DIM, device=device),
                initial=torch.zeros(1, self._harmonics, device=device),
                noise=torch.zeros(1, length * self._samples_per_frame, self._harmonics, device=device),
                real_frames=torch.full((), length, dtype=torch.long, device=device),
                pitch=torch.ones(2, device=device),
            )

    def _capture(self, bucket: _Bucket) -> None:
        """Capture the bucket's pass, then replay it once on probe inputs and check it against the eager
        pass on the same inputs: a graph that would speak wrongly is never used."""
        with torch.inference_mode(False), torch.no_grad():
            _fill_probe(bucket)
            if self._pool is None:
                self._pool = torch.cuda.graph_pool_handle()
            graph, outputs, expected = capture(lambda: self._pass(bucket), self._pool, self.autotune)
            problem = replay_disagrees(expected, outputs)
            if problem:
                raise RuntimeError(f"a replayed graph disagreed with the eager pass ({problem})")
        bucket.graph, bucket.outputs = graph, (outputs[0], outputs[1])


def _fill_probe(bucket: _Bucket) -> None:
    """Inputs of a realistic scale, a few frames short of the bucket (so the masking takes part)."""
    rng = torch.Generator(device=bucket.shared.device).manual_seed(0)
    for tensor, scale in ((bucket.shared, 0.5), (bucket.asr, 0.5), (bucket.ref_s, 0.2)):
        tensor.copy_(torch.randn(tensor.shape, generator=rng, device=tensor.device) * scale)
    bucket.real_frames.fill_(bucket.shared.shape[-1] - 3)
    bucket.pitch.copy_(torch.tensor([0.9, 0.6]))


def replay_disagrees(
    expected: tuple[torch.Tensor, ...], got: tuple[torch.Tensor, ...], min_snr_db: float = 15.0
) -> str | None:
    """Why (audio, F0) `got` is not the pass `expected` (None when it is). F0 is smooth in its inputs
    and must match closely; audio only to `min_snr_db`: the vocoder takes the phase of near-silent STFT
    bins, which flips with rounding (a 1e-6 change of the style costs 30-45 dB)."""
    (audio, f0), (audio_got, f0_got) = expected, got
    if not (torch.isfinite(audio_got).all() and torch.isfinite(f0_got).all()):
        return "not finite"
    if not torch.allclose(f0_got.float(), f0.float(), rtol=1e-3, atol=1e-2):
        return f"F0 differs by up to {float((f0_got - f0).abs().max()):.3g} Hz"
    error = float((audio_got.float() - audio.float()).square().sum())
    signal = float(audio.float().square().sum())
    if error > 0 and (signal == 0 or 10 * math.log10(signal / error) < min_snr_db):
        return f"audio SNR {10 * math.log10(max(signal, 1e-30) / error):.1f} dB"
    return None
