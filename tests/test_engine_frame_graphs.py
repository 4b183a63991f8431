"""Synthesis through length buckets (what CUDA replays as graphs), on the CPU with the real model: the
padded, masked pass must speak what the unpadded pass speaks. The capture itself needs CUDA; its
figures are in docs/benchmarks/gpu-profile.md."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from voicedesk.core.engine.config import Pitch
from voicedesk.core.engine.frame_graphs import BUCKETS, FrameGraphs, all_buckets, bucket_frames

SENTENCE = "ðə tɹˈAn tə ðə kˈOst lˈivz æt nˈun."  # 2.5 s: pads into a 128-frame bucket


def _snr_db(reference: torch.Tensor, other: torch.Tensor) -> float:
    return float(10 * torch.log10(reference.square().sum() / (reference - other).square().sum()))


def test_buckets_round_up_and_cover_every_length() -> None:
    assert bucket_frames(1) == 32 and bucket_frames(32) == 32 and bucket_frames(33) == 64
    assert bucket_frames(257) == 320 and bucket_frames(2048) == 2048
    assert bucket_frames(BUCKETS[-1][0] + 1) is None  # longer sentences are spoken eagerly
    lengths = all_buckets(300)
    assert lengths == [32, 64, 96, 128, 160, 192, 224, 256, 320]
    assert all(bucket_frames(n) in lengths for n in range(1, 321))


@pytest.mark.parametrize("deterministic", [True, False])
def test_padded_pass_speaks_as_the_unpadded_one(cpu_engine: Any, deterministic: bool) -> None:
    model = cpu_engine.model
    ids = cpu_engine.token_ids(SENTENCE)
    style = cpu_engine.style_tensor(cpu_engine.stock_voice("jm_kumo"), len(SENTENCE))
    graphs = FrameGraphs(model, capture=False)
    bf16 = model.vocoder_bf16
    model.deterministic_source, model.vocoder_bf16 = deterministic, False  # the CUDA pass is float32
    try:
        # At a cloned voice's own pitch: the graphs take it as an input like the style.
        exact = model.infer(ids, style, rng=torch.Generator().manual_seed(4), pitch=Pitch(0.9, 0.6))
        padded = model.infer(ids, style, rng=torch.Generator().manual_seed(4), speaker=graphs.speak_frames,
                             pitch=Pitch(0.9, 0.6))
        # The vocoder takes the phase of near-silent STFT bins, which rounding flips: how far a 1e-6
        # change of the style moves the audio is the yardstick for "equal".
        nudged = model.infer(ids, style * (1 + 1e-6), rng=torch.Generator().manual_seed(4),
                             durations=exact.durations, pitch=Pitch(0.9, 0.6))
    finally:
        model.deterministic_source, model.vocoder_bf16 = False, bf16
    frames = int(exact.durations.sum())
    assert bucket_frames(frames) > frames  # the pass really was padded
    assert padded.audio.shape == exact.audio.shape and padded.f0.shape == exact.f0.shape
    # F0 is a smooth function of the inputs: equal up to rounding. (Unmasked, a transposed convolution's
    # bias past the end moved the last F0 value by 0.3 Hz and the audio by 20 dB.)
    assert torch.allclose(padded.f0, exact.f0, atol=1e-3)
    assert _snr_db(exact.audio, padded.audio) > max(25.0, _snr_db(exact.audio, nudged.audio))


def test_past_the_end_the_padded_outputs_are_silent(cpu_engine: Any) -> None:
    from voicedesk.core.engine.masked_frames import samples_per_frame, speak_padded

    model = cpu_engine.model
    torch.manual_seed(0)
    length, real = 64, 40
    shared, asr = torch.randn(1, 512, length), torch.randn(1, 512, length)
    shared[..., real:] = 0
    asr[..., real:] = 0
    style = cpu_engine.style_tensor(cpu_engine.stock_voice("jf_alpha"), 20)
    harmonics = model.decoder.generator.m_source.l_sin_gen.dim
    noise = (torch.zeros(1, harmonics), torch.zeros(1, length * samples_per_frame(model), harmonics))
    with torch.inference_mode():
        audio, f0 = speak_padded(model, shared, asr, style, noise, torch.tensor(real), torch.ones(2))
    end = real * samples_per_frame(model)
    assert torch.isfinite(audio).all() and audio[end:].abs().max() == 0 and f0[:, 2 * real :].abs().max() == 0
    assert audio[:end].abs().max() > 0.01


def test_engine_graphs_only_on_cuda(cpu_engine: Any) -> None:
    assert cpu_engine.graphs is None and cpu_engine.prepare_graphs() == 0


def test_a_replay_is_checked_against_the_eager_pass(cpu_engine: Any) -> None:
    # On CUDA each captured graph is replayed once on probe inputs and compared with the eager pass;
    # here the check itself, on real outputs of the padded pass.
    from voicedesk.core.engine.frame_graphs import replay_disagrees
    from voicedesk.core.engine.masked_frames import samples_per_frame, speak_padded

    model = cpu_engine.model
    torch.manual_seed(1)
    length = 48
    shared, asr = torch.randn(1, 512, length) * 0.5, torch.randn(1, 512, length) * 0.5
    harmonics = model.decoder.generator.m_source.l_sin_gen.dim
    noise = (torch.zeros(1, harmonics), torch.zeros(1, length * samples_per_frame(model), harmonics))

    def speak(voice: str) -> tuple[torch.Tensor, torch.Tensor]:
        style = cpu_engine.style_tensor(cpu_engine.stock_voice(voice), 20)
        with torch.inference_mode():
            return speak_padded(model, shared, asr, style, noise, torch.tensor(length - 3), torch.ones(2))

    expected = speak("jf_alpha")
    assert replay_disagrees(expected, speak("jf_alpha")) is None
    assert "F0" in (replay_disagrees(expected, speak("jm_kumo")) or "")
    silent = (torch.zeros_like(expected[0]), expected[1])
    assert "SNR" in (replay_disagrees(expected, silent) or "")
    broken = (expected[0] * float("nan"), expected[1])
    assert replay_disagrees(expected, broken) == "not finite"


def test_the_speed_note_says_how_speech_runs(cpu_engine: Any) -> None:
    # The status panel's "Speech" row; the GPU wording is checked without a GPU (nothing runs here).
    from voicedesk.core.engine import Engine

    graphs = FrameGraphs(cpu_engine.model, capture=False)
    gpu = Engine(cpu_engine.model, "cuda", "probe passed", False, graphs)
    assert gpu.speed_note() == "GPU, float32, CUDA graphs for 0 sentence lengths"
    graphs.failure = "capture failed"
    assert gpu.speed_note() == "GPU, float32, eager: CUDA graphs failed (capture failed)"
    assert Engine(cpu_engine.model, "cuda", "x", True).speed_note() == "GPU, float16, eager (CUDA graphs off)"
    assert cpu_engine.speed_note().startswith("CPU, ")


def test_speaking_never_captures_a_graph(cpu_engine: Any) -> None:
    """Capturing takes seconds, so only `prepare_graphs` does it: a sentence whose bucket has no graph
    is spoken eagerly (on the CPU an attempt to capture would fail and mark the graphs as failed)."""
    model = cpu_engine.model
    ids = cpu_engine.token_ids(SENTENCE)
    style = cpu_engine.style_tensor(cpu_engine.stock_voice("jf_alpha"), len(SENTENCE))
    graphs = FrameGraphs(model, capture=True)
    model.deterministic_source = True
    try:
        eager = model.infer(ids, style)
        through = model.infer(ids, style, speaker=graphs.speak_frames, front=graphs.tokens.front)
    finally:
        model.deterministic_source = False
    assert torch.equal(eager.audio, through.audio)
    assert graphs.captured == 0 and graphs.failure is None
    assert graphs.tokens.captured == 0 and graphs.tokens.failure is None


def test_graphs_are_prepared_step_by_step_until_the_engine_leaves_the_gpu(cpu_engine: Any) -> None:
    from voicedesk.core.engine import Engine

    # The padded passes without capture stand in for the graphs (the steps are what is tested here).
    engine = Engine(cpu_engine.model, "cpu", "test", False, FrameGraphs(cpu_engine.model, capture=False))
    steps = engine.prepare_graphs_steps(seconds=2.0)  # 2 s = 80 frames: buckets of 32, 64 and 96
    assert next(steps) == 0
    assert len(list(steps)) == 15  # then the text graphs' buckets: 16 of 32 tokens up to 512
    steps = engine.prepare_graphs_steps(seconds=2.0)
    next(steps)
    engine.graphs = None  # what `move_to_cpu` does after running out of GPU memory
    assert list(steps) == []
