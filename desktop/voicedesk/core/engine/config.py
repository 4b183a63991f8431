"""Kokoro-82M v1.0 hyper-parameters and the engine's fixed numbers (no torch needed)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from voicedesk.core.errors import InputError

SAMPLE_RATE = 24000
STYLE_DIM = 256  # a full style row: [:128] timbre (decoder), [128:] prosody (predictor)
TIMBRE_DIM = 128
# ALBERT's 512 positions hold the phonemes plus a pad token at each end.
CONTEXT_LENGTH = 512
MAX_PHONEMES = CONTEXT_LENGTH - 2
# A voice's F0 scale: beyond an octave either way it is a mistracked pitch, not a voice.
SCALE_RANGE = (0.5, 2.0)
SPREAD_RANGE = (0.25, 2.0)  # ... and its intonation's range, against the model's own
PACE_RANGE = (0.5, 2.0)  # ... and its speaking rate, against the model's own


@dataclass(frozen=True)
class Pitch:
    """How a voice shapes the F0 curve the model predicts, and its pace (cloned voices carry their own;
    see `model.shape_f0`): `scale` multiplies F0, `spread` scales each voiced frame's log-F0 distance
    from the sentence's mean (below 1: flatter intonation), `pace` multiplies the speaking rate (the
    engine applies it as speed; the model itself ignores it). The neutral `Pitch()` leaves all three
    as predicted."""

    scale: float = 1.0
    spread: float = 1.0
    pace: float = 1.0

    def checked(self) -> Pitch:
        """This pitch, or `InputError` if a number is out of range or not a number."""
        for value, (low, high), what in ((self.scale, SCALE_RANGE, "scale"), (self.spread, SPREAD_RANGE, "range"),
                                         (self.pace, PACE_RANGE, "pace")):
            if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
                raise InputError(f"The pitch {what} {value!r} is out of range; use a number from {low} to {high:g} "
                                 "(1 leaves the voice as it is).")
        return Pitch(float(self.scale), float(self.spread), float(self.pace))

    def describe(self) -> str:
        """In a few words for lists and messages ("" when the voice speaks as the model predicts)."""
        parts = []
        if (self.scale, self.spread) != (1.0, 1.0):
            parts.append(f"pitch ×{self.scale:.2f}, intonation range ×{self.spread:.2f}")
        if self.pace != 1.0:
            parts.append(f"pace ×{self.pace:.2f}")
        return ", ".join(parts)

KOKORO_CONFIG: dict[str, Any] = {
    "n_token": 178,
    "hidden_dim": 512,
    "style_dim": 128,
    "n_layer": 3,
    "max_dur": 50,
    "dropout": 0.2,
    "text_encoder_kernel_size": 5,
    "n_mels": 80,
    "plbert": {
        "hidden_size": 768,
        "num_attention_heads": 12,
        "intermediate_size": 2048,
        "max_position_embeddings": CONTEXT_LENGTH,
        "num_hidden_layers": 12,
        "embedding_size": 128,
        "hidden_act": "gelu_new",
    },
    "istftnet": {
        "upsample_rates": [10, 6],
        "upsample_kernel_sizes": [20, 12],
        "gen_istft_n_fft": 20,
        "gen_istft_hop_size": 5,
        "resblock_kernel_sizes": [3, 7, 11],
        "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5], [1, 3, 5]],
        "upsample_initial_channel": 512,
    },
}


NEUTRAL_PITCH = Pitch()
