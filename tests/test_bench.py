"""`voicedesk bench --json --quick` on the CPU: every key present with a sane value (no timing thresholds).

The run is a subprocess in which soundfile, sounddevice and PySide6 cannot be imported, as on the GPU
machine the bench must also run on; the prompt is a WAV read with the standard library.

Runtime: one quick bench (engine load, a short line and a two-sentence paragraph spoken a few times,
ONNX Runtime on the same phonemes, a one-step clone): about 1-2 minutes on two free cores.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import wave
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from voicedesk.core.bench.prompt import read_wav
from voicedesk.core.bench.run import NOT_ON_CPU, format_table
from voicedesk.core.selftest import SAMPLE_WORDS  # what sample-prompt.flac says

pytestmark = pytest.mark.slow

BLOCKED = ("soundfile", "sounddevice", "PySide6")
RUN_WITHOUT = f"""
import sys
for name in {BLOCKED!r}:
    sys.modules[name] = None  # import fails, find_spec says "not installed"
from voicedesk.cli import main
sys.exit(main(sys.argv[1:]))
"""


def write_wav(path: Path, audio: np.ndarray, rate: int) -> None:
    with wave.open(str(path), "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(rate)
        handle.writeframes((np.clip(audio, -1, 1) * 32767).astype("<i2").tobytes())


@pytest.fixture(scope="module")
def prompt_wav(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import soundfile as sf

    from voicedesk.core import paths

    audio, rate = sf.read(paths.resource_path("sample-prompt.flac"), dtype="float32")
    path = tmp_path_factory.mktemp("prompt") / "prompt.wav"
    write_wav(path, audio, rate)
    return path


@pytest.fixture(scope="module")
def quick_result(prompt_wav: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    env = {**os.environ, "VOICEDESK_HOME": str(tmp_path_factory.mktemp("bench-home"))}
    args = ["bench", "--json", "--quick", "--device", "cpu", "--repeats", "1", "--prompt", str(prompt_wav),
            "--transcript", SAMPLE_WORDS]
    done = subprocess.run([sys.executable, "-c", RUN_WITHOUT, *args], env=env, capture_output=True, text=True,
                          timeout=1800)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    result: dict[str, Any] = json.loads(done.stdout)  # one JSON object, nothing else on stdout
    return result


def positive(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value) and value > 0


def test_quick_bench_reports_every_measure(quick_result: dict[str, Any]) -> None:
    r = quick_result
    assert r["device"] == "cpu" and r["quick"] is True
    for key in ("synthesis_rtf", "synthesis_rtf_short", "first_audio_s", "clone_s", "load_s", "import_s",
                "paragraph_audio_s", "short_audio_s", "peak_host_mb", "ours_vs_onnxruntime"):
        assert positive(r[key]), (key, r[key])
    assert r["skipped"] == {"load_cold_s": "not measured with --quick"} and r["load_cold_s"] is None
    assert r["peak_gpu_mb"] is None and r["cudnn_speedup"] == r["fp16_speedup"] == NOT_ON_CPU
    # The paragraph is two sentences of speech. (That the first sentence streams out before the second is
    # spoken is tested without a clock in test_engine_synthesis; one timed run of each inverts under load.)
    assert 2.0 < r["paragraph_audio_s"] < 15.0 and positive(r["paragraph_s"])
    assert r["clone"]["prompt"].endswith("prompt.wav") and r["clone"]["prompt_s"] == pytest.approx(3.0, abs=0.01)
    assert 0 <= r["clone"]["steps"] <= 1
    assert r["clone"]["words"] == SAMPLE_WORDS  # typed words are used as given, as the app does
    ort = r["onnxruntime"]["rtf_median"]
    assert positive(ort["onnxruntime"]) and positive(ort["pytorch"])
    assert r["ours_vs_onnxruntime"] == pytest.approx(ort["pytorch"] / ort["onnxruntime"])
    versions = r["versions"]
    assert versions["torch"] and versions["python"] and versions["voicedesk"] and versions["onnxruntime"]
    assert r["machine"]["cpu_count"] >= 1 and r["date"].endswith("Z")


def test_table_shows_the_same_numbers(quick_result: dict[str, Any]) -> None:
    table = format_table(quick_result)
    assert f"{quick_result['synthesis_rtf']:.3f}" in table
    assert f"{quick_result['first_audio_s']:.3f} s" in table
    assert "n/a on CPU" in table and "skipped load_cold_s: not measured with --quick" in table


def test_wav_prompts_are_read_without_soundfile(tmp_path: Path) -> None:
    tone = (0.5 * np.sin(np.arange(8000) * 0.1)).astype(np.float32)
    path = tmp_path / "tone.wav"
    write_wav(path, tone, 8000)
    audio, rate = read_wav(path)
    assert rate == 8000 and np.max(np.abs(audio - tone)) < 1e-4


def test_bad_repeats_is_a_clear_error() -> None:
    done = subprocess.run([sys.executable, "-m", "voicedesk", "bench", "--repeats", "0"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "--repeats must be between 1 and 100" in done.stderr
    assert "Traceback" not in done.stderr
