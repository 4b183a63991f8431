"""The development benchmark's configuration names say which of the prompt's words a fit uses."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).parent / "benchmarks" / "clone_dev.py"


@pytest.fixture(scope="module")
def clone_dev() -> ModuleType:
    sys.path.insert(0, str(SCRIPT.parent))  # its sibling clone_devset, as when run as a script
    spec = importlib.util.spec_from_file_location("clone_dev", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("config", "words"), [
    ("said-only-0.1-heard", "heard"),
    ("said-only-0.1-heard-seed1", "heard"),  # "heard" before the seed: once read as typed
    ("s14-last-heard-seed0", "heard"),  # once read as no words at all
    ("s15-typed-seed2", "typed"),
    ("said-only-0.1", "typed"),
    ("s15-none-seed0", "none"),
    ("s30-misread-seed1", "misread"),
    ("default", "none"),
])
def test_words_follow_the_name(clone_dev: ModuleType, config: str, words: str) -> None:
    assert config in clone_dev.CONFIGS
    assert clone_dev.words_kind(config) == words



def test_long_prompt_configs_fit_the_long_prompts_words(clone_dev: ModuleType) -> None:
    ids = {"prompt": [1], "prompt_long": [1, 2], "heard": {"x": [3]}, "heard_long": {"x": [3, 4]},
           "heard_longer": {"x": [3, 4, 5]}, "heard_long_start": {"x": [6]}}
    assert {"s27-heard-seed0", "s27-long-heard-seed0", "s27-longer-heard-seed0"} <= set(clone_dev.CONFIGS)
    assert clone_dev.words_of("s27-long-heard-seed0", ids, "x") == [3, 4]
    assert clone_dev.words_of("s27-longer-heard-seed1", ids, "x") == [3, 4, 5]
    assert clone_dev.words_of("s27-heard-seed0", ids, "x") == [3]
    assert clone_dev.words_of("s27-long-whole-heard-seed1", ids, "x") == [6]  # all the prompt, its start's words
    assert clone_dev.words_of("s15-typed-seed2", ids, "x") == [1]
