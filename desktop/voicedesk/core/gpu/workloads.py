"""What the self-test times: the engine's own model, or a stand-in shaped like its decoder.

`EngineSynthesis` times the engine's full synthesis (ALBERT, prosody, text encoder, decoder, copy
back to the CPU) of a fixed phoneme sequence. `DecoderShapedStack` is pure torch: convolutions with the channel counts, kernel sizes,
dilations and upsampling of Kokoro's iSTFTNet decoder (random weights: the time a dense convolution
takes does not depend on its weights). It is the fallback where the model weights are not installed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from voicedesk.core.errors import VoiceDeskError
from voicedesk.core.gpu.selftest import RunOnce

log = logging.getLogger(__name__)

SAMPLE_RATE = 24000


# A 72-phoneme English sentence ("VoiceDesk speaks this sentence to time the voice model on your
# computer."), about 5 s of speech, fixed as phonemes so the benchmark needs no text front end.
BENCH_PHONEMES = "vˌYsdˈɛsk spˈiks ðɪs sˈɛntᵊns tə tˈIm ðə vˈYs mˈɑdᵊl ˌɔn jʊɹ kəmpjˈuTəɹ."


class EngineSynthesis:
    """A full synthesis of `BENCH_PHONEMES` by the engine; the decoder-shaped stack if it cannot load."""

    def __init__(self, load_engine: Callable[[str], Any] | None = None, voice: str | None = None,
                 phonemes: str = BENCH_PHONEMES, stand_in: DecoderShapedStack | None = None) -> None:
        self._load_engine = load_engine
        self._voice = voice
        self._phonemes = phonemes
        self._stand_in = stand_in
        self.description = f"VoiceDesk's engine: full synthesis of a {len(phonemes)}-phoneme sentence"

    def prepare(self, device: str) -> RunOnce:
        try:
            from voicedesk.core.engine import Engine

            engine = (self._load_engine or Engine.load)(device)
            style = engine.stock_voice(self._voice or engine.stock_voices()[0])
        except (VoiceDeskError, ImportError) as exc:
            log.info("engine unavailable for the self-test; timing the stand-in", exc_info=True)
            stand_in = self._stand_in or DecoderShapedStack()
            self.description = f"{stand_in.description}: {exc}"
            return stand_in.prepare(device)

        def run() -> float:
            audio = engine.synthesize_phonemes(self._phonemes, style, seed=0)
            return len(audio) / engine.sample_rate

        return run


def default_workload() -> EngineSynthesis:
    return EngineSynthesis()


class DecoderShapedStack:
    """Convolutions shaped like Kokoro's decoder, for `seconds` of 24 kHz audio at batch 1."""

    def __init__(self, seconds: float = 5.0) -> None:
        self.seconds = seconds
        self.description = (
            f"a convolution stack shaped like Kokoro's iSTFTNet decoder ({seconds:g} s of audio, random "
            "weights), standing in because the engine could not be loaded"
        )

    def prepare(self, device: str) -> RunOnce:
        import torch

        torch.manual_seed(0)
        model = _decoder_stack().to(device).eval()
        # The decoder's input runs at 80 frames per second; ×10, ×6 upsampling and an iSTFT hop of 5
        # make 24 000 samples per second.
        frames = max(2, round(self.seconds * 80))
        x = torch.randn(1, 512, frames, device=device)
        window = torch.hann_window(20, device=device)

        @torch.inference_mode()
        def run() -> float:
            y = model(x).float()  # iSTFT in fp32 (cuFFT's half precision needs power-of-two sizes)
            spec = torch.exp(y[:, :11]) * torch.exp(1j * torch.sin(y[:, 11:]))
            audio = torch.istft(spec, n_fft=20, hop_length=5, win_length=20, window=window)
            return float(audio.numel()) / SAMPLE_RATE

        return run


def _decoder_stack() -> Any:
    from torch import nn

    class ResBlock(nn.Module):
        """iSTFTNet's AdaIN residual block without the style: 3 dilated + 3 plain convolutions."""

        def __init__(self, channels: int, kernel: int) -> None:
            super().__init__()
            self.dilated = nn.ModuleList(
                nn.Conv1d(channels, channels, kernel, dilation=d, padding=d * (kernel - 1) // 2) for d in (1, 3, 5)
            )
            self.plain = nn.ModuleList(
                nn.Conv1d(channels, channels, kernel, padding=(kernel - 1) // 2) for _ in range(3)
            )
            self.act = nn.LeakyReLU(0.1)

        def forward(self, x: Any) -> Any:
            for c1, c2 in zip(self.dilated, self.plain, strict=True):
                x = x + c2(self.act(c1(self.act(x))))
            return x

    class Stack(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            act = nn.LeakyReLU(0.1)
            # Decoder body: residual blocks at 512 channels on the frame rate.
            self.body = nn.Sequential(*[m for _ in range(4) for m in (nn.Conv1d(512, 512, 3, padding=1), act)])
            self.up1 = nn.ConvTranspose1d(512, 256, 20, stride=10, padding=5)
            self.res1 = nn.ModuleList(ResBlock(256, k) for k in (3, 7, 11))
            self.up2 = nn.ConvTranspose1d(256, 128, 12, stride=6, padding=3)
            self.res2 = nn.ModuleList(ResBlock(128, k) for k in (3, 7, 11))
            self.post = nn.Conv1d(128, 22, 7, padding=3)  # 11 magnitude + 11 phase bins (n_fft 20)

        def forward(self, x: Any) -> Any:
            x = self.body(x)
            x = self.up1(x)
            x = sum(block(x) for block in self.res1) / 3
            x = self.up2(x)
            x = sum(block(x) for block in self.res2) / 3
            return self.post(x)

    return Stack()
