"""The text half of a pass (ALBERT, then the decoder's text encoder) in as few operations as it takes.

On a GPU a sentence's text half is host-bound: every operation is a launch of a tiny kernel, and
ALBERT as `transformers` runs it is ~420 of them for batch 1 (three projections where one does, the
tanh-GELU spelled out in eight elementwise steps, dropouts, a mask built and checked on the host).
These functions compute the same thing from the same modules' weights in ~170, for one unpadded
sequence: no attention mask (every token is real), no LSTM packing (its sort order is a host copy).
`tests/test_engine_parity.py` holds them to the modules' own forward.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F


def albert_hidden(albert: Any, input_ids: torch.Tensor) -> torch.Tensor:
    """ALBERT's last hidden state [1, T, hidden] for token ids [1, T], as `AlbertModel` would give it
    with an all-ones attention mask (ALBERT shares one layer's weights across all its layers)."""
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
    hidden = x.shape[-1]
    for _ in range(config.num_hidden_layers):
        q, k, v = F.linear(x, qkv_weight, qkv_bias).view(1, n_tokens, 3, heads, -1).permute(2, 0, 3, 1, 4)
        context = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(1, n_tokens, hidden)
        x = F.layer_norm(x + attention.dense(context), (hidden,), attention.LayerNorm.weight,
                         attention.LayerNorm.bias, attention.LayerNorm.eps)
        ffn = layer.ffn_output(F.gelu(layer.ffn(x), approximate="tanh"))
        norm = layer.full_layer_layer_norm
        x = F.layer_norm(x + ffn, (hidden,), norm.weight, norm.bias, norm.eps)
    result: torch.Tensor = x
    return result


def encode_tokens(text_encoder: Any, input_ids: torch.Tensor) -> torch.Tensor:
    """Kokoro's `TextEncoder` [1, channels, T] for token ids [1, T] with no padding."""
    x = text_encoder.embedding(input_ids).transpose(1, 2)  # [1, C, T]
    for block in text_encoder.cnn:
        conv, norm, activation = block[0], block[1], block[2]
        y = F.layer_norm(conv(x).transpose(1, 2), (norm.channels,), norm.gamma, norm.beta, norm.eps)
        x = activation(y).transpose(1, 2)
    out, _ = text_encoder.lstm(x.transpose(1, 2))
    result: torch.Tensor = out.transpose(1, 2)
    return result
