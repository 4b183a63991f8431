"""The text half of a pass (ALBERT, then the decoder's text encoder) in as few operations as it takes.

On a GPU a sentence's text half is host-bound: every operation is a launch of a tiny kernel, and
ALBERT as `transformers` runs it is ~420 of them for batch 1 (three projections where one does, the
tanh-GELU spelled out in eight elementwise steps, dropouts, a mask built and checked on the host).
These functions compute the same thing from the same modules' weights in ~170: no LSTM packing (its
sort order is a host copy), and an attention mask only for a padded sequence (`masked_tokens.py`).
`tests/test_engine_parity.py` holds them to the modules' own forward.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F


def albert_hidden(albert: Any, input_ids: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """ALBERT's last hidden state [1, T, hidden] for token ids [1, T], as `AlbertModel` would give it
    (ALBERT shares one layer's weights across all its layers). `mask` [1, T] (bool) marks the real
    tokens of a padded sequence; attention then ignores the rest."""
    config = albert.config
    embeddings, encoder = albert.embeddings, albert.encoder
    n_tokens = input_ids.shape[1]
    x = embeddings.word_embeddings(input_ids) + embeddings.token_type_embeddings.weight[0]
    x = x + embeddings.position_embeddings.weight[:n_tokens]
    x = F.layer_norm(x, x.shape[-1:], embeddings.LayerNorm.weight, embeddings.LayerNorm.bias,
                     embeddings.LayerNorm.eps)
    x = encoder.embedding_hidden_mapping_in(x)
    if config.num_hidden_groups != 1 or config.inner_group_num != 1:
        raise ValueError("albert_hidden handles ALBERT with one shared layer (Kokoro's)")
    layer = encoder.albert_layer_groups[0].albert_layers[0]
    attention = layer.attention
    heads = attention.num_attention_heads
    qkv_weight = torch.cat([attention.query.weight, attention.key.weight, attention.value.weight])
    qkv_bias = torch.cat([attention.query.bias, attention.key.bias, attention.value.bias])
    keys = None if mask is None else mask[:, None, None, :]
    hidden = x.shape[-1]
    for _ in range(config.num_hidden_layers):
        q, k, v = F.linear(x, qkv_weight, qkv_bias).view(1, n_tokens, 3, heads, -1).permute(2, 0, 3, 1, 4)
        context = F.scaled_dot_product_attention(q, k, v, attn_mask=keys).transpose(1, 2).reshape(1, n_tokens, hidden)
        x = F.layer_norm(x + attention.dense(context), (hidden,), attention.LayerNorm.weight,
                         attention.LayerNorm.bias, attention.LayerNorm.eps)
        ffn = layer.ffn_output(F.gelu(layer.ffn(x), approximate="tanh"))
        norm = layer.full_layer_layer_norm
        x = F.layer_norm(x + ffn, (hidden,), norm.weight, norm.bias, norm.eps)
    result: torch.Tensor = x
    return result


def encode_tokens(
    text_encoder: Any,
    input_ids: torch.Tensor,
    mask: torch.Tensor | None = None,
    lstm: Callable[[Any, torch.Tensor], torch.Tensor] | None = None,
) -> torch.Tensor:
    """Kokoro's `TextEncoder` [1, channels, T] for token ids [1, T]. Padded (`mask` [1, T] marks the
    real tokens), the convolutions see zeros past the end, as Kokoro's masking makes them, and `lstm`
    runs the bidirectional LSTM so that padding cannot reach the real tokens."""
    keep = None if mask is None else mask[:, None, :].to(text_encoder.embedding.weight.dtype)
    x = text_encoder.embedding(input_ids).transpose(1, 2)  # [1, C, T]
    for block in text_encoder.cnn:
        if keep is not None:
            x = x * keep
        conv, norm, activation = block[0], block[1], block[2]
        y = F.layer_norm(conv(x).transpose(1, 2), (norm.channels,), norm.gamma, norm.beta, norm.eps)
        x = activation(y).transpose(1, 2)
    out = lstm(text_encoder.lstm, x.transpose(1, 2)) if lstm else text_encoder.lstm(x.transpose(1, 2))[0]
    result: torch.Tensor = out.transpose(1, 2)
    return result if keep is None else result * keep
