"""Kokoro-82M v1.0 hyper-parameters and the engine's fixed numbers (no torch needed)."""

from __future__ import annotations

from typing import Any

SAMPLE_RATE = 24000
STYLE_DIM = 256  # a full style row: [:128] timbre (decoder), [128:] prosody (predictor)
TIMBRE_DIM = 128
# ALBERT's 512 positions hold the phonemes plus a pad token at each end.
CONTEXT_LENGTH = 512
MAX_PHONEMES = CONTEXT_LENGTH - 2
# A voice's F0 scale (cloned voices carry one): beyond an octave either way it is a mistracked pitch.
PITCH_RANGE = (0.5, 2.0)

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
