"""The embedded speech engine: Kokoro-82M in PyTorch, weights from registry packages.

    from voicedesk.core.engine import Engine, join_chunks
    engine = Engine.load(device="auto")
    audio = join_chunks(engine.synthesize("Hello.", engine.stock_voice("jf_alpha")))

Importing this package does not import torch; `Engine.load()` does.
"""

from voicedesk.core.engine.config import MAX_PHONEMES, SAMPLE_RATE, STYLE_DIM, Pitch
from voicedesk.core.engine.engine import PAUSE_SECONDS, Engine, SpeechChunk, join_chunks, trim_edges
from voicedesk.core.engine.voices import Style, as_style, stock_voice, stock_voice_names, style_row

__all__ = [
    "MAX_PHONEMES",
    "PAUSE_SECONDS",
    "SAMPLE_RATE",
    "STYLE_DIM",
    "Engine",
    "Pitch",
    "SpeechChunk",
    "Style",
    "as_style",
    "join_chunks",
    "stock_voice",
    "stock_voice_names",
    "style_row",
    "trim_edges",
]
