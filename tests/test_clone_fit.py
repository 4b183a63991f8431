"""Style-fit on the real Kokoro engine (CPU, a few steps), and `voicedesk clone` end to end.

Runtime: about 30 forward passes of a short sentence plus three engine loads in subprocesses:
an estimated 2-4 minutes on two free cores. On the shared development machine (load 10-18) the
fixture's fit alone took 8 minutes and a CLI clone over 10.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf

from voicedesk.core.audio.resample import resample
from voicedesk.core.clone.fit import (
    PACE_MATCHED,
    FitProgress,
    FitResult,
    FitSettings,
    fit_voice,
    run_to_end,
    transcript_ids,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng (tests/tools/install-system-deps.sh)"),
]
# A small budget: two steps of one short sentence each, the held-out sentence checked after each; the
# latest step's state checked, since in two steps a moving average barely leaves the start.
SMALL = FitSettings(steps=2, seconds=3600, sentences_per_step=1, check_every=1, patience=3, seed=7, average=0.0)


PROMPT_WORDS = "The old lighthouse keeper watched the boats come home."


@pytest.fixture(scope="module")
def prompt_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("prompt") / "mb-us2.wav"
    subprocess.run(["espeak-ng", "-v", "mb-us2", "-w", str(path), PROMPT_WORDS], check=True, capture_output=True)
    return path


@pytest.fixture(scope="module")
def prompt_16k(prompt_path: Path) -> np.ndarray:
    audio, rate = sf.read(prompt_path, dtype="float32")
    return resample(audio, rate, 16000)


@pytest.fixture(scope="module")
def stock(cpu_engine: Any) -> dict[str, np.ndarray]:
    return cpu_engine.fit_basis()


@pytest.fixture(scope="module")
def small_fit(cpu_engine: Any, stock: dict[str, np.ndarray], prompt_16k: np.ndarray) -> tuple[list[Any], FitResult]:
    from voicedesk.core.clone.judge import Judge

    # A stock profile whose one voice is the prompt itself: no clone is closer than that.
    itself = Judge().embed(prompt_16k)
    items = list(fit_voice(cpu_engine.model, stock, prompt_16k, settings=SMALL,
                           stock_profile={"af_itself": itself, "bm_opposite": -itself}))
    result = items[-1]
    assert isinstance(result, FitResult)
    return items[:-1], result


def test_a_short_fit_moves_the_voice_toward_the_prompt(small_fit: tuple[list[Any], FitResult]) -> None:
    progress, result = small_fit
    # Judged by the independent encoder, never the one optimised.
    assert result.report.after > result.report.before + 0.03
    # The report names the stock voice the judge hears closest, and says it is closer than the clone.
    assert result.report.stock_voice == "af_itself" and (result.report.stock or 0) > 0.95
    assert result.report.stock_is_closer and "af_itself" in result.report.verdict
    assert result.style.dtype == np.float32 and result.style.shape == (510, 256)
    assert np.isfinite(result.style).all()
    assert 1 <= result.steps <= SMALL.steps
    # The male prompt starts from the male stock voice (the pitch-aware start), not a female near-tie.
    assert max(result.start, key=lambda k: result.start[k]) == "jm_kumo"
    assert result.prompt_pitch_hz is not None and result.prompt_pitch_hz < 140
    assert 0.9 < result.pitch.scale < 1.2  # the male start already speaks near the prompt's pitch
    steps = [p for p in progress if isinstance(p, FitProgress) and p.stage == "fitting"]
    assert [p.step for p in steps] == list(range(1, result.steps + 1))
    assert all(p.total == SMALL.steps and p.eta_seconds >= 0 for p in steps)


def test_the_same_seed_gives_the_same_voice(
    cpu_engine: Any, stock: dict[str, np.ndarray], prompt_16k: np.ndarray, small_fit: tuple[list[Any], FitResult]
) -> None:
    again = run_to_end(fit_voice(cpu_engine.model, stock, prompt_16k, settings=SMALL))
    assert np.array_equal(again.style, small_fit[1].style)
    assert (again.report.before, again.report.after) == (small_fit[1].report.before, small_fit[1].report.after)


def test_closing_the_fit_mid_way_saves_nothing_and_restores_the_model(
    cpu_engine: Any, stock: dict[str, np.ndarray], prompt_16k: np.ndarray, voicedesk_home: Path
) -> None:
    import torch

    from voicedesk.core.library import VoiceLibrary

    model = cpu_engine.model
    flags = [p.requires_grad for p in model.parameters()]
    before = torch.backends.cudnn.benchmark, torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.benchmark = True  # as a caller may have set it
    torch.backends.cudnn.allow_tf32 = True  # PyTorch's default for cuDNN convolutions
    job = fit_voice(model, stock, prompt_16k, settings=replace(SMALL, steps=50))
    try:
        for item in job:
            if isinstance(item, FitProgress) and item.stage == "fitting":
                # Every step speaks at a new length: re-tuning each one made GPU clones 8x slower.
                assert torch.backends.cudnn.benchmark is False
                assert torch.backends.cudnn.allow_tf32 is False  # full fp32 gradients by default
                break
        job.close()
        assert torch.backends.cudnn.benchmark is True and torch.backends.cudnn.allow_tf32 is True
    finally:
        torch.backends.cudnn.benchmark, torch.backends.cudnn.allow_tf32 = before
    assert VoiceLibrary().names() == []
    assert not any(path.is_file() for path in voicedesk_home.rglob("*.vdvoice"))
    assert [p.requires_grad for p in model.parameters()] == flags
    assert not any(m.training for m in model.modules())


def test_a_bounded_delta_stays_within_its_bound(
    cpu_engine: Any, stock: dict[str, np.ndarray], prompt_16k: np.ndarray
) -> None:
    # One stock voice as the start (no mixture), a learning rate far too high: only the bound holds
    # the timbre delta, which then sits at the bound's edge in many dimensions.
    settings = replace(SMALL, steps=1, mixture=False, lr_timbre=1.0, delta_bound=0.5, check_every=1)
    result = run_to_end(fit_voice(cpu_engine.model, stock, prompt_16k, settings=settings))
    (start,) = result.start
    rows = np.stack([stock[name] for name in stock])
    spread = rows[:, :, :128].std(0, ddof=1).mean(0)  # as torch computes it
    delta = result.style - stock[start]
    ratio = np.abs(delta[:, :128]) / spread
    assert ratio.max() <= 0.5 * 1.01  # the start keeps weights of 1e-4 on the other voices
    assert (ratio > 0.45).mean() > 0.5
    assert np.abs(delta[:, 128:]).max() < 1e-3  # prosody: no free delta (the 1e-4 weights aside)


def test_a_fit_that_breaks_the_voice_keeps_the_start(
    cpu_engine: Any, stock: dict[str, np.ndarray], prompt_16k: np.ndarray
) -> None:
    # A learning rate 300 times the default throws the timbre far outside every stock voice: the
    # decoder then makes noise at the wrong level, which no fitted state may be chosen for.
    # (The voice's own pitch and envelope map left out: either changes the report's "after" even for the start's
    # style, since the report judges the voice as it will speak.)
    settings = replace(SMALL, steps=1, mixture=False, lr_timbre=30.0, check_every=1, match_pitch=False, envelope=False)
    result = run_to_end(fit_voice(cpu_engine.model, stock, prompt_16k, settings=settings))
    (start,) = result.start
    assert np.abs(result.style - stock[start]).max() < 1e-3  # the start (up to its 1e-4 mixture weights)
    assert result.ge2e_after == result.ge2e_before
    assert result.report.after == pytest.approx(result.report.before, abs=0.02)


def test_a_voice_speaks_at_its_prompts_pitch(cpu_engine: Any, stock: dict[str, np.ndarray], tmp_path: Path) -> None:
    # mb-us1 speaks near 190 Hz; every female stock voice near 240 Hz, beyond what mixing their prosody
    # reaches: the voice carries its own F0 scale, which the engine applies when it speaks.
    from voicedesk.core.clone.pitch import median_pitch

    path = tmp_path / "mb-us1.wav"
    subprocess.run(["espeak-ng", "-v", "mb-us1", "-w", str(path), PROMPT_WORDS], check=True, capture_output=True)
    audio, rate = sf.read(path, dtype="float32")
    prompt = resample(audio, rate, 16000)
    result = run_to_end(fit_voice(cpu_engine.model, stock, prompt, settings=replace(SMALL, steps=1)))
    assert result.prompt_pitch_hz is not None and result.pitch.scale < 0.9
    from voicedesk.core.engine import join_chunks

    spoken = join_chunks(cpu_engine.synthesize("The garden gate was open.", result.style, seed=0, pitch=result.pitch))
    heard = median_pitch(resample(spoken, 24000, 16000), 16000)
    assert heard is not None and abs(heard / result.prompt_pitch_hz - 1) < 0.1


@pytest.fixture
def said_passes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Grows by one each time a fit speaks the prompt's words through its fixed utterance."""
    from voicedesk.core.clone.utterance import FixedUtterance

    passes: list[int] = []
    eager = FixedUtterance.eager
    monkeypatch.setattr(FixedUtterance, "eager", lambda self, row: (passes.append(1), eager(self, row))[1])
    return passes


def test_the_prompts_words_take_part_in_the_fit(
    cpu_engine: Any, stock: dict[str, np.ndarray], prompt_16k: np.ndarray, small_fit: tuple[list[Any], FitResult],
    said_passes: list[int],
) -> None:
    said = transcript_ids(PROMPT_WORDS, "en", prompt_16k.size / 16000)
    result = run_to_end(fit_voice(cpu_engine.model, stock, prompt_16k, settings=SMALL, prompt_ids=said))
    assert np.isfinite(result.style).all() and result.steps == SMALL.steps
    # The words spoken at the start's check (once: the fitting step starts from that speech), then by
    # each step and each check after it.
    assert len(said_passes) == 1 + 2 * SMALL.steps
    # The same seed and budget without the words gives another voice: the aligned term moved it.
    assert not np.array_equal(result.style, small_fit[1].style)
    assert result.report.after > result.report.before
    # The words also give the voice the prompt's pace: this MBROLA voice says them faster than the model
    # (1.2x, docs/benchmarks/clone-dev.md sweep 14); without words there is nothing to measure it on.
    assert 1.05 < result.pitch.pace <= PACE_MATCHED[1]
    assert small_fit[1].pitch.pace == 1.0
    # ... and its envelope map, learned from its speech of the words and the prompt (without the words, from its
    # speech of the check sentence).
    assert result.envelope is not None and small_fit[1].envelope is not None
    assert not np.allclose(result.envelope.transform, np.eye(len(result.envelope.transform)), atol=0.05)


def test_the_words_may_be_those_of_the_prompts_start(
    cpu_engine: Any, stock: dict[str, np.ndarray], prompt_16k: np.ndarray,
) -> None:
    # A longer recording whose words are known for its start only (as the CPU hears a long prompt): the pace is
    # measured on that stretch, so the voice speaks as fast as the speaker (1.2x), not as if the words took
    # the whole recording (about 0.6x, clipped to the slowest pace).
    said = transcript_ids(PROMPT_WORDS, "en", prompt_16k.size / 16000)
    longer = np.concatenate([prompt_16k, np.zeros(4000, np.float32), prompt_16k])
    result = run_to_end(fit_voice(cpu_engine.model, stock, longer, settings=replace(SMALL, steps=1), prompt_ids=said,
                                  said_16k=prompt_16k))
    assert np.isfinite(result.style).all()
    assert 1.05 < result.pitch.pace <= PACE_MATCHED[1]


def test_on_the_cpu_only_the_last_state_is_checked_by_default(
    cpu_engine: Any, stock: dict[str, np.ndarray], prompt_16k: np.ndarray, said_passes: list[int],
) -> None:
    # In a 2-core CPU's minute a check costs most of a step (docs/benchmarks/clone-dev.md, sweep 20).
    said = transcript_ids(PROMPT_WORDS, "en", prompt_16k.size / 16000)
    settings = replace(SMALL, steps=3, check_every=None)
    result = run_to_end(fit_voice(cpu_engine.model, stock, prompt_16k, settings=settings, prompt_ids=said))
    assert result.steps == 3 and np.isfinite(result.style).all()
    # The start's check and each step speak the words; the one check of the last state has no earlier
    # candidate to rank it against, so it speaks only the check sentence.
    assert len(said_passes) == 1 + 3
    assert result.report.after > result.report.before


def test_a_moving_average_is_checked_and_kept(
    cpu_engine: Any, stock: dict[str, np.ndarray], prompt_16k: np.ndarray, small_fit: tuple[list[Any], FitResult]
) -> None:
    """The same path as the plain fit (same seed), but what is checked and kept is the parameters'
    moving average: one that follows the latest step keeps the plain fit's voice, a slower one another."""
    plain = small_fit[1]
    following = run_to_end(fit_voice(cpu_engine.model, stock, prompt_16k, settings=replace(SMALL, average=1e-9)))
    assert np.allclose(following.style, plain.style, atol=1e-5) and following.steps == plain.steps
    slower = run_to_end(fit_voice(cpu_engine.model, stock, prompt_16k, settings=replace(SMALL, average=0.5)))
    assert slower.start == plain.start and slower.ge2e_before == plain.ge2e_before  # the same start
    assert not np.allclose(slower.style, plain.style, atol=1e-3)
    assert np.isfinite(slower.style).all()


def test_the_synthesis_graphs_speak_the_passes_without_gradients(
    cpu_engine: Any, stock: dict[str, np.ndarray], prompt_16k: np.ndarray, small_fit: tuple[list[Any], FitResult]
) -> None:
    """On CUDA the ranking, checks and report go through the engine's graphs; on the CPU the same
    padded passes run eagerly (`capture=False`), and must rank and judge as the plain model does."""
    from voicedesk.core.engine.frame_graphs import FrameGraphs

    graphs = FrameGraphs(cpu_engine.model, capture=False)
    spoken: list[int] = []
    inner = graphs.speak_frames

    def counted(*args: Any, **kwargs: Any) -> Any:
        spoken.append(int(args[2].shape[0]))
        return inner(*args, **kwargs)

    graphs.speak_frames = counted  # type: ignore[method-assign]
    every_voice = replace(SMALL, rank_pitch_gap=0.0)  # every stock voice spoken for the ranking
    result = run_to_end(fit_voice(cpu_engine.model, stock, prompt_16k, settings=every_voice, graphs=graphs))
    plain = small_fit[1]  # (those out of pitch reach not spoken: the same start, see below)
    # Five stock voices ranked, the start checked, a check after each of two steps, the report.
    assert len(spoken) == len(stock) + 1 + SMALL.steps + 1
    assert result.start.keys() == plain.start.keys()
    assert all(abs(result.start[k] - plain.start[k]) < 0.02 for k in plain.start)
    assert abs(result.ge2e_before - plain.ge2e_before) < 0.005
    assert np.isfinite(result.style).all() and result.report.after > result.report.before + 0.03


def test_stock_voices_out_of_pitch_reach_are_not_spoken_for_the_ranking(
    cpu_engine: Any, stock: dict[str, np.ndarray], prompt_16k: np.ndarray
) -> None:
    # The prompt is a low male voice (MBROLA us2, near 100 Hz); the female stock voices speak an octave or
    # more above it. Their pitch is predicted without speaking, and the far ones are left out of the ranking.
    import math

    import torch

    from voicedesk.core.clone.fit import log_pitch, octaves, pitch_distances, text_ids, within_reach
    from voicedesk.core.clone.pitch import median_pitch

    model = cpu_engine.model
    said = text_ids(PROMPT_WORDS)
    ids = torch.tensor([[0, *said, 0]])
    names = list(stock)
    styles = [cpu_engine.style_tensor(stock[n], len(said)) for n in names]
    pitch = median_pitch(prompt_16k, 16000)
    assert pitch is not None and pitch < 130
    target = math.log(pitch)
    with torch.no_grad():
        distance = pitch_distances(model, ids, styles, target)
        # What the ranking would measure by speaking each voice: the pitch of its spoken pass.
        spoken = []
        for style in styles:
            lp = log_pitch(model.synthesize(ids, style).f0)
            assert lp is not None
            spoken.append(octaves(float(lp), target))
    assert sorted(distance) == list(range(len(names)))
    assert all(abs(distance[v] - spoken[v]) < 0.02 for v in distance)  # predicted without speaking, the same
    reach = within_reach(distance, len(names), 0.9)
    nearest = min(spoken)
    assert names.index("jm_kumo") in reach and len(reach) < len(names)
    assert all(spoken[v] > nearest + 0.9 for v in range(len(names)) if v not in reach)
    assert all(spoken[v] <= nearest + 0.9 + 0.05 for v in reach)
    assert within_reach(distance, len(names), 0.0) == set(range(len(names)))  # 0: all spoken
    assert pitch_distances(model, ids, styles, None) == {}  # no prompt pitch: no distances ...
    assert within_reach({}, len(names), 0.9) == set(range(len(names)))  # ... and all spoken


def test_the_fixed_utterance_speaks_as_the_whole_model_does(cpu_engine: Any) -> None:
    # The fit speaks the prompt's words through FixedUtterance (on CUDA, as graph replays): the same
    # speech and the same style gradient as the whole model at those durations.
    import torch

    from voicedesk.core.clone.fit import text_ids
    from voicedesk.core.clone.torch_audio import resample_24k_to_16k
    from voicedesk.core.clone.utterance import FixedUtterance

    model = cpu_engine.model
    said = text_ids(PROMPT_WORDS)
    ids = torch.tensor([[0, *said, 0]])
    start = cpu_engine.style_tensor(cpu_engine.stock_voice("jm_kumo"), len(said))
    moved = start + 0.05 * torch.randn(start.shape, generator=torch.Generator().manual_seed(1))
    # Two code paths must compute one thing: compared in float32 (bfloat16 would round each its own way).
    bf16, model.deterministic_source, model.vocoder_bf16 = model.vocoder_bf16, True, False
    try:
        utterance = FixedUtterance(model, ids, start)
        durations = model.infer(ids, start).durations

        def gradient(speak: Any) -> tuple[torch.Tensor, torch.Tensor]:
            row = moved.clone().requires_grad_(True)
            wav, f0 = speak(row)
            (grad,) = torch.autograd.grad(wav.square().mean() + 1e-4 * f0.mean(), row)
            return wav.detach(), grad

        wav, grad = gradient(utterance)
        expected_wav, expected_grad = gradient(
            lambda row: (lambda out: (resample_24k_to_16k(out.audio), out.f0))(model.synthesize(ids, row, durations=durations))
        )
    finally:
        model.deterministic_source, model.vocoder_bf16 = False, bf16
    assert utterance.frames.shape[0] == int(durations.sum())  # the timing stays the start's
    assert torch.allclose(wav, expected_wav, atol=1e-5)
    assert torch.isfinite(grad).all() and grad.abs().sum() > 0
    assert torch.allclose(grad, expected_grad, rtol=1e-3, atol=1e-7)


def test_the_fixed_shape_step_computes_the_eager_fits_loss(cpu_engine: Any, prompt_16k: np.ndarray) -> None:
    # On CUDA the whole step on the prompt's words is one graph (said_step.py); it must compute the loss
    # the eager step computes, term by term (augmentation off: the two draw their noise differently).
    import math

    import torch

    from voicedesk.core.clone.align import cepstra, dtw_path, envelope, path_cost, speech_frames
    from voicedesk.core.clone.fit import spectral_shape, text_ids
    from voicedesk.core.clone.ge2e import GE2E
    from voicedesk.core.clone.pitch import median_pitch
    from voicedesk.core.clone.said_step import CROP, SaidStep, Targets, Weights
    from voicedesk.core.clone.torch_audio import augment_fixed_length
    from voicedesk.core.clone.utterance import FixedUtterance

    model, ge2e = cpu_engine.model, GE2E()
    said = text_ids(PROMPT_WORDS)
    ids = torch.tensor([[0, *said, 0]])
    prompt = torch.from_numpy(prompt_16k)
    targets = Targets(ge2e.embed([prompt])[0].detach(), math.log(median_pitch(prompt_16k, 16000) or 100.0),
                      spectral_shape(ge2e, prompt).detach(), envelope(ge2e.mel(prompt[None])[0]).detach())
    weights = Weights(pitch=1.0, spectrum=0.1, prompt=0.1, spectrum_voiced=False, augment=False)
    delta = torch.zeros(256, requires_grad=True)
    start = cpu_engine.style_tensor(cpu_engine.stock_voice("jm_kumo"), len(said))
    # Two code paths must compute one thing: compared in float32 (bfloat16 would round each its own way).
    bf16, model.deterministic_source, model.vocoder_bf16 = model.vocoder_bf16, True, False
    try:
        utterance = FixedUtterance(model, ids, start)
        step = SaidStep(utterance, ge2e, targets, weights, style=lambda: start + delta,
                        regulariser=lambda: 0.01 * delta.square().sum(), params=[delta])
        similarity = step.step()
        grad = delta.grad.clone()

        delta.grad = None
        # The step aligns along the path of speech spoken without gradients (the step before's). Spoken
        # with gradients the speech differs by rounding, which on some CPUs moves a near-tie of the path.
        with torch.no_grad():
            before = ge2e.mel(utterance(start + delta)[0][None])[0]
            rows, cols = dtw_path(path_cost(envelope(before).double().numpy(), targets.envelope.double().numpy()))
            frames = torch.from_numpy(np.flatnonzero(speech_frames(before).numpy())[rows])
        wav, f0 = utterance(start + delta)
        sim = ge2e.embed([wav])[0] @ targets.embedding
        voiced = f0[f0 > 50]
        loss = (1 - sim + (torch.log(voiced).mean() - targets.log_f0) ** 2
                + 0.1 * (spectral_shape(ge2e, wav) - targets.shape).square().mean()
                + 0.1 * (cepstra(ge2e.mel(wav[None])[0])[frames] - targets.envelope[cols]).square().mean()
                + 0.01 * delta.square().sum())
        torch.autograd.backward(loss)
        assert float(similarity) == pytest.approx(float(sim.detach()), abs=1e-5)
        assert delta.grad is not None and torch.allclose(grad, delta.grad, rtol=1e-3, atol=1e-6)

        # With augmentation and several views, the encoder hears each differently augmented copy and the
        # step follows their mean similarity.
        viewed = SaidStep(utterance, ge2e, targets, replace(weights, augment=True, views=3),
                          style=lambda: start + delta, regulariser=lambda: 0.01 * delta.square().sum(),
                          params=[delta], rng=torch.Generator().manual_seed(3))
        mean_similarity = float(viewed.step())
        again = torch.Generator().manual_seed(3)
        wav = utterance(start + delta)[0]  # with gradients, as the step speaks it (no_grad rounds differently)
        views = [float((ge2e.embed_one(augment_fixed_length(wav, again, CROP)) @ targets.embedding).detach())
                 for _ in range(3)]
    finally:
        model.deterministic_source, model.vocoder_bf16 = False, bf16
    assert max(views) - min(views) > 1e-4  # three different copies
    assert mean_similarity == pytest.approx(float(np.mean(views)), abs=1e-4)


def test_a_transcript_that_cannot_be_the_prompts_is_refused() -> None:
    from voicedesk.core.errors import InputError

    assert len(transcript_ids(PROMPT_WORDS, "en", 3.0)) > 20
    with pytest.raises(InputError, match="too few sounds"):
        transcript_ids("Hi.", "en", 3.0)
    with pytest.raises(InputError, match="too many sounds"):
        transcript_ids(PROMPT_WORDS * 3, "en", 3.0)


def test_a_step_with_non_finite_gradients_is_recognised() -> None:
    import torch

    from voicedesk.core.clone.fit import _finite_gradients

    a, b = torch.zeros(3, requires_grad=True), torch.zeros(2, requires_grad=True)
    optimiser = torch.optim.Adam([a, b])
    (a.sum() + b.sum()).backward()
    assert _finite_gradients(optimiser)
    assert b.grad is not None
    b.grad[1] = float("nan")
    assert not _finite_gradients(optimiser)


def _cli(args: list[str], home: Path, **kwargs: Any) -> subprocess.Popen[str]:
    env = {**os.environ, "VOICEDESK_HOME": str(home), "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "voicedesk", *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


def _finish(proc: subprocess.Popen[str], timeout: float) -> tuple[str, str]:
    # A generous limit: a loaded 2-core machine needs minutes for the engine load and one step.
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise


@pytest.mark.timeout(2400)
def test_cli_clones_and_saves_the_voice(prompt_path: Path, voicedesk_home: Path) -> None:
    from voicedesk.core.engine.voices import stock_voice_names
    from voicedesk.core.library import VoiceLibrary

    proc = _cli(["clone", str(prompt_path), "--name", "Keeper", "--device", "cpu", "--steps", "1", "--seconds", "3600",
                 "--transcript", PROMPT_WORDS], voicedesk_home)
    out, err = _finish(proc, 1800)
    assert proc.returncode == 0, err
    assert "Saved voice 'Keeper' (1 fitting step," in out and "% before" in out and "% after" in out
    saved = VoiceLibrary().load("Keeper")
    assert saved.style.shape == (510, 256)
    assert {"similarity_before", "similarity_after"} <= set(saved.scores)
    # The stock voices' profile (built by setup) names the closest of them, in the output and with the voice.
    assert saved.scores.get("closest_stock_voice") in stock_voice_names(), "no stock profile: run `voicedesk voices add-stock`"
    assert f"Closest stock voice: {saved.scores['closest_stock_voice']}, " in out or "is closer to the prompt" in out
    assert saved.transcript == PROMPT_WORDS
    # Words that cannot be the recording's are refused before the engine loads.
    proc = _cli(["clone", str(prompt_path), "--name", "Other", "--transcript", "Hi."], voicedesk_home)
    out, err = _finish(proc, 300)
    assert proc.returncode == 2 and "too few sounds" in err and "Traceback" not in err
    # A taken name fails at once, before any fitting, with advice.
    proc = _cli(["clone", str(prompt_path), "--name", "keeper", "--device", "cpu"], voicedesk_home)
    out, err = _finish(proc, 300)
    assert proc.returncode == 2 and "already exists" in err and "Traceback" not in err


@pytest.mark.timeout(2400)
def test_cli_ctrl_c_cancels_cleanly(prompt_path: Path, voicedesk_home: Path) -> None:
    # Ctrl-C as a terminal sends it, even where these tests run in the background of a shell without job
    # control (whose children start with SIGINT ignored, and then Python never raises KeyboardInterrupt).
    proc = _cli(["clone", str(prompt_path), "--name", "Halfway", "--device", "cpu", "--steps", "50", "--seconds", "3600"],
                voicedesk_home, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.stderr is not None
    for line in proc.stderr:
        if "step 1/" in line:
            break
    assert proc.poll() is None, "the clone ended before its first step"
    proc.send_signal(signal.SIGINT)
    _, err = _finish(proc, 300)
    assert proc.returncode == 130
    assert "nothing was saved" in err and "Traceback" not in err
    assert not any(voicedesk_home.rglob("*.vdvoice"))
