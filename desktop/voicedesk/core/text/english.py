"""English → Kokoro phonemes through hibari-tts's G2P: misaki's lexicons and rules without spaCy,
a small ONNX net for unknown words, and its normaliser for times, dates, currency, units and titles.
American by default; `british=True` reads with misaki's British lexicons and British unknown-word net,
the phonemes Kokoro's British voices were trained on. Each accent is loaded on first use and kept."""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from pathlib import Path
from typing import Any

from voicedesk.core.text.cleanup import keep_speakable, skipped_notice

MAX_CHARS = 200  # pre-split budget: English runs about 1-1.7 phonemes per character
_SYMBOLS = frozenset("€£¥¢°§¶±×÷™®©•→½¼¾²³µ—–…“”‘’«»")
_FOR_EXAMPLE = re.compile(r"(?<![\w.])([Ee])\.g\.(?=[\s,;:]|$)")
_THAT_IS = re.compile(r"(?<![\w.])([Ii])\.e\.(?=[\s,;:]|$)")
# Cardinals stop at decillions and Python refuses int() past 4300 digits: read long digit runs one by one.
_LONG_NUMBER = re.compile(r"\d(?:,?\d){15,}")
# The unknown-word net reads at most 24 letters; longer runs are read in pieces rather than cut short.
_OOV_MAX_LETTERS = 24
_LONG_WORD = re.compile(rf"[^\W\d_]{{{_OOV_MAX_LETTERS + 1},}}")


def _oov_net(british: bool) -> Path:
    import hibari.g2p

    return Path(hibari.g2p.ASSETS) / ("oov_gb.onnx" if british else "oov.onnx")


@functools.cache
def _g2p(british: bool) -> Any:
    from hibari.g2p import G2P
    from hibari.g2p.oov import OOV

    # Unknown words repeat (names, a long word read in pieces): remember the net's answers.
    return G2P(oov=functools.lru_cache(maxsize=4096)(OOV(str(_oov_net(british)))), british=british)


@functools.cache
def _oov_letters(british: bool) -> frozenset[str]:
    meta = json.loads(_oov_net(british).with_suffix(".json").read_text(encoding="utf-8"))
    return frozenset(meta["in"])


def _fold(char: str, letters: frozenset[str]) -> str:
    """A Latin letter the unknown-word net has not seen → its base letter ("ș" → "s")."""
    if char.isascii() or not char.isalpha() or char in letters:
        return char
    if not unicodedata.name(char, "").startswith("LATIN"):
        return char
    base = unicodedata.normalize("NFKD", char)[0]
    return base if base.isascii() else char


def _speakable(char: str, letters: frozenset[str]) -> bool:
    if char.isascii():
        return char.isprintable()
    if char in _SYMBOLS:
        return True
    return char.isalpha() and unicodedata.name(char, "").startswith("LATIN") and char in letters


def prepare(text: str, british: bool = False) -> tuple[str, list[str]]:
    """Readings hibari's normaliser lacks, and characters with no English reading taken out."""
    notices: list[str] = []
    letters = _oov_letters(british)
    text = "".join(_fold(c, letters) for c in text).replace("«", "“").replace("»", "”")
    text, skipped = keep_speakable(text, lambda c: _speakable(c, letters), "English")
    notices += skipped
    text = _FOR_EXAMPLE.sub(lambda m: "For example" if m.group(1) == "E" else "for example", text)
    text = _THAT_IS.sub(lambda m: "That is" if m.group(1) == "I" else "that is", text)
    text = _LONG_NUMBER.sub(lambda m: " ".join(d for d in m.group() if d.isdigit()), text)

    def pieces(match: re.Match[str]) -> str:
        word = match.group()
        notices.append(f"Read a {len(word)}-letter word in pieces; check its spelling.")
        return " ".join(word[i : i + _OOV_MAX_LETTERS] for i in range(0, len(word), _OOV_MAX_LETTERS))

    return _LONG_WORD.sub(pieces, text), notices


def phonemize(text: str, british: bool = False) -> tuple[str, list[str]]:
    """Phonemes for one sentence (or piece of one), and notices for what could not be read."""
    from hibari.g2p.normalize import normalize

    text, notices = prepare(text, british)
    g2p = _g2p(british)
    tokens = g2p.phonemize_tokens(g2p.tokenize(normalize(text)))
    unread = [tk.text for tk in tokens if not tk.phonemes and any(c.isalnum() for c in tk.text)]
    if unread:
        notices.append(skipped_notice(unread, "English"))
    phonemes = "".join((tk.phonemes or "") + (" " if tk.whitespace else "") for tk in tokens)
    return phonemes.strip(), notices
