"""Playback of numpy buffers, including chunks queued while synthesis is still running.

The PortAudio callback copies queued samples into the output buffer and nothing else. When the queue
runs dry the stream keeps playing silence for a short tail, then ends itself (ending at once lets
some host APIs drop the last buffered half second: seen with ALSA's PulseAudio plugin); the next
`enqueue` opens a fresh stream. Chunks at another sample rate
than the open stream are resampled when queued, never in the callback.
"""

from __future__ import annotations

import collections
import threading
from typing import Any

import numpy as np
import numpy.typing as npt

from voicedesk.core.audio.devices import (
    AudioDevice,
    close_quietly,
    explain_stream_error,
    find_output,
    sounddevice,
)
from voicedesk.core.audio.resample import resample

FloatArray = npt.NDArray[np.float32]
TAIL_SECONDS = 0.5
BLOCK_FRAMES = 1024


class Player:
    """Play mono float32 audio on `device` (index, name or None for the default)."""

    def __init__(self, device: int | str | None = None) -> None:
        self.device: AudioDevice = find_output(device)
        self.problem: str | None = None
        self.sample_rate = 0
        self._chunks: collections.deque[FloatArray] = collections.deque()
        self._offset = 0  # samples of _chunks[0] already played
        self._played = 0  # samples played since the last play()/stop()
        self._silent = 0  # silence written since the queue ran dry
        self._tail = 0  # how much silence to write before ending the stream
        self._lock = threading.Lock()
        self._stream: Any = None
        self._ended = threading.Event()
        self._ended.set()

    # -- PortAudio's thread: copy queued samples, nothing else ----------------------------------
    def _callback(self, outdata: FloatArray, frames: int, time_info: Any, status: Any) -> None:
        written = 0
        with self._lock:
            while written < frames and self._chunks:
                chunk = self._chunks[0]
                count = min(frames - written, chunk.shape[0] - self._offset)
                outdata[written : written + count, 0] = chunk[self._offset : self._offset + count]
                written += count
                self._offset += count
                if self._offset >= chunk.shape[0]:
                    self._chunks.popleft()
                    self._offset = 0
            self._played += written
            if written < frames:
                outdata[written:, 0] = 0.0
                self._silent += frames - written
                if not self._chunks and self._silent >= self._tail:
                    raise sounddevice().CallbackStop
            else:
                self._silent = 0

    def _finished(self) -> None:
        if self._chunks:  # ended with audio still queued: the device went away
            self.problem = (
                f"The audio output '{self.device.name}' stopped (unplugged or taken by another program); "
                "reconnect it or choose another output, then play again."
            )
            self._chunks.clear()
        self._ended.set()

    # -- control -------------------------------------------------------------------------------
    def play(self, audio: npt.ArrayLike, sample_rate: int) -> None:
        """Play `audio` now, replacing whatever was playing."""
        self.stop()
        self.enqueue(audio, sample_rate)

    def enqueue(self, audio: npt.ArrayLike, sample_rate: int) -> None:
        """Play `audio` after what is already queued; starts playback when idle."""
        samples = np.ascontiguousarray(np.asarray(audio, dtype=np.float32).reshape(-1))
        samples = np.clip(np.nan_to_num(samples), -1.0, 1.0)
        if samples.size == 0:
            return
        with self._lock:
            running = self._stream is not None and not self._ended.is_set()
            if running and sample_rate != self.sample_rate:
                samples = resample(samples, int(sample_rate), self.sample_rate)
            self._chunks.append(samples)
        if not running:
            self._open(int(sample_rate))

    def _open(self, sample_rate: int) -> None:
        sd = sounddevice()
        self._close_stream()
        self.sample_rate = sample_rate
        self.problem = None
        self._silent = 0
        self._tail = int(TAIL_SECONDS * sample_rate)
        self._ended.clear()
        try:
            self._stream = sd.OutputStream(
                device=self.device.index,
                samplerate=sample_rate,
                channels=1,
                dtype="float32",
                callback=self._callback,
                finished_callback=self._finished,
                # A fixed block size matters: PortAudio's variable blocks underran constantly on ALSA's
                # PulseAudio plugin and dropped audio (139 underflows in 1.2 s; none with fixed blocks).
                blocksize=BLOCK_FRAMES,
                latency="high",
            )
            self._stream.start()
        except (sd.PortAudioError, ValueError) as exc:
            self._ended.set()
            with self._lock:
                self._chunks.clear()
            self._close_stream()
            error = explain_stream_error(exc, "audio output", self.device)
            self.problem = str(error)
            raise error from exc

    @property
    def playing(self) -> bool:
        return not self._ended.is_set()

    @property
    def position(self) -> float:
        """Seconds played since the last `play()` or `stop()`."""
        return self._played / self.sample_rate if self.sample_rate else 0.0

    def wait(self, timeout: float | None = None) -> bool:
        """Block until everything queued has played; True if it has."""
        return self._ended.wait(timeout)

    def stop(self) -> None:
        """Stop at once and forget what was queued."""
        with self._lock:  # cleared first, so the stream's end is not mistaken for a lost device
            self._chunks.clear()
            self._offset = 0
            self._played = 0
        self._close_stream()
        self._ended.set()

    def close(self) -> None:
        self.stop()

    def _close_stream(self) -> None:
        stream, self._stream = self._stream, None
        close_quietly(stream)
