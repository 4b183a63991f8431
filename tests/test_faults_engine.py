"""Faults in the engine and the clone command: the GPU running out of memory while speaking, and the
process killed in the middle of `voicedesk clone`.

Out-of-memory cannot happen on this machine, so `torch.OutOfMemoryError` is injected at the engine's
device boundary (`Engine._infer`: inputs onto the device, the model call, audio back) of an engine
that stands in for one on the GPU (the real model, on the CPU, labelled "cuda"). Everything above
that boundary, the retry with shorter pieces and the move to the CPU, is the engine's real code.

Runtime: a few short syntheses, plus one `voicedesk clone` subprocess per kill (engine load and the
start of a fit each), about 1-2 minutes on two free cores.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from voicedesk.core.engine import Engine
from voicedesk.core.engine.engine import CPU_NOTICE, SHORTER_NOTICE
from voicedesk.core.errors import ModelError

TEXT = "The lighthouse keeper climbed the stairs. He trimmed the wick and watched the sea."


def stand_in_gpu_engine(cpu_engine: Any, monkeypatch: pytest.MonkeyPatch,
                        fails: Callable[[str], bool]) -> tuple[Engine, list[tuple[str, str]]]:
    """An engine labelled "cuda" whose device calls raise out-of-memory while `fails(phonemes)` is true
    and it is still on the "GPU"; once moved to the CPU they run for real. Returns it and its call log."""
    engine = Engine(cpu_engine.model, "cuda", "GPU check passed", fp16=False)
    real = engine._infer
    calls: list[tuple[str, str]] = []

    def infer(phonemes: str, *args: Any) -> Any:
        calls.append((engine.device, phonemes))
        if engine.device == "cuda":
            if fails(phonemes):
                raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
            engine.device = "cpu"  # the stand-in GPU computes on the CPU, under its own label
            try:
                return real(phonemes, *args)
            finally:
                engine.device = "cuda"
        return real(phonemes, *args)

    monkeypatch.setattr(engine, "_infer", infer)
    return engine, calls


def test_out_of_memory_retries_the_chunk_in_shorter_pieces(cpu_engine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    engine, calls = stand_in_gpu_engine(cpu_engine, monkeypatch, fails=lambda p: len(p) > 30)
    chunks = list(engine.synthesize(TEXT, engine.stock_voice("jf_alpha"), seed=3))
    assert len(chunks) == 2
    for chunk in chunks:
        assert SHORTER_NOTICE in chunk.notices and CPU_NOTICE not in chunk.notices
        assert chunk.seconds > 1.0 and np.sqrt(np.mean(chunk.audio**2)) > 0.01
    assert engine.device == "cuda"  # shorter pieces were enough: still on the GPU
    # Each chunk: one failed full call, then two halves, all on the "GPU".
    assert [device for device, _ in calls] == ["cuda"] * 6
    full, left, right = (p for _, p in calls[:3])
    assert len(left) < len(full) and len(right) < len(full) and left.strip() + right.strip() != ""


def test_out_of_memory_twice_moves_the_engine_to_the_cpu_with_a_notice(
    cpu_engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, calls = stand_in_gpu_engine(cpu_engine, monkeypatch, fails=lambda p: True)
    chunks = list(engine.synthesize(TEXT, engine.stock_voice("jm_kumo"), seed=3))
    assert engine.device == "cpu" and "ran out of memory" in engine.device_reason
    assert next(engine.model.parameters()).device.type == "cpu"
    assert chunks[0].notices == (CPU_NOTICE,)
    assert chunks[1].notices == ()  # the second chunk simply runs on the CPU
    # First chunk: the full call and its first half fail on the GPU, then it runs whole on the CPU.
    assert [device for device, _ in calls] == ["cuda", "cuda", "cpu", "cpu"]
    for chunk in chunks:
        assert chunk.seconds > 1.0 and np.sqrt(np.mean(chunk.audio**2)) > 0.01
    # The fallback speaks the same words as a plain CPU run with the same seed.
    plain = list(cpu_engine.synthesize(TEXT, cpu_engine.stock_voice("jm_kumo"), seed=3))
    assert np.array_equal(chunks[1].audio, plain[1].audio)


def test_out_of_memory_on_the_cpu_is_a_clear_error(cpu_engine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = Engine(cpu_engine.model, "cpu", "CPU chosen in settings", fp16=False)

    def infer(*_: Any) -> Any:
        raise torch.OutOfMemoryError("out of memory")

    monkeypatch.setattr(engine, "_infer", infer)
    with pytest.raises(ModelError, match="ran out of memory.*close other programs"):
        list(engine.synthesize("Hello there, my friend.", engine.stock_voice("jf_alpha")))


def test_say_prints_the_fallback_notice(cpu_engine: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    from voicedesk import cli

    engine, _ = stand_in_gpu_engine(cpu_engine, monkeypatch, fails=lambda p: True)
    monkeypatch.setattr(Engine, "load", classmethod(lambda cls, device="auto", fp16=False: engine))
    out = tmp_path / "line.wav"
    code = cli.main(["say", "--voice", "jf_alpha", "--text", "Hello there.", "-o", str(out), "--device", "cuda"])
    assert code == 0 and out.stat().st_size > 10_000
    assert f"Note: {CPU_NOTICE}" in capsys.readouterr().err


# -- killed mid-clone ----------------------------------------------------------------------------------

KILL_AT = ("step 1/", "judging")  # while fitting, and while the result is being judged (just before saving)


@pytest.fixture(scope="module")
def prompt_wav(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("espeak-ng") is None:
        pytest.skip("needs espeak-ng (tests/tools/install-system-deps.sh)")
    path = tmp_path_factory.mktemp("prompt") / "prompt.wav"
    text = "The old lighthouse keeper watched the boats come home before the evening storm."
    subprocess.run(["espeak-ng", "-v", "mb-us2", "-w", str(path), text],
                   check=True, capture_output=True)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("moment", KILL_AT)
def test_killed_mid_clone_leaves_a_consistent_library(prompt_wav: Path, voicedesk_home: Path, moment: str) -> None:
    from voicedesk.core.library import VoiceLibrary
    from voicedesk.core.library.voicefile import SavedVoice

    library = VoiceLibrary()
    existing = library.save(SavedVoice("Earlier", np.full((1, 256), 0.1, np.float32), np.zeros(24000, np.float32)))
    before = {p.name: p.read_bytes() for p in library.root.iterdir()}

    env = {**os.environ, "VOICEDESK_HOME": str(voicedesk_home), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "voicedesk", "clone", str(prompt_wav), "--name", "Halfway",
                             "--device", "cpu", "--steps", "3", "--seconds", "3600"], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    seen = []
    deadline = time.monotonic() + 600
    for line in proc.stderr:
        seen.append(line)
        if moment in line or time.monotonic() > deadline:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert any(moment in line for line in seen), "".join(seen)
    assert proc.returncode == -signal.SIGKILL

    # The next start finds the library as it was: the earlier voice intact, no half-made one, no damage.
    after = VoiceLibrary()
    scan = after.scan()
    assert scan.problems == []
    assert [voice.name for voice in scan.items] == [existing.name]
    assert not after.exists("Halfway")
    assert {p.name: p.read_bytes() for p in after.root.iterdir()} == before
    listing = subprocess.run([sys.executable, "-m", "voicedesk", "voices"], env=env, text=True,
                             capture_output=True, timeout=120)
    assert listing.returncode == 0 and "Earlier" in listing.stdout and "Halfway" not in listing.stdout
