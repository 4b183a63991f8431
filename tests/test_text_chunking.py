"""Sentence splitting, chunk bounds and hostile input for the text front ends."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from voicedesk.core.errors import InputError, ModelError
from voicedesk.core.text import LANGUAGES, MAX_PHONEMES, PhonemeChunk, TextError, kokoro_vocab, phonemize
from voicedesk.core.text.sentences import halve, split_long, split_sentences

PROSE = (
    "Dr. Smith arrived at 9:45 am on Jan. 5th, 2021, carrying $1,250.75 in a worn leather bag. "
    "She had walked 3.5 km from St. Mary's, past the old mill; e.g. the bakery, the forge, etc. "
    "Nobody knew why. J. K. Rowling once said something similar! Did it matter? Perhaps not…\n\n"
)


def _no_space(text: str) -> str:
    return "".join(text.split())


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("Dr. Smith went home. He slept.", ["Dr. Smith went home.", "He slept."]),
        ("J. K. Rowling wrote it. Yes!", ["J. K. Rowling wrote it.", "Yes!"]),
        ("Pi is 3.14. Really?! \"Yes.\" Fine", ["Pi is 3.14.", "Really?!", '"Yes."', "Fine"]),
        ("Apples, e.g. pears. Then", ["Apples, e.g. pears.", "Then"]),
        ("first line\nsame sentence\n\nnew paragraph", ["first line\nsame sentence", "new paragraph"]),
        ("こんにちは。元気ですか？「はい！」", ["こんにちは。", "元気ですか？", "「はい！」"]),
        ("你好。今天很好！", ["你好。", "今天很好！"]),
        ("   ", []),
    ],
)
def test_sentences(text: str, sentences: list[str]) -> None:
    assert split_sentences(text) == sentences


@pytest.mark.parametrize(
    "text",
    ["word " * 300, "a" * 1000, "one, two; three: four — five " * 40, "汉字，" * 300, "x y" * 10],
)
def test_split_long_bounds_pieces_and_keeps_every_character(text: str) -> None:
    pieces = split_long(text, 50)
    assert all(0 < len(p) <= 50 for p in pieces)
    assert _no_space("".join(pieces)) == _no_space(text)


def test_split_long_prefers_commas_then_spaces() -> None:
    assert split_long("aaaa bbbb, cccc dddd eeee", 16) == ["aaaa bbbb,", "cccc dddd eeee"]
    assert split_long("aaaa bbbb cccc dddd", 12) == ["aaaa bbbb", "cccc dddd"]
    assert halve("aaa, bbb ccc") == ("aaa,", "bbb ccc")
    assert halve("abcdef") == ("abc", "def")


@pytest.mark.parametrize(
    "text",
    ["." * 100_000, "a. " * 33_334, "\n" * 100_000, "1," * 50_000, "a" * 100_000, "😀" * 100_000, PROSE * 330],
)
def test_splitting_100k_characters_is_fast(text: str) -> None:
    start = time.perf_counter()
    pieces = [p for s in split_sentences(text) for p in split_long(s, 200)]
    assert time.perf_counter() - start < 2.0  # linear: about 0.1 s here
    assert all(len(p) <= 200 for p in pieces)


def test_100k_characters_of_prose_are_phonemized_in_bounded_chunks() -> None:
    text = (PROSE * 330)[:100_000]
    start = time.perf_counter()
    chunks = phonemize(text, "en")
    elapsed = time.perf_counter() - start
    assert elapsed < 60, elapsed  # about 2 s on a quiet 2-core machine
    _check(chunks, "en")
    assert _no_space("".join(c.text for c in chunks)) == _no_space(text)


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "The committee, which met on 3/14/2024, decided — after 12.5 hours — that " * 12),
        ("en", "x" * 5000),
        ("en", "1234567890" * 500),
        ("en", "1," * 2500),
        ("ja", "東京都の人口は約1,400万人で、日本で最も多い" * 20),
        ("ja", "あ" * 3000),
        ("zh", "北京是中华人民共和国的首都，人口约2,189万" * 20),
        ("zh", "汉" * 3000),
    ],
)
def test_long_text_gives_chunks_within_the_model_limit(language: str, text: str) -> None:
    start = time.perf_counter()
    chunks = phonemize(text, language)
    assert time.perf_counter() - start < 30
    _check(chunks, language)
    assert len(chunks) > 1


def test_a_5000_letter_word_is_read_in_pieces_and_said_so() -> None:
    chunks = phonemize("x" * 5000, "en")
    assert any("pieces" in n for c in chunks for n in c.notices)


@pytest.mark.parametrize("text", ["", "   \n\t ", "\x00\x01\x02"])
def test_empty_text_is_a_clear_error(text: str) -> None:
    with pytest.raises(TextError, match="no text to speak|Nothing in this text"):
        phonemize(text)


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_emoji_only_text_is_a_clear_error_naming_what_was_skipped(language: str) -> None:
    with pytest.raises(TextError) as caught:
        phonemize("😀🎉 🙂", language)
    message = str(caught.value)
    assert "😀🎉" in message and LANGUAGES[language] in message
    assert isinstance(caught.value, InputError)


def test_punctuation_only_text_is_a_clear_error() -> None:
    with pytest.raises(TextError, match="Nothing in this text can be spoken"):
        phonemize("... !!! ???")


def test_control_characters_are_removed_and_reported() -> None:
    chunks = phonemize("Hel\x00lo\u200b there\x07.\x1b", "en")
    assert [(c.text, c.phonemes) for c in chunks] == [(c.text, c.phonemes) for c in phonemize("Hello there.")]
    assert chunks[0].notices == ("Ignored 4 invisible control characters.",)


def test_notices_of_a_silent_sentence_move_to_the_next_chunk() -> None:
    chunks = phonemize("😀. Hello there.", "en")
    assert [c.text for c in chunks] == ["Hello there."]
    assert "😀" in chunks[0].notices[0]


def test_mixed_scripts_in_english_are_reported() -> None:
    chunks = phonemize("Tokyo is 東京 and Moscow is Москва.", "en")
    assert "東京" in chunks[0].notices[0] and "Москва" in chunks[0].notices[0]
    _check(chunks, "en")


def test_unknown_language_is_a_clear_error() -> None:
    with pytest.raises(TextError, match=r"Unknown language 'fr'; choose one of: en \(English\), en-gb \(British English\), ja"):
        phonemize("Bonjour", "fr")


def test_chunks_are_frozen() -> None:
    chunk = phonemize("Hi.")[0]
    with pytest.raises(AttributeError):
        chunk.phonemes = "x"  # type: ignore[misc]


def test_import_loads_no_dictionary_or_model() -> None:
    code = (
        "import sys, voicedesk.core.text; "
        "heavy = [m for m in ('hibari.g2p', 'pyopenjtalk', 'jieba', 'misaki.zh', 'onnxruntime') if m in sys.modules]; "
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def _check(chunks: list[PhonemeChunk], language: str) -> None:
    vocab = kokoro_vocab()
    for chunk in chunks:
        assert 0 < len(chunk.phonemes) <= MAX_PHONEMES
        assert set(chunk.phonemes) <= set(vocab)
        assert chunk.language == language
        assert not any("phoneme symbols" in n for n in chunk.notices), chunk.notices


_ALPHABET = list("0123456789²①١.,:;-/%$€£¥+=&@#~ abcXYZ'\"!?。、，！？你好中文汉字あいうカタカナ漢字😀Ωé\n\t\x00()（）【】《》「」ー・…—")


@pytest.mark.parametrize("language", sorted(LANGUAGES))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(st.sampled_from(_ALPHABET), max_size=60).map("".join))
def test_any_text_gives_bounded_chunks_or_a_clear_error(language: str, text: str) -> None:
    try:
        chunks = phonemize(text, language)
    except TextError:
        return
    _check(chunks, language)


def test_a_missing_reader_package_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import voicedesk.core.text.english as english

    def missing(text: str) -> tuple[str, list[str]]:
        raise ModuleNotFoundError("No module named 'hibari'", name="hibari")

    monkeypatch.setattr(english, "phonemize", missing)
    with pytest.raises(ModelError, match="English text reader cannot load \\(hibari is missing\\); reinstall"):
        phonemize("Hello.")
