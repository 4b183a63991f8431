"""What the Japanese and Mandarin front ends share: rewriting numbers, times, dates, currency and a
few symbols into words their readers know, and handing runs of Latin letters to the English reader."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from voicedesk.core.text import english
from voicedesk.core.text.cleanup import keep_speakable

_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_TIME = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?::(\d{2}))?(?![\d:])")
_DATE = re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")
_CURRENCY = re.compile(r"([$€£¥])\s?(\d+(?:\.\d+)?)")
_MINUS = re.compile(r"(?<![0-9A-Za-z.])-(?=\d)")
# Fullwidth letters, digits and money signs, halfwidth katakana, ideographic space: folded to their
# plain forms. CJK punctuation stays as it is; the readers know it.
_WIDE = re.compile(r"[\u3000\uFF04-\uFF06\uFF0B\uFF1D\uFF10-\uFF19\uFF21-\uFF3A\uFF41-\uFF5A\uFF65-\uFF9F\uFFE1\uFFE5]+")
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)%")
_LONG_DIGITS = re.compile(r"\d{13,}")  # IDs and phone numbers: read digit by digit
_LATIN_RUN = re.compile(r"[A-Za-z][A-Za-z'’]*(?:[\s-]+[A-Za-z][A-Za-z'’]*)*")


@dataclass(frozen=True)
class Words:
    """One language's words for what the rewrite spells out."""

    hour: str
    minute: str
    second: str
    digits: tuple[str, ...]  # 0-9, for digit-by-digit reading
    currency: dict[str, str]  # symbol → unit read after the amount
    symbols: dict[str, str]  # e.g. "+" → "plus"
    minus: str
    percent_before: str  # "N%" reads as percent_before + N + percent_after
    percent_after: str


def rewrite(text: str, words: Words) -> str:
    """Wide forms folded, then numbers, times, dates, currency and symbols as words."""
    text = _WIDE.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
    text = _THOUSANDS.sub("", text)
    text = _DATE.sub(lambda m: f"{int(m[1])}年{int(m[2])}月{int(m[3])}日", text)
    text = _TIME.sub(lambda m: _time(m, words), text)
    text = _CURRENCY.sub(lambda m: m[2] + words.currency[m[1]], text)
    text = _LONG_DIGITS.sub(lambda m: "".join(words.digits[int(d)] for d in m.group()), text)
    text = _PERCENT.sub(lambda m: words.percent_before + m[1] + words.percent_after, text)
    text = _MINUS.sub(words.minus, text)
    for symbol, word in words.symbols.items():
        text = text.replace(symbol, word)
    return text


def _time(match: re.Match[str], words: Words) -> str:
    hour, minute, second = int(match[1]), int(match[2]), match[3]
    if hour > 24 or minute > 59 or (second and int(second) > 59):
        return match.group()
    out = f"{hour}{words.hour}" + (f"{minute}{words.minute}" if minute else "")
    return out + (f"{int(second)}{words.second}" if second else "")


Reader = Callable[[str], tuple[str, list[str]]]  # text → (phonemes, notices)


def read(
    text: str, words: Words, speakable: Callable[[str], bool], language: str, native: Reader
) -> tuple[str, list[str]]:
    """The whole path for one piece of text: rewrite, set aside what cannot be read, read the rest."""
    text, notices = keep_speakable(rewrite(text, words), speakable, language)
    phonemes, said = read_mixed(text, native)
    return phonemes, notices + said


def read_mixed(text: str, native: Reader) -> tuple[str, list[str]]:
    """Phonemes for text in which runs of Latin letters are English words and the rest is read by
    `native`; both readers' notices are passed on."""
    parts: list[str] = []
    notices: list[str] = []
    start = 0
    for match in _LATIN_RUN.finditer(text):
        for reader, piece in ((native, text[start : match.start()]), (english.phonemize, match.group())):
            if piece.strip():
                phonemes, said = reader(piece)
                parts.append(phonemes.strip())
                notices += said
        start = match.end()
    if text[start:].strip():
        phonemes, said = native(text[start:])
        parts.append(phonemes.strip())
        notices += said
    return " ".join(p for p in parts if p), notices


def is_common_han(char: str) -> bool:
    """The main CJK block: the characters pypinyin and misaki's Mandarin reader know."""
    return "\u4e00" <= char <= "\u9fff"


def is_han_or_kana(char: str) -> bool:
    name = unicodedata.name(char, "")
    return name.startswith(("CJK UNIFIED", "CJK COMPATIBILITY IDEOGRAPH", "HIRAGANA", "KATAKANA"))
