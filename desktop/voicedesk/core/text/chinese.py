"""Mandarin Chinese → Kokoro phonemes through misaki's Chinese reader in the form Kokoro v1.0 was
trained on: jieba segments words, pypinyin gives readings, cn2an spells numbers, and pinyin maps to
IPA with tone arrows. All data ships inside those packages. Loaded on first use and kept."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from voicedesk.core import paths
from voicedesk.core.text import east_asian
from voicedesk.core.text.cleanup import skipped_notice
from voicedesk.core.text.east_asian import Words, is_common_han

MAX_CHARS = 80  # about 4-5 phonemes per character
_WORDS = Words(
    hour="点",
    minute="分",
    second="秒",
    digits=tuple("零一二三四五六七八九"),
    currency={"$": "美元", "€": "欧元", "£": "英镑", "¥": "元"},
    symbols={"+": "加", "=": "等于", "&": "和", "『": "“", "』": "”"},
    percent_before="百分之",
    percent_after="",
    minus="负",
)
# Marks the reader maps to pauses or quotes; other symbols are reported.
_MARKS = frozenset(" 、，。．！？：；,.!?;:'\"“”‘’「」《》【】()（）«»…—–-·・[]")
# Marks the reader would pass through as they are, turned into ones the model knows. Text reaching
# the reader holds no Latin words, so an apostrophe there is a stray quote.
_READER_MARKS = str.maketrans({"'": None, "‘": "“", "’": "”", "-": "—", "–": "—", "[": "“", "]": "”", "·": " ", "・": " "})


@functools.cache
def _reader() -> Any:
    import jieba
    from misaki.zh import ZHG2P

    jieba.setLogLevel(logging.WARNING)
    jieba.dt.tmp_dir = str(paths.cache_dir())  # its word-index cache, instead of the system temp folder
    return ZHG2P()


@functools.cache
def _has_pinyin() -> Callable[[str], bool]:
    from pypinyin.pinyin_dict import pinyin_dict

    return lambda char: ord(char) in pinyin_dict


def _speakable(char: str) -> bool:
    return char in _MARKS or (char.isascii() and char.isalnum()) or (is_common_han(char) and _has_pinyin()(char))


def _native(text: str) -> tuple[str, list[str]]:
    text = text.translate(_READER_MARKS)
    try:
        return _reader()(text)[0], []
    except ValueError:  # a reading whose pinyin the IPA table lacks: read character by character
        pass
    parts, unread = [], []
    for char in text:
        try:
            parts.append(_reader()(char)[0])
        except ValueError:
            unread.append(char)
    return " ".join(p for p in parts if p), [skipped_notice(unread, "Mandarin Chinese")]


def phonemize(text: str) -> tuple[str, list[str]]:
    """Phonemes for one sentence (or piece of one), and notices for what could not be read."""
    return east_asian.read(text, _WORDS, _speakable, "Mandarin Chinese", _native)
