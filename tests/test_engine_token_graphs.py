"""The token-rate half padded to a bucket (what CUDA replays as graphs), on the CPU with the real model:
the real tokens' numbers must be the unpadded pass's."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from voicedesk.core.engine.masked_tokens import SplitLSTM, front_padded, split_lstms
from voicedesk.core.engine.token_graphs import TOKEN_STEP, TokenGraphs, token_bucket

SENTENCE = "ðə tɹˈAn tə ðə kˈOst lˈivz æt nˈun."


def test_token_buckets_round_up_to_the_model_limit() -> None:
    assert token_bucket(1) == TOKEN_STEP and token_bucket(32) == 32 and token_bucket(33) == 64
    assert token_bucket(512) == 512


def test_a_split_lstm_is_the_bidirectional_one_and_ignores_what_follows_the_real_steps() -> None:
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(6, 5, batch_first=True, bidirectional=True)
    split = SplitLSTM(lstm)
    x = torch.randn(1, 9, 6)
    with torch.no_grad():
        whole = split(x, torch.arange(8, -1, -1))  # nine real steps: the plain reversal
        assert torch.allclose(whole, lstm(x)[0], atol=1e-6)
        padded = torch.cat([x[:, :7], 100 * torch.randn(1, 4, 6)], dim=1)  # seven real steps, then junk
        reversal = torch.tensor([6, 5, 4, 3, 2, 1, 0, 7, 8, 9, 10])
        assert torch.allclose(split(padded, reversal)[:, :7], lstm(x[:, :7])[0], atol=1e-6)


@pytest.mark.parametrize("padding", [3, 40])
def test_the_padded_front_gives_the_unpadded_numbers(cpu_engine: Any, padding: int) -> None:
    model = cpu_engine.model
    ids = cpu_engine.token_ids(SENTENCE)
    n = ids.shape[1]
    style = cpu_engine.style_tensor(cpu_engine.stock_voice("jm_kumo"), len(SENTENCE))[:, 128:]
    padded = torch.zeros(1, n + padding, dtype=torch.long)
    padded[:, :n] = ids
    padded[:, n:] = torch.randint(1, 178, (1, padding))  # junk, not the pad token: the masks must hold
    with torch.inference_mode():
        text = model.encode_text(ids)
        d = model.prosody_features(text, style)
        raw = model.predict_durations(d, 1.2)
        d_en, t_en, d_pad, raw_pad = front_padded(model, split_lstms(model), padded, torch.tensor(n), style,
                                                  torch.tensor(1.2))
    assert torch.allclose(d_en[..., :n], text.d_en, atol=1e-4)
    assert torch.allclose(t_en[..., :n], text.t_en, atol=1e-5)
    assert torch.allclose(d_pad[:, :n], d, atol=1e-4)
    assert torch.allclose(raw_pad[:n], raw, atol=1e-4)


def test_speech_through_the_token_buckets_is_the_eager_speech(cpu_engine: Any) -> None:
    model = cpu_engine.model
    ids = cpu_engine.token_ids(SENTENCE)
    style = cpu_engine.style_tensor(cpu_engine.stock_voice("jf_alpha"), len(SENTENCE))
    tokens = TokenGraphs(model, capture=False)
    model.deterministic_source = True
    try:
        eager = model.infer(ids, style, speed=0.9)
        padded = model.infer(ids, style, speed=0.9, front=tokens.front)
    finally:
        model.deterministic_source = False
    assert token_bucket(ids.shape[1]) > ids.shape[1]  # the pass really was padded
    assert torch.equal(padded.durations, eager.durations)
    assert torch.allclose(padded.f0, eager.f0, atol=1e-2)
    snr = 10 * torch.log10(eager.audio.square().sum() / (eager.audio - padded.audio).square().sum())
    assert snr > 25
