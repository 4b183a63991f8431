"""`voicedesk say`: a real run writes a valid wav; failures are one sentence and leave targets alone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from voicedesk.cli import main


def _run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "voicedesk", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=os.environ.copy(),
    )


def test_say_writes_a_24khz_mono_16bit_wav_over_an_existing_file(tmp_path: Path) -> None:
    target = tmp_path / "out.wav"
    target.write_bytes(b"an older take")
    text = tmp_path / "lines.txt"
    text.write_text("Hello there. This is a test of the speech engine.\n", encoding="utf-8")
    result = _run_cli(
        "say",
        "--voice",
        "jf_alpha",
        "--text-file",
        str(text),
        "-o",
        str(target),
        "--device",
        "cpu",
        "--seed",
        "1",
    )
    assert result.returncode == 0, result.stderr
    info = sf.info(target)
    assert (info.samplerate, info.channels, info.subtype) == (24000, 1, "PCM_16")
    audio, _ = sf.read(target, dtype="float32")
    assert 2.0 < len(audio) / 24000 < 8.0
    assert np.sqrt(np.mean(audio**2)) > 0.01
    assert "Traceback" not in result.stderr
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.wav")]  # no temporary left over


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--voice", "nobody", "--text", "Hi."], "no voice named 'nobody'"),
        (["--voice", "jf_alpha", "--text", "   "], "no text to speak"),
        (["--voice", "jf_alpha", "--text", "Hi.", "--speed", "0"], "Speed 0.0 is out of range"),
        (["--voice", "jf_alpha", "--text-file", "missing.txt"], "does not exist"),
    ],
)
def test_failures_are_one_sentence_and_keep_the_existing_file(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "keep.wav"
    target.write_bytes(b"precious")
    code = main(["say", *args, "-o", str(target)])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and err.startswith("Error: ") and err.count("\n") == 1
    assert target.read_bytes() == b"precious"


def test_output_must_be_a_wav_in_an_existing_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["say", "--voice", "jf_alpha", "--text", "Hi.", "-o", str(tmp_path / "no" / "x.wav")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["say", "--voice", "jf_alpha", "--text", "Hi.", "-o", str(tmp_path / "x.mp3")]) == 2
    assert ".wav" in capsys.readouterr().err


def test_a_stock_voice_reads_english_in_its_own_accent_unless_told_otherwise() -> None:
    from voicedesk.cli.say import resolve_voice

    assert resolve_voice("bm_george")[1] == "en-gb"  # Kokoro's British voices were trained on British readings
    assert resolve_voice("af_heart")[1] == "en"
    assert resolve_voice("jf_alpha")[1] == "en"  # English text by default, as before; the GUI switches to Japanese
