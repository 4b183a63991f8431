"""The prompt's words: typed and checked, or heard by the transcriber (Whisper tiny.en, on the CPU)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from voicedesk.core.audio.intake import Prompt, load_prompt
from voicedesk.core.clone.fit import FitSettings
from voicedesk.core.clone.words import PromptWords, prompt_words, transcriber_available, within_budget
from voicedesk.core.errors import InputError

pytestmark = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng")
WORDS = "The old lighthouse keeper watched the boats come home."


@pytest.fixture(scope="module")
def prompt(tmp_path_factory: pytest.TempPathFactory) -> Prompt:
    path = tmp_path_factory.mktemp("words") / "prompt.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "150", "-w", str(path), WORDS], check=True, capture_output=True)
    return load_prompt(Path(path))


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
