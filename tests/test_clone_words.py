"""The prompt's words: typed and checked, or heard by the transcriber (Whisper tiny.en, on the CPU)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from voicedesk.core import paths
from voicedesk.core.audio.intake import Prompt, load_prompt
from voicedesk.core.clone.fit import FitSettings
from voicedesk.core.clone.words import (
    CPU_PROMPT_SECONDS,
    READ_AGREEMENT,
    READ_LETTERS,
    PromptWords,
    leading_words,
    letter_agreement,
    prompt_words,
    read_or_heard,
    transcriber_available,
    within_budget,
    word_agreement,
)
from voicedesk.core.errors import InputError

pytestmark = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng")
WORDS = "The old lighthouse keeper watched the boats come home."
SECOND = "A gentle breeze carried the smell of fresh bread through the open window."


def spoken(folder: Path, text: str) -> Prompt:
    path = folder / "prompt.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "150", "-w", str(path), text], check=True, capture_output=True)
    return load_prompt(path)


@pytest.fixture(scope="module")
def prompt(tmp_path_factory: pytest.TempPathFactory) -> Prompt:
    return spoken(tmp_path_factory.mktemp("words"), WORDS)


@pytest.fixture(scope="module")
def long_prompt(tmp_path_factory: pytest.TempPathFactory) -> Prompt:
    return spoken(tmp_path_factory.mktemp("long-words"), f"{WORDS} {SECOND}")


def test_typed_words_are_used_as_given(prompt: Prompt) -> None:
    words = prompt_words(prompt, f"  {WORDS} ", "en")
    assert words.text == WORDS and not words.heard and words.ids and len(words.ids) > 30
    with pytest.raises(InputError, match="type exactly what the recording says"):
        prompt_words(prompt, "Hello.", "en")


@pytest.mark.skipif(not transcriber_available(), reason="the transcriber extra is not installed")
def test_an_english_prompt_is_heard_when_no_words_are_typed(prompt: Prompt) -> None:
    words = prompt_words(prompt, "", "en")
    assert words.heard and not words.notice and words.ids and words.seconds > 0
    # espeak-ng is robotic enough that tiny.en mishears some words ("the moat's come foam"); the
    # mishearings sound alike, which is what the aligned comparison needs.
    heard = {w.strip(".,").lower() for w in words.text.split()}
    assert len(heard & {"the", "old", "lighthouse", "keeper", "watched", "boats", "come", "home"}) >= 3, words.text


def test_other_languages_and_listen_off_fit_without_words(prompt: Prompt) -> None:
    assert prompt_words(prompt, "", "ja") == PromptWords("", None, heard=False)
    assert prompt_words(prompt, "", "en", listen=False) == PromptWords("", None, heard=False)


def test_time_spent_listening_comes_out_of_the_clone_budget() -> None:
    settings = FitSettings(seconds=60.0)
    assert within_budget(settings, PromptWords("a", [1], True, seconds=1.5)).seconds == 58.5
    assert within_budget(settings, PromptWords("", None, False)) is settings


@pytest.mark.skipif(not transcriber_available(), reason="the transcriber extra is not installed")
def test_on_the_cpu_only_a_long_prompts_start_is_heard(long_prompt: Prompt) -> None:
    whole = prompt_words(long_prompt, "", "en")
    assert whole.until == 0.0 and whole.transcript == whole.text and not whole.part_notice
    start = prompt_words(long_prompt, "", "en", within=CPU_PROMPT_SECONDS)
    assert start.ids and len(start.ids) < len(whole.ids or [])
    assert 1.5 < start.until <= CPU_PROMPT_SECONDS < long_prompt.speech_seconds
    heard = {w.strip(".,").lower() for w in start.text.split()}
    assert "breeze" not in heard and len(heard & {"old", "lighthouse", "keeper", "watched", "come", "home"}) >= 3
    assert start.transcript == "" and start.text in start.part_notice  # the saved voice claims no words for it all
    audio = long_prompt.audio_16k()
    assert start.part(audio).size == int((start.until + 0.15) * 16000) < audio.size
    # Typed words cannot be placed in time: they stay whole.
    typed = prompt_words(long_prompt, f"{WORDS} {SECOND}", "en", within=CPU_PROMPT_SECONDS)
    assert typed.until == 0.0 and typed.part(audio) is audio


def test_leading_words_end_after_a_sentence_or_clause_in_time() -> None:
    words = [("The", 0.3), ("keeper", 1.2), ("came", 1.8), ("home.", 2.6), ("A", 2.9), ("gentle", 3.3),
             ("breeze,", 3.9), ("carried", 4.4), ("bread.", 5.8)]
    assert leading_words(words, 4.0) == ("The keeper came home. A gentle breeze,", 3.9)
    assert leading_words(words, 3.5) == ("The keeper came home.", 2.6)
    assert leading_words(words, 2.0) == ("The keeper came", 1.8)  # no pause in time: the last word in time
    assert leading_words(words, 0.1) == ("The", 0.3)  # at least one word
    assert leading_words(words, 6.0) == (" ".join(w for w, _ in words), 0.0)  # all of them: no cut
    assert leading_words([], 4.0) == ("", 0.0)


def test_a_line_shown_while_recording_is_used_when_it_can_be_the_recordings_words(prompt: Prompt) -> None:
    words = prompt_words(prompt, WORDS, "en", read=True)
    assert words.text == WORDS and not words.heard and words.ids and not words.notice
    assert (words.seconds > 0) == transcriber_available()  # checked against what is heard, where it can be
    # Too short for the recording: dropped with a notice, not refused, and the clip is listened to.
    words = prompt_words(prompt, "Hello.", "en", read=True)
    assert "line shown while recording was not used" in words.notice
    assert words.heard == transcriber_available() and (words.ids is not None) == transcriber_available()
    silent = prompt_words(prompt, "Hello.", "en", read=True, listen=False)
    assert silent.ids is None and "Type what the recording says" in silent.notice


@pytest.mark.skipif(not transcriber_available(), reason="the transcriber extra is not installed")
def test_a_line_the_speaker_did_not_read_gives_way_to_the_words_heard(prompt: Prompt) -> None:
    other = "They watched the stars from the roof of the house."  # as long as WORDS: the length check passes
    words = prompt_words(prompt, other, "en", read=True)
    assert words.heard and words.text != other and "does not say the line shown" in words.notice
    typed = prompt_words(prompt, other, "en")  # typed by the user: taken at their word
    assert typed.text == other and not typed.heard


def test_word_agreement_forgives_a_misheard_word_not_another_sentence() -> None:
    assert word_agreement("the old lighthouse keeper watched the moats come home", WORDS) == pytest.approx(7 / 8)
    assert word_agreement("The old lighthouse keeper watched the boats come home.", WORDS) == 1.0
    assert word_agreement("They watched the stars from the roof of the house.", WORDS) < READ_AGREEMENT
    assert word_agreement("", WORDS) == 0.0


def test_letter_agreement_forgives_words_misheard_apart_or_together_not_another_line() -> None:
    misheard = {  # what tiny.en heard in espeak-ng and MBROLA voices reading the line on the right: too few
        # of its words to pass by words alone
        "The old ice housekeeper watched the most scum foam.": WORDS,
        "They would like to keep watch the boats come at home,": WORDS,
        "The old lights don't skip or watch the boats come at home.": WORDS,
    }
    for heard, line in misheard.items():
        assert word_agreement(heard, line) < READ_AGREEMENT <= READ_LETTERS <= letter_agreement(heard, line)
    lines = paths.resource_lines("reading-lines.txt") + [WORDS]
    assert len(lines) > 20
    assert max(letter_agreement(a, b) for a in lines for b in lines if a != b) < READ_LETTERS
    assert max(word_agreement(a, b) for a in lines for b in lines if a != b) < READ_AGREEMENT
    line = PromptWords(WORDS, [1], heard=False)
    heard = PromptWords("The old ice housekeeper watched the most scum foam.", [2], heard=True, seconds=1.0)
    assert read_or_heard(line, heard).text == WORDS  # the line's exact words beat the mishearing


def test_a_line_that_agrees_with_the_words_heard_keeps_its_spelling_unless_only_its_start_was_heard() -> None:
    line = PromptWords(WORDS, [1, 2, 3], heard=False)
    heard = PromptWords("the old lighthouse keeper watched the moats come home", [1, 2, 4], True, seconds=0.8)
    assert read_or_heard(line, heard) == PromptWords(WORDS, [1, 2, 3], heard=False, seconds=0.8)
    start = PromptWords("The old lighthouse keeper", [1], True, seconds=0.8, until=1.6)  # placed in time: kept
    assert read_or_heard(line, start) is start
    failed = PromptWords("", None, True, "The recording could not be transcribed.", 0.5)
    assert read_or_heard(line, failed).text == WORDS  # nothing heard to disagree with
