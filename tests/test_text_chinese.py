"""Mandarin front end: misaki's Kokoro v1.0 readings, numbers, times, dates and currency read out,
vocabulary coverage."""

from __future__ import annotations

import pytest

from voicedesk.core.text import kokoro_vocab, phonemize
from voicedesk.core.text.chinese import phonemize as chinese_phonemes


def read(text: str) -> str:
    return chinese_phonemes(text)[0]


def test_tones_are_arrows_as_in_kokoro_v1() -> None:
    assert read("你好，世界。") == "ni↓xau↓, ʂɨ↘ʨje↘."
    assert read("妈麻马骂吗") == "ma→ma↗ma↓ ma↘ ma"


@pytest.mark.parametrize(
    ("written", "spoken"),
    [
        ("我有3个苹果", "我有三个苹果"),
        ("一共1,500元", "一共一千五百元"),
        ("增长了25%", "增长了百分之二十五"),
        ("圆周率是3.14", "圆周率是三点一四"),
        ("下午3:15开会", "下午三点十五分开会"),
        ("2024-03-05出发", "二零二四年三月五日出发"),
        ("花了$20", "花了二十美元"),
        ("花了€5", "花了五欧元"),
        ("花了£5", "花了五英镑"),
        ("花了¥5", "花了五元"),
        ("零下-5度", "零下负五度"),
        ("电话1381234567890", "电话一三八一二三四五六七八九零"),
        ("第3名", "第三名"),
    ],
)
def test_written_forms_are_read_out(written: str, spoken: str) -> None:
    got = read(written)
    assert not any(c.isdigit() for c in got)
    assert got == read(spoken)


def test_latin_words_are_read_as_english() -> None:
    chunk = phonemize("他说Hello world，然后走了。", "zh")[0]
    assert "həlˈO wˈɜɹld" in chunk.phonemes


def test_every_symbol_is_in_the_vocabulary() -> None:
    vocab = set(kokoro_vocab())
    samples = [
        "北京是中华人民共和国的首都。",
        "他说：“我们明天见！”她问：“几点？”",
        "《红楼梦》是一部小说【注】，作者曹雪芹（约1715—1763）。",
        "繁體中文也可以讀，例如：臺灣、香港。",
        "今天是2024年12月25日，气温-3度，湿度85%。",
        "苹果iPhone和华为Mate都很受欢迎·真的吗？",
    ]
    for sample in samples:
        for chunk in phonemize(sample, "zh"):
            assert set(chunk.phonemes) <= vocab, (sample, set(chunk.phonemes) - vocab)
            assert not chunk.notices, (sample, chunk.notices)


def test_kana_and_emoji_are_reported() -> None:
    chunk = phonemize("表情😀和かな。", "zh")[0]
    assert chunk.notices == ("Skipped “😀”, “かな”: no Mandarin Chinese reading for them.",)


def test_characters_without_a_reading_are_reported() -> None:
    # U+9FEA has no pinyin in pypinyin; U+3400 lies outside the block the reader handles.
    chunk = phonemize("你好\u9fea和\u3400。", "zh")[0]
    assert chunk.phonemes.startswith("ni↓xau↓")
    assert chunk.notices == ("Skipped “\u9fea”, “\u3400”: no Mandarin Chinese reading for them.",)
