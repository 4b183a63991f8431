"""Kokoro-82M in PyTorch, assembled from the `kokoro` package's modules.

`KokoroModel.forward(input_ids [1, T], ref_s [1, 256], speed)` returns the waveform and is
differentiable with respect to `ref_s` (style-fit cloning optimises the style through it). Durations are
rounded, so they carry no gradient. The harmonic source (sine waves at F0 and its overtones) is built
without gradient by default, as Kokoro does; `source_grad=True` lets gradients reach F0 through it too.
`deterministic_source=True` drops the source's random initial phases and noise, which is what the
ONNX export does, so the two can be compared sample for sample.

This module imports torch at the top: import it only where the model is needed.
"""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from voicedesk.core.engine import kokoro_modules, text_features, weights
from voicedesk.core.engine.config import KOKORO_CONFIG, MAX_PHONEMES, NEUTRAL_PITCH, TIMBRE_DIM, Pitch
from voicedesk.core.errors import InputError, ModelError

# How a pass runs one of Kokoro's bidirectional LSTMs: as it is (`run_lstm`), or masked for padding.
LSTMRunner = Callable[[nn.LSTM, torch.Tensor], torch.Tensor]


def run_lstm(lstm: nn.LSTM, x: torch.Tensor) -> torch.Tensor:
    out: torch.Tensor = lstm(x)[0]
    return out


@dataclass
class KokoroOutput:
    audio: torch.Tensor  # [samples], float32, 24 kHz
    durations: torch.Tensor  # [T] frames per input token (one frame = 600 samples at speed 1)
    f0: torch.Tensor  # [1, frames * 2] predicted pitch in Hz (0 where unvoiced)
    raw_durations: torch.Tensor | None = None  # [T] before rounding; None when durations were given


@dataclass
class TextFeatures:
    """What a pass computes from the token ids alone, whatever the style."""

    d_en: torch.Tensor  # [1, 512, T] ALBERT's features, projected
    t_en: torch.Tensor  # [1, 512, T] the decoder's text encoding


# (text, prosody features, the token of each frame, style row, rng, pitch) → (audio [samples], F0 [1, 2F])
FrameSpeaker = Callable[
    [TextFeatures, torch.Tensor, torch.Tensor, torch.Tensor, "torch.Generator | None", Pitch],
    tuple[torch.Tensor, torch.Tensor],
]
# (token ids, prosody half of the style, speed) → (text features, prosody features [1, T, 640], unrounded
# durations [T]), or None to run them eagerly here
FrontRunner = Callable[
    [torch.Tensor, torch.Tensor, float], "tuple[TextFeatures, torch.Tensor, torch.Tensor] | None"
]


class KokoroModel(nn.Module):
    """ALBERT + duration/prosody predictor + text encoder + iSTFTNet decoder (weight norm folded)."""

    def __init__(self) -> None:
        super().__init__()
        modules, istftnet = kokoro_modules.load()
        with warnings.catch_warnings():
            # Kokoro's modules use the older weight_norm API and pass dropout to 1-layer LSTMs; both
            # are harmless here (weight norm is removed below, dropout is off in eval mode).
            warnings.filterwarnings("ignore", category=FutureWarning, message=".*weight_norm.*")
            warnings.filterwarnings("ignore", category=UserWarning, message=".*dropout option adds dropout.*")
            self._build(modules, istftnet)
        _remove_weight_norm(self)
        # Kokoro keeps the STFT window as a plain attribute, so `.to(device)` would leave it on the CPU
        # and every STFT would copy it to the GPU (a host sync); as a buffer it moves with the model.
        stft = self.decoder.generator.stft
        window = stft.window
        del stft.window
        stft.register_buffer("window", window, persistent=False)
        self.deterministic_source = False
        self.source_grad = False
        # A plain list, so that the bfloat16 copy of the vocoder (see `vocoder_bf16`) is no submodule:
        # it stays out of the state dict and of `.to(device)`.
        self._bf16_blocks: list[nn.Module] = []
        self.eval()

    def _build(self, modules: Any, istftnet: Any) -> None:
        from transformers import AlbertConfig

        cfg = KOKORO_CONFIG
        albert = AlbertConfig(vocab_size=cfg["n_token"], **cfg["plbert"])
        # The pooler is unused (Kokoro reads the last hidden state) and absent from the weights.
        self.bert = modules.CustomAlbert(albert, add_pooling_layer=False)
        self.bert_encoder = nn.Linear(albert.hidden_size, cfg["hidden_dim"])
        self.predictor = modules.ProsodyPredictor(
            style_dim=cfg["style_dim"],
            d_hid=cfg["hidden_dim"],
            nlayers=cfg["n_layer"],
            max_dur=cfg["max_dur"],
            dropout=cfg["dropout"],
        )
        self.text_encoder = modules.TextEncoder(
            channels=cfg["hidden_dim"],
            kernel_size=cfg["text_encoder_kernel_size"],
            depth=cfg["n_layer"],
            n_symbols=cfg["n_token"],
        )
        self.decoder = istftnet.Decoder(
            dim_in=cfg["hidden_dim"], style_dim=cfg["style_dim"], dim_out=cfg["n_mels"], **cfg["istftnet"]
        )

    @property
    def device(self) -> torch.device:
        return self.bert_encoder.weight.device

    def forward(
        self,
        input_ids: torch.Tensor,
        ref_s: torch.Tensor,
        speed: float = 1.0,
        rng: torch.Generator | None = None,
    ) -> torch.Tensor:
        """Waveform [samples] for token ids [1, T] (pads included) and a style row [1, 256]."""
        return self.synthesize(input_ids, ref_s, speed, rng).audio

    def synthesize(
        self,
        input_ids: torch.Tensor,
        ref_s: torch.Tensor,
        speed: float = 1.0,
        rng: torch.Generator | None = None,
        durations: torch.Tensor | None = None,
        speaker: FrameSpeaker | None = None,
        pitch: Pitch = NEUTRAL_PITCH,
        front: FrontRunner | None = None,
    ) -> KokoroOutput:
        """Like `forward`, with the details; `durations` [T] (frames per token) overrides the prediction;
        `speaker` stands in for `speak_frames` (CUDA graphs of it: `frame_graphs.FrameGraphs`), `front`
        for the token-rate half (`token_graphs.TokenGraphs`); `pitch` shapes the predicted F0 (a cloned
        voice's own, see `shape_f0`)."""
        if input_ids.dim() != 2 or input_ids.shape[0] != 1:
            raise InputError("The model speaks one sequence at a time (token ids shaped [1, T]).")
        n_tokens = int(input_ids.shape[1])
        if n_tokens > MAX_PHONEMES + 2:
            raise InputError(f"Too many phonemes for one chunk ({n_tokens - 2}; at most {MAX_PHONEMES}).")
        if speed <= 0:
            raise InputError("Speed must be a positive number (1.0 is normal).")
        prosody_style = ref_s[:, TIMBRE_DIM:]
        computed = front(input_ids, prosody_style, speed) if front is not None else None
        if computed is None:
            text = self.encode_text(input_ids)
            d = self.prosody_features(text, prosody_style)
            predicted = None
        else:
            text, d, predicted = computed
        raw_durations = None
        if durations is None:
            raw_durations = self.predict_durations(d, speed) if predicted is None else predicted
            durations = whole_frames(raw_durations)
        elif durations.shape != (n_tokens,):
            raise InputError(f"Durations must give one frame count per token ({n_tokens}).")
        speak = speaker or self.speak_frames
        audio, f0 = speak(text, d, frame_tokens(durations).to(input_ids.device), ref_s, rng, pitch)
        return KokoroOutput(audio=audio, durations=durations, f0=f0, raw_durations=raw_durations)

    def predict_durations(
        self, d: torch.Tensor, speed: float | torch.Tensor = 1.0, lstm: LSTMRunner | None = None
    ) -> torch.Tensor:
        """[T] frames per token, unrounded and without gradient, from `prosody_features`."""
        x = (lstm or run_lstm)(self.predictor.lstm, d)
        return (torch.sigmoid(self.predictor.duration_proj(x)).sum(dim=-1) / speed).squeeze(0).detach()

    def encode_text(
        self, input_ids: torch.Tensor, mask: torch.Tensor | None = None, lstm: LSTMRunner | None = None
    ) -> TextFeatures:
        """The style-independent part of a pass: ALBERT's features and the decoder's text encoding.
        `mask` [1, T] marks the real tokens of a padded sequence (`masked_tokens.py`)."""
        hidden = text_features.albert_hidden(self.bert, input_ids, mask)
        d_en = self.bert_encoder(hidden).transpose(-1, -2)
        t_en = text_features.encode_tokens(self.text_encoder, input_ids, mask, lstm or run_lstm)
        return TextFeatures(d_en=d_en, t_en=t_en)

    def prosody_features(
        self, text: TextFeatures, prosody_style: torch.Tensor, lstm: LSTMRunner | None = None
    ) -> torch.Tensor:
        """[1, T, 640] per-token features for durations, F0 and energy: Kokoro's DurationEncoder for
        one full-length sequence, where its LSTM packing changes nothing; without packing the pass
        makes no host copies, so it can run inside a CUDA graph."""
        encoder = self.predictor.text_encoder
        x = text.d_en.transpose(-1, -2)  # [1, T, 512]
        s = prosody_style[:, None, :].expand(-1, x.shape[1], -1)
        x = torch.cat([x, s], dim=-1)
        for block in encoder.lstms:
            if isinstance(block, nn.LSTM):
                x = (lstm or run_lstm)(block, x)
            else:  # AdaLayerNorm, then the style appended again
                x = torch.cat([block(x, prosody_style), s], dim=-1)
        return x

    def speak_frames(
        self,
        text: TextFeatures,
        d: torch.Tensor,
        frames: torch.Tensor,
        ref_s: torch.Tensor,
        rng: torch.Generator | None = None,
        pitch: Pitch = NEUTRAL_PITCH,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Audio [samples] and F0 [1, 2 × frames] for a fixed alignment: `frames` [F] gives the token
        each 25 ms frame speaks. No step reads back from the device, so on CUDA it can be graphed."""
        f0, noise = self.pitch_and_energy(d, frames, ref_s[:, TIMBRE_DIM:])
        if pitch != NEUTRAL_PITCH:
            f0 = shape_f0(f0, pitch.scale, pitch.spread)
        asr = text.t_en.index_select(-1, frames)
        audio = self._decode(asr, f0, noise, ref_s[:, :TIMBRE_DIM], rng)
        return audio.reshape(-1), f0

    def pitch_and_energy(
        self, d: torch.Tensor, frames: torch.Tensor, prosody_style: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Predicted F0 and energy [1, 2 × frames] for the alignment `frames`: the prosody alone, no audio."""
        en = d.transpose(-1, -2).index_select(-1, frames)
        f0, energy = self.predictor.F0Ntrain(en, prosody_style)
        return f0, energy

    def predicted_f0(self, text: TextFeatures, prosody_style: torch.Tensor) -> torch.Tensor:
        """[1, 2 × frames] the F0 the model would speak `text` with in this prosody style, at its own
        durations, without making the audio (a small fraction of a pass's cost)."""
        d = self.prosody_features(text, prosody_style)
        frames = frame_tokens(whole_frames(self.predict_durations(d)))
        return self.pitch_and_energy(d, frames, prosody_style)[0]

    def shared_prosody(self, d: torch.Tensor, frames: torch.Tensor) -> torch.Tensor:
        """[1, 512, F] F0Ntrain's shared LSTM over the prosody features of the token each frame speaks:
        the part of F0 and energy that must see the real frames only (run backwards from past the end,
        the LSTM would reach them in another state)."""
        en = d.index_select(1, frames)  # [1, F, 640]
        x: torch.Tensor = self.predictor.shared(en)[0]
        return x.transpose(-1, -2)

    def source_randomness(
        self, samples: int, rng: torch.Generator | None, device: torch.device
    ) -> tuple[torch.Tensor, torch.Tensor] | None:
        """The harmonic source's random initial phases [1, H] and noise [1, samples, H], drawn in
        Kokoro's order; None for a deterministic source."""
        if self.deterministic_source:
            return None
        harmonics = self.decoder.generator.m_source.l_sin_gen.dim
        initial = torch.rand(1, harmonics, generator=rng, device=device)
        initial[:, 0] = 0  # the fundamental starts at phase zero
        noise = torch.randn((1, samples, harmonics), generator=rng, device=device)
        return initial, noise

    @torch.inference_mode()
    def infer(
        self,
        input_ids: torch.Tensor,
        ref_s: torch.Tensor,
        speed: float = 1.0,
        rng: torch.Generator | None = None,
        durations: torch.Tensor | None = None,
        speaker: FrameSpeaker | None = None,
        pitch: Pitch = NEUTRAL_PITCH,
        front: FrontRunner | None = None,
    ) -> KokoroOutput:
        """`synthesize` without autograd bookkeeping: the path for speaking."""
        return self.synthesize(input_ids, ref_s, speed, rng, durations, speaker, pitch, front)

    # -- decoder -------------------------------------------------------------------------------------

    def _decode(
        self,
        asr: torch.Tensor,
        f0: torch.Tensor,
        noise: torch.Tensor,
        timbre: torch.Tensor,
        rng: torch.Generator | None,
    ) -> torch.Tensor:
        # Kokoro's Decoder.forward, with the generator below instead of its own.
        dec = self.decoder
        f0_down = dec.F0_conv(f0.unsqueeze(1))
        noise_down = dec.N_conv(noise.unsqueeze(1))
        x = dec.encode(torch.cat([asr, f0_down, noise_down], dim=1), timbre)
        asr_res = dec.asr_res(asr)
        residual = True
        for block in dec.decode:
            if residual:
                x = torch.cat([x, asr_res, f0_down, noise_down], dim=1)
            x = block(x, timbre)
            if block.upsample_type != "none":
                residual = False
        return self.vocode(x, timbre, f0, rng)

    def vocode(
        self, x: torch.Tensor, timbre: torch.Tensor, f0: torch.Tensor, rng: torch.Generator | None
    ) -> torch.Tensor:
        # Kokoro's Generator.forward, except for how the harmonic source is made (see the module doc).
        gen = self.decoder.generator
        # Without autograd the vocoder's residual blocks run in place (same arithmetic, fewer big copies).
        resblock = _call_module if torch.is_grad_enabled() else _resblock_in_place
        with torch.set_grad_enabled(torch.is_grad_enabled() and self.source_grad):
            f0_up = gen.f0_upsamp(f0[:, None]).transpose(1, 2)  # [1, samples, 1]
            randomness = self.source_randomness(f0_up.shape[1], rng, f0_up.device)
            source = self.harmonic_source(f0_up, randomness).transpose(1, 2).squeeze(1)
            har = self._source_spectrum(source)
        blocks = self._upsampling_blocks(x)
        if blocks is not gen:  # the bfloat16 copy: its inputs in bfloat16 too
            x, har, timbre = x.bfloat16(), har.bfloat16(), timbre.bfloat16()
        for i in range(blocks.num_upsamples):
            x = F.leaky_relu(x, negative_slope=0.1)
            x_source = resblock(blocks.noise_res[i], blocks.noise_convs[i](har), timbre)
            x = blocks.ups[i](x)
            if i == blocks.num_upsamples - 1:
                x = blocks.reflection_pad(x)
            x = x + x_source
            xs = resblock(blocks.resblocks[i * blocks.num_kernels], x, timbre)
            for j in range(1, blocks.num_kernels):
                xs = xs + resblock(blocks.resblocks[i * blocks.num_kernels + j], x, timbre)
            x = xs / blocks.num_kernels
        # Always in float32: this convolution makes the log-magnitude and phase, and in bfloat16 it moved
        # the voice audibly (judge similarity 0.98 instead of 0.9997).
        x = gen.conv_post(F.leaky_relu(x).float() if x.dtype == torch.bfloat16 else F.leaky_relu(x))
        half = gen.post_n_fft // 2 + 1
        spec = torch.exp(x[:, :half, :])
        phase = torch.sin(x[:, half:, :])
        return inverse_stft(spec, phase, gen.stft.window, gen.stft.hop_length)

    @property
    def vocoder_bf16(self) -> bool:
        """Run the vocoder's upsampling blocks in bfloat16 on the CPU, for speaking and for fitting
        (gradients reach the style through them; 18-20 fitting steps fit the CPU's minute instead of
        10-15, docs/benchmarks/clone-dev.md sweep 8). The engine switches it on where this CPU measured
        faster that way (`cpu_precision.py`); a bfloat16 copy of the blocks (40 MB) is kept while on."""
        return bool(self._bf16_blocks)

    @vocoder_bf16.setter
    def vocoder_bf16(self, on: bool) -> None:
        if not on:
            self._bf16_blocks.clear()
        elif not self._bf16_blocks:
            # Plain tensors even when switched on in inference mode: fitting passes save them for backward.
            with torch.inference_mode(False):
                blocks = copy.deepcopy(self.decoder.generator).to(device="cpu", dtype=torch.bfloat16)
            self._bf16_blocks.append(blocks.requires_grad_(False))

    def _upsampling_blocks(self, x: torch.Tensor) -> Any:
        """The generator whose upsampling blocks speak `x`: its bfloat16 copy where that applies."""
        if self._bf16_blocks and x.device.type == "cpu":
            return self._bf16_blocks[0]
        return self.decoder.generator

    def harmonic_source(
        self, f0_up: torch.Tensor, randomness: tuple[torch.Tensor, torch.Tensor] | None
    ) -> torch.Tensor:
        """Kokoro's SineGen + SourceModuleHnNSF: F0 [1, samples, 1] → merged excitation [1, samples, 1],
        with the random numbers of `source_randomness` (None: deterministic)."""
        m_source = self.decoder.generator.m_source
        sine = m_source.l_sin_gen
        harmonics = torch.arange(1, sine.dim + 1, device=f0_up.device, dtype=f0_up.dtype)
        rad = (f0_up * harmonics / sine.sampling_rate) % 1
        if randomness is not None:
            rad = torch.cat([rad[:, :1, :] + randomness[0][:, None, :], rad[:, 1:, :]], dim=1)
        # Phase is integrated at frame rate and interpolated back up (as Kokoro does, to keep it smooth).
        scale = sine.upsample_scale
        rad = F.interpolate(rad.transpose(1, 2), scale_factor=1 / scale, mode="linear").transpose(1, 2)
        phase = torch.cumsum(rad, dim=1) * 2 * math.pi
        phase = F.interpolate(phase.transpose(1, 2) * scale, scale_factor=scale, mode="linear").transpose(
            1, 2
        )
        voiced = (f0_up > sine.voiced_threshold).to(f0_up.dtype)
        waves = torch.sin(phase) * sine.sine_amp * voiced
        if randomness is not None:
            noise_amp = voiced * sine.noise_std + (1 - voiced) * sine.sine_amp / 3
            waves = waves + noise_amp * randomness[1]
        merged: torch.Tensor = m_source.l_tanh(m_source.l_linear(waves))
        return merged

    def _source_spectrum(self, source: torch.Tensor) -> torch.Tensor:
        stft = self.decoder.generator.stft
        if not torch.is_grad_enabled():
            magnitude, phase = stft.transform(source)
            return torch.cat([magnitude, phase], dim=1)
        # With gradients on, |z| and angle(z) have undefined derivatives at z = 0 (silent, noiseless
        # stretches): keep the values and route gradients only through bins that are not ~0.
        spec = torch.stft(
            source,
            stft.filter_length,
            stft.hop_length,
            stft.win_length,
            window=stft.window.to(source.device),
            return_complex=True,
        )
        re, im = spec.real, spec.imag
        power = re * re + im * im
        tiny = power < 1e-12
        magnitude = torch.sqrt(torch.where(tiny, torch.ones_like(power), power))
        magnitude = torch.where(tiny, torch.zeros_like(magnitude), magnitude)
        safe_re = torch.where(tiny, torch.ones_like(re), re)
        safe_im = torch.where(tiny, torch.zeros_like(im), im)
        phase = torch.where(tiny, torch.atan2(im, re).detach(), torch.atan2(safe_im, safe_re))
        return torch.cat([magnitude, phase], dim=1)


def load_model(device: str | torch.device = "cpu") -> KokoroModel:
    """The Kokoro model with the shipped weights (converted once, then read from the cache), in eval mode."""
    model = KokoroModel()
    state = {name: torch.from_numpy(value) for name, value in weights.load_state_dict().items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    # Instance-norm affine parameters are not trained in Kokoro (they stay 1 and 0) and are not exported.
    missing = [name for name in missing if not name.endswith((".norm.weight", ".norm.bias"))]
    if missing or unexpected:
        raise ModelError(
            f"The converted Kokoro weights do not fit the model ({len(missing)} missing, {len(unexpected)} "
            f"unexpected); delete {weights.cache_path().parent} and run again."
        )
    return model.to(device)


# The spread fades in over this F0 span, below any speaking voice's pitch (voicing onsets ramp up from 0).
SPREAD_FROM_HZ, SPREAD_FULL_HZ = 30.0, 60.0


def shape_f0(f0: torch.Tensor, scale: float | torch.Tensor, spread: float | torch.Tensor) -> torch.Tensor:
    """A voice's pitch applied to a predicted F0 curve [1, N]: log-F0 pulled toward (spread < 1) or
    pushed from its mean over voiced frames, then scaled — log-F0 mean and variance conversion, the
    classic F0 mapping of voice conversion. The stock voices cannot reach every speaker this way from
    their style: the Japanese female voices speak near 240 Hz with a lively intonation, a prompt may
    speak at 180 Hz and flat. The spread fades in between 30 and 60 Hz so voicing onsets, where F0
    ramps up from zero, stay continuous. Frames past a padded end (F0 0) stay 0."""
    voiced = (f0 > SPREAD_FROM_HZ).to(f0.dtype)
    log_f0 = torch.log(f0.clamp_min(1.0))
    mean = (log_f0 * voiced).sum() / voiced.sum().clamp_min(1.0)
    weight = ((f0 - SPREAD_FROM_HZ) / (SPREAD_FULL_HZ - SPREAD_FROM_HZ)).clamp(0.0, 1.0)
    return f0 * torch.exp(weight * (spread - 1.0) * (log_f0 - mean)) * scale


def whole_frames(raw_durations: torch.Tensor) -> torch.Tensor:
    """Durations as whole frames, at least one per token, as Kokoro rounds them."""
    return torch.round(raw_durations).clamp(min=1).long()


def frame_tokens(durations: torch.Tensor) -> torch.Tensor:
    """[frames] the token each frame speaks: token t repeated durations[t] times (Kokoro's one-hot
    alignment matmul, as an index)."""
    return torch.repeat_interleave(torch.arange(durations.shape[0], device=durations.device), durations)


def inverse_stft(
    magnitude: torch.Tensor,
    phase: torch.Tensor,
    window: torch.Tensor,
    hop: int,
    frame_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """`torch.istft` (centred, one-sided) as inverse FFT and overlap-add. `torch.istft` checks the window
    envelope with a read back to the host, which a CUDA graph cannot hold; the envelope of a Hann
    window at this hop never vanishes inside the trimmed signal, so the check is not needed here.
    `frame_mask` [1, 1, F] (1 for real frames) leaves padded frames out of the signal and the envelope."""
    n_fft = window.shape[0]
    # In float32 whatever autocast made of the two: CUDA autocast runs exp (the magnitude) in float32 and
    # sin (the phase) in float16, and the complex number needs both alike.
    spectrum = torch.polar(magnitude.float(), phase.float())
    frames = torch.fft.irfft(spectrum, n=n_fft, dim=1) * window[:, None]  # [1, n_fft, F]
    n_frames = frames.shape[-1]
    length = n_fft + hop * (n_frames - 1)
    fold = {"output_size": (1, length), "kernel_size": (1, n_fft), "stride": (1, hop)}
    weights = window.square()[None, :, None].expand(1, n_fft, n_frames)
    if frame_mask is not None:
        frames, weights = frames * frame_mask, weights * frame_mask
    signal = F.fold(frames, **fold)
    envelope = F.fold(weights, **fold)
    half = n_fft // 2  # trimmed before dividing: the envelope is zero at the very edges
    return (signal[..., half : length - half] / envelope[..., half : length - half]).reshape(1, 1, -1)


def _call_module(block: nn.Module, x: torch.Tensor, style: torch.Tensor) -> torch.Tensor:
    out: torch.Tensor = block(x, style)
    return out


def _resblock_in_place(block: Any, x: torch.Tensor, style: torch.Tensor) -> torch.Tensor:
    """Kokoro's AdaINResBlock1.forward for inference: temporaries are reused instead of reallocated."""
    layers = zip(
        block.convs1, block.convs2, block.adain1, block.adain2, block.alpha1, block.alpha2, strict=True
    )
    for conv1, conv2, adain1, adain2, alpha1, alpha2 in layers:
        xt = conv1(_snake_(_adain(adain1, x, style), alpha1))
        xt = conv2(_snake_(_adain(adain2, xt, style), alpha2))
        x = xt.add_(x)  # xt is the fresh output of conv2; x may be shared with sibling blocks
    return x


def _adain(adain: Any, x: torch.Tensor, style: torch.Tensor) -> torch.Tensor:
    # AdaIN1d: (1 + gamma) * InstanceNorm(x) + beta, gamma and beta from the style.
    h = adain.fc(style).view(style.shape[0], -1, 1)
    gamma, beta = torch.chunk(h, chunks=2, dim=1)
    out: torch.Tensor = adain.norm(x)
    return out.mul_(1 + gamma).add_(beta)


def _snake_(x: torch.Tensor, alpha: torch.Tensor) -> torch.Tensor:
    # Snake1D, x + sin(alpha x)^2 / alpha, writing into x.
    wave = torch.mul(x, alpha).sin_()
    return x.add_(wave.square_().mul_(1 / alpha))


def _remove_weight_norm(model: nn.Module) -> None:
    """The shipped weights have weight norm folded in: turn each normalised layer into a plain one."""
    for module in model.modules():
        if hasattr(module, "weight_g") and hasattr(module, "weight_v"):
            torch.nn.utils.remove_weight_norm(module)
