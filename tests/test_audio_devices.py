"""Recording and playback through PortAudio against a real PulseAudio server (started by the tests).

Microphone: a known signal is played into the null sink `micfeed`, whose monitor backs the default
source `vmic`; the Recorder must hear it. Speaker: the Player plays into the default sink `speaker`,
whose monitor parec captures; the capture must match what was played.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from audio_server import PulseServer
from tools.make_bad_corpus import speech
from voicedesk.core.audio import devices
from voicedesk.core.audio.devices import AudioDeviceError
from voicedesk.core.audio.intake import load_prompt
from voicedesk.core.audio.player import Player
from voicedesk.core.audio.recorder import Recorder
from voicedesk.core.audio.resample import resample

pytestmark = pytest.mark.audio


def sine(freq: float, seconds: float, rate: int = 48000, amplitude: float = 0.5) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (amplitude * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def peak_hz(audio: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(audio * np.hanning(audio.size)))
    return float(np.argmax(spectrum) * rate / audio.size)


def test_devices_are_listed_with_one_default(pulse_server: PulseServer) -> None:
    inputs, outputs = devices.input_devices(), devices.output_devices()
    assert inputs and outputs
    assert sum(d.is_default for d in inputs) == 1 and sum(d.is_default for d in outputs) == 1
    assert devices.find_input().is_default and devices.find_output(outputs[0].name) == outputs[0]
    with pytest.raises(AudioDeviceError, match="not connected; choose one of"):
        devices.find_input("USB headset that is not there")


def wait_until(condition: Callable[[], bool], timeout: float = 15.0) -> None:
    """A fresh PulseAudio stream can take ~2 s to deliver its first block: wait, don't sleep."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the audio server"
        time.sleep(0.02)


def live_recorder(**kwargs: Any) -> Recorder:
    recorder = Recorder(sample_rate=48000, **kwargs)
    recorder.start()
    wait_until(lambda: recorder.seconds > 0)
    return recorder


def test_recorder_hears_the_tone_fed_into_the_virtual_microphone(pulse_server: PulseServer) -> None:
    recorder = live_recorder()
    feed = pulse_server.play_into("micfeed", sine(1000, 3.0))
    wait_until(lambda: recorder.level() > 0.3)  # the meter sees the 0.5-peak tone
    heard_at = recorder.seconds
    wait_until(lambda: recorder.seconds > heard_at + 1.0)
    audio = recorder.stop()
    feed.wait(timeout=15)
    assert recorder.problem is None and recorder.overflows == 0
    assert audio.dtype == np.float32 and audio.ndim == 1
    assert abs(peak_hz(audio[-48000:], 48000) - 1000) < 3


def test_recording_ends_by_itself_after_the_chosen_length(pulse_server: PulseServer) -> None:
    finished: list[bool] = []
    recorder = Recorder(sample_rate=48000, max_seconds=0.5, on_finished=lambda: finished.append(True))
    recorder.start()
    assert recorder.wait(timeout=15)
    assert finished == [True] and not recorder.recording
    assert recorder.stop().size == 24000


def test_recorded_speech_passes_intake(pulse_server: PulseServer) -> None:
    recorder = live_recorder()
    feed = pulse_server.play_into("micfeed", np.concatenate([speech(48000), np.zeros(24000, np.float32)]))
    wait_until(lambda: recorder.level() > 0.05)
    feed.wait(timeout=20)
    time.sleep(0.3)
    prompt = load_prompt((recorder.stop(), recorder.sample_rate))
    assert prompt.speech_seconds > 2.0 and abs(prompt.duration - 3.2) < 0.6


def test_stop_on_demand_returns_what_was_recorded(pulse_server: PulseServer) -> None:
    recorder = live_recorder()
    time.sleep(0.5)
    audio = recorder.stop()
    assert not recorder.recording and 0.3 < audio.size / recorder.sample_rate < 3.0
    assert recorder.problem is None


def test_player_output_reaches_the_speaker(pulse_server: PulseServer) -> None:
    rng = np.random.default_rng(3)
    # Noise bursts correlate sharply; two chunks at the engine's 24 kHz, queued like streamed synthesis.
    first = (rng.standard_normal(24000) * 0.2).astype(np.float32)
    second = sine(660, 0.5, rate=24000)
    capture = pulse_server.capture("speaker.monitor")
    wait_until(lambda: capture.seconds > 0)
    player = Player()
    player.enqueue(first, 24000)
    player.enqueue(second, 24000)
    assert player.playing
    assert player.wait(timeout=15)
    assert player.position == pytest.approx(1.5, abs=0.01)
    end = capture.seconds
    wait_until(lambda: capture.seconds > end + 0.5)
    captured = capture.stop()
    reference = resample(first, 24000, 48000)
    corr = np.correlate(captured, reference, mode="valid")
    at = int(np.argmax(np.abs(corr)))
    window = captured[at : at + reference.size]
    normalised = corr[at] / (np.linalg.norm(window) * np.linalg.norm(reference))
    assert normalised > 0.9
    tone_part = captured[at + reference.size + 2400 : at + reference.size + 21600]
    assert abs(peak_hz(tone_part, 48000) - 660) < 5


def test_player_stop_is_immediate(pulse_server: PulseServer) -> None:
    player = Player()
    player.play(sine(440, 5.0, rate=24000), 24000)
    time.sleep(0.4)
    player.stop()
    assert not player.playing and player.position == 0.0
    player.play(sine(440, 0.2, rate=24000), 24000)
    assert player.wait(timeout=10)


def test_microphone_vanishing_mid_recording_keeps_what_was_recorded(pulse_server: PulseServer) -> None:
    """A second server is killed while we record from it: the recording ends with a clear problem
    and the audio captured before the loss is kept."""
    doomed = PulseServer()
    doomed.start()
    saved = {key: os.environ[key] for key in doomed.env()}
    os.environ.update(doomed.env())  # read when the stream opens
    try:
        recorder = live_recorder()
        feed = doomed.play_into("micfeed", sine(500, 20.0))
        wait_until(lambda: recorder.level() > 0.3)
        heard_at = recorder.seconds
        wait_until(lambda: recorder.seconds > heard_at + 0.5)
        doomed.stop()  # the device disappears
        assert recorder.wait(timeout=10), "the recorder did not notice the device was gone"
        audio = recorder.stop()
        feed.kill()
    finally:
        os.environ.update(saved)
        doomed.stop()
    assert recorder.problem is not None and "stopped sending audio" in recorder.problem and "kept" in recorder.problem
    assert audio.size >= 24000
    assert abs(peak_hz(audio[-12000:], 48000) - 500) < 5


def test_no_sound_server_means_a_clear_no_microphone_message() -> None:
    code = textwrap.dedent(
        """
        from voicedesk.core.audio.devices import AudioDeviceError
        from voicedesk.core.audio.recorder import Recorder
        from voicedesk.core.audio.player import Player
        for make in (Recorder, Player):
            try:
                make()
            except AudioDeviceError as exc:
                print(type(make).__name__, exc)
            else:
                print("no error")
        """
    )
    env = {**os.environ, "PULSE_SERVER": "unix:/nonexistent/native"}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 2 and "No microphone found" in lines[0] and "No audio output found" in lines[1]
    assert "Traceback" not in result.stderr


def test_busy_devices_give_advice(pulse_server: PulseServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """PulseAudio never reports a busy device, so the PortAudio error is injected where streams open."""
    sd = devices.sounddevice()

    def busy(*args: object, **kwargs: object) -> None:
        raise sd.PortAudioError("Error opening InputStream: Device unavailable [PaErrorCode -9985]")

    monkeypatch.setattr(sd, "InputStream", busy)
    monkeypatch.setattr(sd, "OutputStream", busy)
    with pytest.raises(AudioDeviceError, match="is busy .*close that program or choose another device"):
        Recorder().start()
    player = Player()
    with pytest.raises(AudioDeviceError, match="is busy"):
        player.play(sine(440, 0.1), 48000)
    assert not player.playing and player.problem is not None


def test_output_vanishing_mid_playback_is_reported(pulse_server: PulseServer) -> None:
    doomed = PulseServer()
    doomed.start()
    saved = {key: os.environ[key] for key in doomed.env()}
    os.environ.update(doomed.env())
    try:
        player = Player()
        player.play(sine(440, 20.0, rate=24000), 24000)
        wait_until(lambda: player.position > 0.5)
        doomed.stop()
        assert player.wait(timeout=10), "the player did not notice the output was gone"
    finally:
        os.environ.update(saved)
        doomed.stop()
    assert player.problem is not None and "stopped" in player.problem and not player.playing
