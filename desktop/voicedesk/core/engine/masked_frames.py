"""The frame-rate half of a pass (F0 and energy, decoder, vocoder) on inputs padded past their end.

A sentence's frames are written into buffers of a longer, fixed length, and the pass is masked so that
its first samples equal the unpadded pass: every instance norm takes its statistics over the real
frames only, every convolution sees zeros past the real end (what its own zero padding would give),
and the harmonic source's STFT sees the same reflection at the end. Then one padded length serves
every sentence up to it, which is what lets a CUDA graph captured once be replayed for many
sentences (`frame_graphs.py`). The number of real frames is a tensor, so no step reads the host.

This module imports torch at the top: import it only where the model is needed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from voicedesk.core.engine.config import TIMBRE_DIM
from voicedesk.core.engine.model import KokoroModel, inverse_stft, shape_f0

_SQRT_HALF = 1 / math.sqrt(2)  # Kokoro's residual blocks scale their sum by rsqrt(2)


@dataclass(frozen=True)
class Span:
    """Which positions of one time resolution are real: `mask` [1, 1, L] (1 or 0), `count` [1, 1, 1]."""

    mask: torch.Tensor
    count: torch.Tensor


def span(length: int, real: torch.Tensor) -> Span:
    """The first `real` (a 0-d tensor) of `length` positions."""
    mask = (torch.arange(length, device=real.device) < real).float()[None, None]
    return Span(mask, real.float().reshape(1, 1, 1))


def samples_per_frame(model: KokoroModel) -> int:
    """Output samples per frame: F0 runs at twice the frame rate, then the vocoder's upsamplings and hop."""
    gen = model.decoder.generator
    return 2 * math.prod(int(up.stride[0]) for up in gen.ups) * int(gen.stft.hop_length)


def speak_padded(
    model: KokoroModel,
    shared: torch.Tensor,
    asr: torch.Tensor,
    ref_s: torch.Tensor,
    randomness: tuple[torch.Tensor, torch.Tensor],
    real_frames: torch.Tensor,
    pitch: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Audio [samples_per_frame × L] and F0 [1, 2L] from frame features padded to L frames with zeros:
    `shared` [1, 512, L] (`KokoroModel.shared_prosody`), `asr` [1, 512, L] (the text encoding of each
    frame's token), the source's random numbers for L frames (zeros for a deterministic source), the
    number of real frames (a 0-d tensor) and the voice's pitch (scale and spread, [2]). Past the real
    end both outputs are zero."""
    frames = shared.shape[-1]
    at_frames, doubled = span(frames, real_frames), span(2 * frames, 2 * real_frames)
    f0, energy = f0_energy(model, shared, ref_s[:, TIMBRE_DIM:], at_frames, doubled)
    f0 = shape_f0(f0, pitch[0], pitch[1])
    dec = model.decoder
    timbre = ref_s[:, :TIMBRE_DIM]
    # Kokoro's Decoder.forward (as `KokoroModel._decode`), masked.
    f0_down = dec.F0_conv(f0.unsqueeze(1))  # stride 2: the real frames only see real F0
    energy_down = dec.N_conv(energy.unsqueeze(1))
    x = _adain_block(dec.encode, torch.cat([asr, f0_down, energy_down], dim=1), timbre, at_frames, at_frames)
    asr_res = dec.asr_res(asr)
    at, residual = at_frames, True
    for block in dec.decode:
        if residual:
            x = torch.cat([x, asr_res, f0_down, energy_down], dim=1)
        after = doubled if block.upsample_type != "none" else at
        x = _adain_block(block, x, timbre, at, after)
        at = after
        if block.upsample_type != "none":
            residual = False
    audio = _generate(model, x, timbre, f0, randomness, real_frames).reshape(-1)
    real = torch.arange(audio.shape[0], device=audio.device) < real_frames * samples_per_frame(model)
    return torch.where(real, audio, 0.0), f0  # past the end the overlap-add divides 0 by 0


def f0_energy(
    model: KokoroModel, shared: torch.Tensor, style: torch.Tensor, at_frames: Span, doubled: Span
) -> tuple[torch.Tensor, torch.Tensor]:
    """Kokoro's F0Ntrain after its shared LSTM: F0 and energy [1, 2L], zero past the real end."""
    predictor = model.predictor
    curves = []
    for blocks, projection in ((predictor.F0, predictor.F0_proj), (predictor.N, predictor.N_proj)):
        x, at = shared, at_frames
        for block in blocks:
            after = doubled if block.upsample_type != "none" else at
            x = _adain_block(block, x, style, at, after)
            at = after
        curves.append((projection(x) * doubled.mask).squeeze(1))
    return curves[0], curves[1]


def _generate(
    model: KokoroModel,
    x: torch.Tensor,
    timbre: torch.Tensor,
    f0: torch.Tensor,
    randomness: tuple[torch.Tensor, torch.Tensor],
    real_frames: torch.Tensor,
) -> torch.Tensor:
    """Kokoro's Generator.forward (as `KokoroModel.vocode`), masked; audio [1, 1, samples]."""
    gen = model.decoder.generator
    real = 2 * real_frames  # the decoder's output runs at F0's rate
    at = span(x.shape[-1], real)
    har, at_har = _source_spectrum(model, f0, randomness, real_frames)
    for i in range(gen.num_upsamples):
        x = F.leaky_relu(x, negative_slope=0.1) * at.mask  # a transposed convolution must see zeros past the end
        rate = gen.ups[i].stride[0]
        real = real * rate
        # The last level gains one position on the left (the reflection pad), as the STFT frames do.
        at = at_har if i == gen.num_upsamples - 1 else span(x.shape[-1] * rate, real)
        x_source = _resblock(gen.noise_res[i], gen.noise_convs[i](har), timbre, at)
        x = gen.ups[i](x)
        if i == gen.num_upsamples - 1:
            x = gen.reflection_pad(x)
        x = x + x_source
        xs = _resblock(gen.resblocks[i * gen.num_kernels], x, timbre, at)
        for j in range(1, gen.num_kernels):
            xs = xs + _resblock(gen.resblocks[i * gen.num_kernels + j], x, timbre, at)
        x = xs / gen.num_kernels
    x = gen.conv_post(F.leaky_relu(x) * at.mask)
    half = gen.post_n_fft // 2 + 1
    spec = torch.exp(x[:, :half, :])
    phase = torch.sin(x[:, half:, :])
    return inverse_stft(spec, phase, gen.stft.window, gen.stft.hop_length, frame_mask=at.mask)


def _source_spectrum(
    model: KokoroModel, f0: torch.Tensor, randomness: tuple[torch.Tensor, torch.Tensor], real_frames: torch.Tensor
) -> tuple[torch.Tensor, Span]:
    """The harmonic source's STFT (magnitude and phase, [1, n_fft + 2, STFT frames]) and its real span.
    Past the real end F0 is zero, so the source is noise there: it is replaced by what `torch.stft`'s
    centring pads a shorter signal with, its reflection at the real end, and then zeros."""
    gen = model.decoder.generator
    stft = gen.stft
    f0_up = gen.f0_upsamp(f0[:, None]).transpose(1, 2)  # [1, samples, 1]
    source = model.harmonic_source(f0_up, randomness)[..., 0]  # [1, samples]
    samples = source.shape[-1]
    real = real_frames * samples_per_frame(model)
    index = torch.arange(samples, device=source.device)
    reflected = torch.where(index < real, index, 2 * real - 2 - index).clamp(min=0)
    kept = (index < real + stft.filter_length // 2).float()
    source = source.gather(1, reflected[None]) * kept
    magnitude, phase = stft.transform(source)
    har = torch.cat([magnitude, phase], dim=1)
    at_har = span(har.shape[-1], real // stft.hop_length + 1)
    return har * at_har.mask, at_har


def _norm(norm: nn.InstanceNorm1d, x: torch.Tensor, at: Span) -> torch.Tensor:
    """InstanceNorm1d over the real positions (in float32: sums over thousands of frames)."""
    x = x.float()
    mean = (x * at.mask).sum(-1, keepdim=True) / at.count
    centred = x - mean
    var = (centred * at.mask).square().sum(-1, keepdim=True) / at.count
    out = centred * torch.rsqrt(var + norm.eps)
    if norm.affine:
        out = out * norm.weight[:, None] + norm.bias[:, None]
    return out


def _adain(adain: Any, x: torch.Tensor, style: torch.Tensor, at: Span) -> torch.Tensor:
    # AdaIN1d: (1 + gamma) * InstanceNorm(x) + beta, gamma and beta from the style.
    h = adain.fc(style).view(style.shape[0], -1, 1)
    gamma, beta = torch.chunk(h, chunks=2, dim=1)
    return (1 + gamma) * _norm(adain.norm, x, at) + beta


def _adain_block(block: Any, x: torch.Tensor, style: torch.Tensor, at: Span, after: Span) -> torch.Tensor:
    """Kokoro's AdainResBlk1d; `after` is the span past its upsampling (`at` when it has none)."""
    r = block.actv(_adain(block.norm1, x, style, at)) * at.mask
    if block.upsample_type != "none":
        r = block.pool(r) * after.mask  # a transposed convolution's bias lands past the end too
    r = block.conv1(r)
    r = block.actv(_adain(block.norm2, r, style, after)) * after.mask
    r = block.conv2(r)
    out: torch.Tensor = (r + block._shortcut(x)) * _SQRT_HALF  # the shortcut is pointwise: nothing leaks back
    return out


def _resblock(block: Any, x: torch.Tensor, style: torch.Tensor, at: Span) -> torch.Tensor:
    """Kokoro's AdaINResBlock1 (Snake activations, dilated convolutions)."""
    layers = zip(
        block.convs1, block.convs2, block.adain1, block.adain2, block.alpha1, block.alpha2, strict=True
    )
    for conv1, conv2, adain1, adain2, alpha1, alpha2 in layers:
        xt = conv1(_snake(_adain(adain1, x, style, at), alpha1) * at.mask)
        xt = conv2(_snake(_adain(adain2, xt, style, at), alpha2) * at.mask)
        x = xt + x
    return x


def _snake(x: torch.Tensor, alpha: torch.Tensor) -> torch.Tensor:
    return x + (1 / alpha) * torch.sin(alpha * x) ** 2
