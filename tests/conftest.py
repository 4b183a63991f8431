"""Test-wide setup: user data in a temporary VOICEDESK_HOME, Qt offscreen, no network."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(autouse=True)
def voicedesk_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test gets its own user data root; the converted-weights cache is shared across tests."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("VOICEDESK_HOME", str(home))
    shared_cache = tmp_path_factory.getbasetemp() / "shared-cache"
    shared_cache.mkdir(exist_ok=True)
    monkeypatch.setenv("VOICEDESK_CACHE", str(shared_cache))
    return home
