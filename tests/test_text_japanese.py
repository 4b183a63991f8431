"""Japanese front end: numbers, times, dates and currency read out; vocabulary coverage."""

from __future__ import annotations

import pytest

from voicedesk.core.text import kokoro_vocab, phonemize
from voicedesk.core.text.japanese import phonemize as japanese_phonemes


def read(text: str) -> str:
    return japanese_phonemes(text)[0]


def test_plain_sentence_reads_as_kokoro_expects() -> None:
    assert read("こんにちは。今日の説明を始めます。") == "koɲɲiʨiβa. kʲoː no seʦɨmeː o haʥimemasɨ."


@pytest.mark.parametrize(
    ("written", "spoken"),
    [
        ("1,500円です", "1500円です"),
        ("3:30に会う", "3時30分に会う"),
        ("10:00に会う", "10時に会う"),
        ("2024/3/5です", "2024年3月5日です"),
        ("2024-03-05です", "2024年3月5日です"),
        ("$20です", "20ドルです"),
        ("€5です", "5ユーロです"),
        ("£5です", "5ポンドです"),
        ("¥500です", "500円です"),
        ("50%です", "50パーセントです"),
        ("気温は-5度", "気温はマイナス5度"),
        ("１２３とＡＢＣ", "123とABC"),
        ("番号は1234567890123です", "番号はイチニサンヨンゴロクナナハチキュウゼロイチニサンです"),
    ],
)
def test_written_forms_are_read_out(written: str, spoken: str) -> None:
    assert read(written) == read(spoken)


def test_numbers_become_words() -> None:
    assert read("1500円") == "seŋɡo çakɯ eɴ"


def test_latin_words_are_read_as_english() -> None:
    chunk = phonemize("iPhoneを買いました。", "ja")[0]
    assert chunk.phonemes.startswith("ˈIfˌOn ")


def test_every_symbol_is_in_the_vocabulary() -> None:
    vocab = set(kokoro_vocab())
    samples = [
        "吾輩は猫である。名前はまだ無い。",
        "「本当？」と彼は言った（笑）。『本』【注】〜…！",
        "東京タワーは333メートル、富士山は3,776メートルです。",
        "ｶﾀｶﾅと全角ＡＢＣ、そしてEnglish words。",
        "2024年12月25日の午後7:45に、¥12,000と$50を使いました。",
        "彼女はゆっくりと、しかし確実に歩いていった……",
    ]
    for sample in samples:
        for chunk in phonemize(sample, "ja"):
            assert set(chunk.phonemes) <= vocab, (sample, set(chunk.phonemes) - vocab)
            assert not chunk.notices, (sample, chunk.notices)


def test_unreadable_characters_are_reported() -> None:
    chunk = phonemize("絵文字😀とΩ記号。", "ja")[0]
    assert chunk.notices == ("Skipped “😀”, “Ω”: no Japanese reading for them.",)


def test_rare_katakana_are_read() -> None:
    assert read("ヹ") == read("ヴェ")
