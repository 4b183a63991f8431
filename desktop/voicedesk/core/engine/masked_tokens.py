"""The token-rate half of a pass (text, prosody features, durations) padded to a fixed length.

A CUDA graph replays one shape, so `token_graphs.py` pads a sentence's tokens to a bucket length; this
module makes the padded pass give the unpadded one's numbers for the real tokens. ALBERT's attention
ignores the padding (a key mask); the text encoder's convolutions see zeros past the end, as Kokoro's
masking makes them; each bidirectional LSTM runs as its two directions, the backward one over the real
tokens reversed in place (`SplitLSTM`), so that it starts at the last real token, not at the padding.
Everything here stays on the device: the real length is a tensor, read by no host code.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from voicedesk.core.engine.model import KokoroModel, TextFeatures


class SplitLSTM(nn.Module):
    """A one-layer bidirectional LSTM (batch first) as two one-directional ones with its weights."""

    def __init__(self, lstm: nn.LSTM) -> None:
        super().__init__()
        if lstm.num_layers != 1 or not lstm.bidirectional or not lstm.batch_first:
            raise ValueError("SplitLSTM takes a one-layer, bidirectional, batch-first LSTM")
        weight = next(lstm.parameters())
        self.forward_lstm, self.backward_lstm = (
            nn.LSTM(lstm.input_size, lstm.hidden_size, batch_first=True).to(weight.device, weight.dtype)
            for _ in range(2)
        )
        with torch.no_grad():
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(self.forward_lstm, f"{name}_l0").copy_(getattr(lstm, f"{name}_l0"))
                getattr(self.backward_lstm, f"{name}_l0").copy_(getattr(lstm, f"{name}_l0_reverse"))

    def forward(self, x: torch.Tensor, reversal: torch.Tensor) -> torch.Tensor:
        """[1, T, 2 × hidden] for x [1, T, input]; `reversal` [T] reverses the real tokens and keeps
        the padding in place (an involution: applied twice, it is the identity)."""
        ahead, _ = self.forward_lstm(x)
        back, _ = self.backward_lstm(x.index_select(1, reversal))
        return torch.cat([ahead, back.index_select(1, reversal)], dim=-1)


def split_lstms(model: KokoroModel) -> dict[nn.LSTM, SplitLSTM]:
    """The split form of every bidirectional LSTM of the token-rate half."""
    lstms = [model.text_encoder.lstm, model.predictor.lstm]
    lstms += [block for block in model.predictor.text_encoder.lstms if isinstance(block, nn.LSTM)]
    return {lstm: SplitLSTM(lstm) for lstm in lstms}


def front_padded(
    model: KokoroModel,
    split: dict[nn.LSTM, SplitLSTM],
    input_ids: torch.Tensor,
    real: torch.Tensor,
    prosody_style: torch.Tensor,
    speed: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """ALBERT's projected features d_en [1, 512, T], the text encoding t_en [1, 512, T], the prosody
    features d [1, T, 640] and the unrounded durations [T] of token ids [1, T] whose first `real`
    (a 0-d tensor) are real. Past `real` the values mean nothing."""
    positions = torch.arange(input_ids.shape[1], device=input_ids.device)
    inside = positions < real
    reversal = torch.where(inside, real - 1 - positions, positions)

    def lstm(module: Any, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = split[module](x, reversal)
        return out

    text: TextFeatures = model.encode_text(input_ids, inside[None], lstm)
    d = model.prosody_features(text, prosody_style, lstm)
    return text.d_en, text.t_en, d, model.predict_durations(d, speed, lstm)
