"""Resemblyzer's GE2E speaker encoder, rebuilt in torch so gradients flow from its embedding to audio.

Resemblyzer computes its mel features in numpy (librosa), which blocks gradients; here the same
features are computed with `torch.stft`: 16 kHz, 25 ms periodic Hann window, 10 ms hop, centred
with zero padding, power spectrogram, 40 Slaney mel bands (not logarithmic). An utterance is cut
into 1.6 s partials at 1.3 per second; the embedding is the normalised mean of the partials'
embeddings. The weights are resemblyzer's own `pretrained.pt`, found without importing resemblyzer
(its package `__init__` pulls librosa and webrtcvad).
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from voicedesk.core.clone.mel import mel_filterbank, periodic_window
from voicedesk.core.errors import ModelError

if TYPE_CHECKING:
    import torch

SAMPLE_RATE = 16000
N_FFT = 400  # 25 ms
HOP = 160  # 10 ms
N_MELS = 40
PARTIAL_FRAMES = 160  # 1.6 s
PARTIAL_RATE = 1.3  # partials per second
MIN_COVERAGE = 0.75
TARGET_DBFS = -30.0


def weights_path() -> Path:
    spec = importlib.util.find_spec("resemblyzer")
    if spec is None or not spec.submodule_search_locations:
        raise ModelError("The speaker encoder (package resemblyzer) is not installed; reinstall VoiceDesk.")
    path = Path(next(iter(spec.submodule_search_locations))) / "pretrained.pt"
    if not path.is_file():
        raise ModelError(f"The speaker encoder weights are missing ({path}); reinstall VoiceDesk.")
    return path


def partial_starts(n_samples: int) -> list[int]:
    """First mel frame of every 1.6 s partial, as resemblyzer's `compute_partial_slices` picks them."""
    n_frames = int(np.ceil((n_samples + 1) / HOP))
    frame_step = int(np.round((SAMPLE_RATE / PARTIAL_RATE) / HOP))
    steps = max(1, n_frames - PARTIAL_FRAMES + frame_step + 1)
    starts = list(range(0, steps, frame_step))
    coverage = (n_samples - starts[-1] * HOP) / (PARTIAL_FRAMES * HOP)
    if coverage < MIN_COVERAGE and len(starts) > 1:
        starts.pop()
    return starts


def normalize_volume(wav: torch.Tensor) -> torch.Tensor:
    """Raise (never lower) the level to -30 dBFS, as resemblyzer's preprocessing does; differentiable."""
    import torch

    rms = torch.sqrt(torch.mean(wav.square(), dim=-1, keepdim=True) + 1e-12)
    gain = (10 ** (TARGET_DBFS / 20)) / rms
    return wav * torch.clamp(gain, min=1.0)


def _build(device: str, weights: Path | None) -> Any:
    import torch

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lstm = torch.nn.LSTM(N_MELS, 256, 3, batch_first=True)
            self.linear = torch.nn.Linear(256, 256)
            self.register_buffer("window", torch.from_numpy(periodic_window("hann", N_FFT, N_FFT)))
            self.register_buffer("mel_basis", torch.from_numpy(mel_filterbank(SAMPLE_RATE, N_FFT, N_MELS)))

    encoder = Encoder()
    try:
        checkpoint = torch.load(weights or weights_path(), map_location="cpu", weights_only=True)
        state = {k: v for k, v in checkpoint["model_state"].items() if not k.startswith("similarity_")}
        encoder.load_state_dict(state, strict=False)
    except (OSError, RuntimeError, KeyError) as exc:
        raise ModelError(f"The speaker encoder weights could not be read ({exc}); reinstall VoiceDesk.") from exc
    encoder.requires_grad_(False)
    return encoder.eval().to(device)


class GE2E:
    """Differentiable GE2E embeddings (256-d, unit length) of 16 kHz audio."""

    def __init__(self, device: str = "cpu", weights: Path | None = None) -> None:
        """`weights`: a checkpoint holding `model_state` (default: resemblyzer's `pretrained.pt`)."""
        self.device = device
        self.module = _build(device, weights)

    def mel(self, wav: torch.Tensor) -> torch.Tensor:
        """[B, T] audio → [B, frames, 40] power mel, matching `resemblyzer.audio.wav_to_mel_spectrogram`."""
        import torch

        m = self.module
        spec = torch.stft(
            wav, N_FFT, HOP, window=m.window, center=True, pad_mode="constant", return_complex=True
        )
        power = spec.real.square() + spec.imag.square()
        mel: torch.Tensor = torch.matmul(m.mel_basis, power).transpose(1, 2)
        return mel

    def embed_partials(self, mels: torch.Tensor) -> torch.Tensor:
        """[N, 160, 40] mel partials → [N, 256] unit embeddings."""
        import torch

        _, (hidden, _) = self.module.lstm(mels)
        raw = torch.relu(self.module.linear(hidden[-1]))
        unit: torch.Tensor = raw / (torch.norm(raw, dim=1, keepdim=True) + 1e-9)
        return unit

    def embed(self, wavs: list[torch.Tensor], normalize: bool = True) -> torch.Tensor:
        """Utterance embeddings [len(wavs), 256] of 1-D 16 kHz tensors of any lengths, in one LSTM batch.

        `normalize` applies resemblyzer's increase-only -30 dBFS gain first (its `preprocess_wav`
        does that before embedding; silence trimming is left to the caller).
        """
        import torch

        partials: list[torch.Tensor] = []
        owners: list[int] = []
        for index, wav in enumerate(wavs):
            mels = self._partials(wav, normalize)
            partials.extend(mels)
            owners.extend([index] * len(mels))
        embeds = self.embed_partials(torch.stack(partials))
        owner = torch.tensor(owners, device=embeds.device)
        sums = torch.zeros(len(wavs), embeds.shape[1], device=embeds.device, dtype=embeds.dtype)
        sums = sums.index_add(0, owner, embeds)
        utterances: torch.Tensor = sums / (torch.norm(sums, dim=1, keepdim=True) + 1e-9)
        return utterances

    def embed_one(self, wav: torch.Tensor, normalize: bool = True) -> torch.Tensor:
        """`embed([wav])[0]` without building anything on the host: fit to be captured in a CUDA graph."""
        import torch

        total = self.embed_partials(torch.stack(self._partials(wav, normalize))).sum(0)
        unit: torch.Tensor = total / (torch.norm(total) + 1e-9)
        return unit

    def _partials(self, wav: torch.Tensor, normalize: bool) -> list[torch.Tensor]:
        """The [160, 40] mel partials of one 1-D utterance, as resemblyzer cuts them."""
        import torch

        x = normalize_volume(wav) if normalize else wav
        starts = partial_starts(int(x.shape[-1]))
        needed = (starts[-1] + PARTIAL_FRAMES) * HOP
        if needed >= x.shape[-1]:
            x = torch.nn.functional.pad(x, (0, needed - int(x.shape[-1])))
        mel = self.mel(x.unsqueeze(0))[0]
        return [mel[s : s + PARTIAL_FRAMES] for s in starts]

    def embed_numpy(self, wav: np.ndarray) -> np.ndarray:
        """One utterance embedding of a float32 numpy array, without gradients."""
        import torch

        with torch.no_grad():
            x = torch.from_numpy(np.ascontiguousarray(wav, dtype=np.float32)).to(self.device)
            vector: np.ndarray = self.embed([x])[0].cpu().numpy()
            return vector

    def set_lstm_train(self, training: bool) -> None:
        # cuDNN's RNN backward refuses eval mode; the LSTM has no dropout, so train mode is harmless.
        self.module.lstm.train(training)


def seconds_for_partials(n: int) -> float:
    """Audio length that gives `n` partials (used to size fitting sentences)."""
    return ((n - 1) * math.floor(SAMPLE_RATE / PARTIAL_RATE / HOP + 0.5) + PARTIAL_FRAMES) * HOP / SAMPLE_RATE
