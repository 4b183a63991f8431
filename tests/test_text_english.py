"""English front end: readings of numbers, dates, currency and abbreviations, and vocabulary coverage."""

from __future__ import annotations

import pytest

from voicedesk.core.text import kokoro_vocab, phoneme_ids, phonemize
from voicedesk.core.text.english import phonemize as english_phonemes


def read(text: str) -> str:
    """The phonemes of `text` (one sentence) with stress marks removed, for readable comparisons."""
    return english_phonemes(text)[0].replace("ˈ", "").replace("ˌ", "")


def words(*spoken: str) -> str:
    """What the same words give when written out: the reference for a normalised reading."""
    return " ".join(read(w) for w in spoken)


@pytest.mark.parametrize(
    ("written", "spoken"),
    [
        ("42", "forty-two"),
        ("1,234", "one thousand two hundred thirty-four"),
        ("3.14", "three point one four"),
        ("21st", "twenty-first"),
        ("3rd", "third"),
        ("$3.50", "three dollars and fifty cents"),
        ("€20", "twenty euros"),
        ("£5", "five pounds"),
        ("¥500", "five hundred yen"),
        ("12.5%", "twelve point five percent"),
        ("3:30 pm", "three thirty P.M."),
        ("7:05", "seven oh five"),
        ("2024-03-14", "March fourteenth, twenty twenty-four"),
        ("Dr. Smith", "Doctor Smith"),
        ("Mr. Jones", "Mister Jones"),
        ("St. Paul", "Saint Paul"),
        ("Main St.", "Main Street"),
        ("apples, e.g. pears", "apples, for example pears"),
        ("that, i.e. this", "that, that is this"),
    ],
)
def test_written_forms_are_read_out(written: str, spoken: str) -> None:
    got = read(written)
    assert not any(c.isdigit() or c in "$€£¥%" for c in got), got
    assert _bare(got) == _bare(read(spoken))


def _bare(phonemes: str) -> str:
    return "".join(c for c in phonemes if c not in " ,.-—")


def test_etc_is_read_as_a_word() -> None:
    assert read("etc.").startswith("ɛtsɛTəɹə")


@pytest.mark.parametrize("language", ["en", "en-gb"])
def test_every_symbol_is_in_the_vocabulary(language: str) -> None:
    vocab = kokoro_vocab()
    assert len(vocab) == 114 or len(vocab) > 100  # the 178-id table has gaps; ids stay below 178
    assert max(vocab.values()) < 178
    samples = [
        "Hello there! How are you today?",
        "The quick brown fox jumps over the lazy dog; then it sleeps — quietly…",
        "Flurbish zxqvbnm glarptastic (unknown words) and “quotes”.",
        "On 12/25/2023 at 10:45 am, Prof. O'Brien paid £1,250.75 — about 3% more than in 1999.",
        "Café, naïve, résumé, Zoë and Ångström; ș and ł too.",
        "It's 5 km, 20°C, 1/2 way & #3 on the list; A+B=C.",
    ]
    for sample in samples:
        for chunk in phonemize(sample, language):
            assert set(chunk.phonemes) <= set(vocab), (sample, set(chunk.phonemes) - set(vocab))
            assert len(phoneme_ids(chunk.phonemes)) == len(chunk.phonemes)
            assert not chunk.notices, chunk.notices


def test_other_scripts_and_emoji_are_reported_not_dropped_silently() -> None:
    chunks = phonemize("I like tea 😀 and привет.", "en")
    assert len(chunks) == 1
    assert "😀" in chunks[0].notices[0] and "привет" in chunks[0].notices[0]
    assert read("I like tea and.") in chunks[0].phonemes.replace("ˈ", "").replace("ˌ", "")


def test_british_english_reads_as_kokoros_british_voices_were_trained() -> None:
    british = phonemize("Please leave the parcel by the garden gate, Zorblatt.", "en-gb")[0].phonemes
    american = phonemize("Please leave the parcel by the garden gate, Zorblatt.", "en")[0].phonemes
    assert "ɡˈɑːdᵊn" in british and "pˈɑːsᵊl" in british  # long vowels, no r after them
    assert "ɡˈɑɹdən" in american and "pˈɑɹsᵊl" in american
    assert "ɹ" not in british.split()[-1] and "ɹ" in american.split()[-1]  # an unknown word: each accent's net
    assert not phonemize("Café, naïve and Zoë.", "en-gb")[0].notices  # letters the British net reads
