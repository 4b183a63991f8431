"""Export: formats and rates read back exactly; faults never leave a partial or damaged file."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from tools.filesystems import readonly_folder, small_tmpfs
from tools.processes import kill_while_writing
from voicedesk.core.audio.export import ExportError, write_wav
from voicedesk.core.errors import InputError


def tone(seconds: float = 1.0, rate: int = 24000, freq: float = 1000.0, amplitude: float = 0.5) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (amplitude * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def peak_hz(audio: np.ndarray, rate: int) -> float:
    return float(np.argmax(np.abs(np.fft.rfft(audio * np.hanning(audio.size)))) * rate / audio.size)


@pytest.mark.parametrize("rate", [24000, 44100, 48000])
@pytest.mark.parametrize(("subtype", "tolerance"), [("PCM_16", 1e-4), ("PCM_24", 1e-6), ("FLOAT", 1e-7)])
def test_rates_and_bit_depths_read_back(tmp_path: Path, rate: int, subtype: str, tolerance: float) -> None:
    source = tone()
    path = write_wav(tmp_path / "out.wav", source, 24000, target_rate=rate, subtype=subtype)
    info = sf.info(path)
    assert (info.samplerate, info.subtype, info.channels, info.format) == (rate, subtype, 1, "WAV")
    assert abs(info.frames - rate) <= 1
    audio, _ = sf.read(path, dtype="float32")
    assert abs(peak_hz(audio, rate) - 1000) < 2
    if rate == 24000:
        assert np.max(np.abs(audio - source)) <= tolerance
    assert [p.name for p in tmp_path.iterdir()] == ["out.wav"]  # no temp file left


def test_overs_and_nan_are_clipped_not_wrapped(tmp_path: Path) -> None:
    loud = tone(amplitude=1.8)
    loud[10] = np.nan
    audio, _ = sf.read(write_wav(tmp_path / "loud.wav", loud, 24000), dtype="float32")
    assert np.max(audio) <= 1.0 and np.min(audio) >= -1.0 and audio[10] == 0.0
    positives = loud > 1.0
    assert np.all(audio[positives] > 0.99)  # wrapping would have made these negative


@pytest.mark.parametrize(("kwargs", "message"), [({"subtype": "PCM_8"}, "bit depth"), ({"target_rate": 22050}, "22050 Hz")])
def test_bad_options_are_input_errors(tmp_path: Path, kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=message):
        write_wav(tmp_path / "x.wav", tone(), 24000, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="no audio"):
        write_wav(tmp_path / "x.wav", np.zeros(0, np.float32), 24000)
    assert list(tmp_path.iterdir()) == []


def test_vanished_folder(tmp_path: Path) -> None:
    folder = tmp_path / "usb-stick"
    folder.mkdir()
    shutil.rmtree(folder)
    with pytest.raises(ExportError, match="no longer exists.*choose another folder"):
        write_wav(folder / "take.wav", tone(), 24000)


def test_read_only_folder_keeps_the_existing_file(tmp_path: Path) -> None:
    old = b"RIFF an earlier export the user cares about"
    with readonly_folder(tmp_path / "ro", {"take.wav": old}) as folder:
        if folder is None:
            pytest.skip("cannot make a read-only folder here (root without mount)")
        with pytest.raises(ExportError, match="read-only or no permission"):
            write_wav(folder / "take.wav", tone(), 24000)
        assert (folder / "take.wav").read_bytes() == old
        assert sorted(p.name for p in folder.iterdir()) == ["take.wav"]


def test_disk_full_on_a_real_small_file_system_keeps_the_existing_file(tmp_path: Path) -> None:
    with small_tmpfs(tmp_path / "tiny", size_kib=64) as folder:
        if folder is None:
            pytest.skip("mounting a tmpfs needs root; the injected fault below covers this case")
        small = write_wav(folder / "take.wav", tone(0.2), 24000)  # ~10 kB fits
        before = small.read_bytes()
        with pytest.raises(ExportError, match="full; free some space"):
            write_wav(folder / "take.wav", tone(3.0), 24000, target_rate=48000, subtype="FLOAT")  # ~576 kB
        assert small.read_bytes() == before
        assert sorted(p.name for p in folder.iterdir()) == ["take.wav"]


def test_disk_full_injected_at_the_write_keeps_the_existing_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "take.wav"
    write_wav(target, tone(0.2), 24000)
    before = target.read_bytes()

    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", no_space)  # the file system reports the failure at flush time
    with pytest.raises(ExportError, match="full"):
        write_wav(target, tone(2.0), 24000)
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["take.wav"]


_EXPORTER = """
import sys, numpy as np
from voicedesk.core.audio.export import write_wav
t = np.arange(24000 * 20) / 24000
long = (0.5 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
print("ready", flush=True)
while True:
    write_wav(sys.argv[1], long, 24000, target_rate=48000, subtype="FLOAT")
"""


def test_killed_mid_export_leaves_the_old_file_or_the_new_one(tmp_path: Path) -> None:
    target = tmp_path / "take.wav"
    write_wav(target, tone(0.2), 24000)
    for _ in kill_while_writing(_EXPORTER, [str(target)], (0.1, 0.3, 0.6)):
        info = sf.info(target)  # always a whole file: the first short one or a complete long one
        assert (info.frames, info.samplerate) in {(4800, 24000), (960000, 48000)}
        assert sf.read(target)[0].shape[0] == info.frames
