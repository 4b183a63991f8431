"""Microphone recording: the PortAudio callback only copies into a queue; a thread does the rest.

Threads: PortAudio's callback copies each block into `SimpleQueue` (no other allocation, no logging,
no locks); a drain thread accumulates the blocks, feeds a size-1 level queue for the meter, stops
after `max_seconds`, hands each block to `on_block` (which writes it to disk as it comes), and notices a device
that stops delivering (unplugged) — keeping everything recorded so far and describing the problem in `problem`.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from voicedesk.core.audio.devices import (
    AudioDevice,
    AudioDeviceError,
    close_quietly,
    explain_stream_error,
    find_input,
    sounddevice,
)

FloatArray = npt.NDArray[np.float32]
STALL_SECONDS = 1.5  # no audio for this long while running: the device has gone
STARTUP_SECONDS = 6.0  # a sound server may take seconds to deliver the first block (seen: 1.8 s)
BLOCK_FRAMES = 1024


class Recorder:
    """Record mono float32 from `device` (index, name or None for the default).

    `start()`, then `stop()` returns the samples at `sample_rate`. `level()` is the latest block's
    peak (0–1) for a meter; `overflows` counts blocks PortAudio dropped because we fell behind.
    """

    def __init__(
        self,
        device: int | str | None = None,
        *,
        sample_rate: int | None = None,
        max_seconds: float | None = None,
        on_finished: Callable[[], None] | None = None,
    ) -> None:
        self.device: AudioDevice = find_input(device)
        self.sample_rate = int(sample_rate or self.device.default_rate or 48000)
        self.max_frames = int(max_seconds * self.sample_rate) if max_seconds else None
        self.channels = 1
        self.overflows = 0
        self.problem: str | None = None
        self._on_finished = on_finished
        # Set before start() to keep each mono block as it comes (on the drain thread; kept.Spool.append).
        self.on_block: Callable[[FloatArray], None] | None = None
        self.block_problem: str | None = None  # why on_block failed (it is not called again after)
        self._blocks: queue.SimpleQueue[FloatArray] = queue.SimpleQueue()
        self._levels: queue.Queue[float] = queue.Queue(maxsize=1)
        self._last_level = 0.0
        self._recorded: list[FloatArray] = []
        self._frames = 0
        self._stop = threading.Event()
        self._done = threading.Event()
        self._stream: Any = None
        self._thread: threading.Thread | None = None

    # -- PortAudio's thread: copy and enqueue, nothing else ---------------------------------------
    def _callback(self, indata: FloatArray, frames: int, time_info: Any, status: Any) -> None:
        if status.input_overflow:
            self.overflows += 1
        self._blocks.put(indata.copy())

    # -- control -------------------------------------------------------------------------------
    def start(self) -> None:
        sd = sounddevice()
        try:
            self._stream = sd.InputStream(
                device=self.device.index,
                samplerate=self.sample_rate,
                channels=self.channels,
                dtype="float32",
                blocksize=BLOCK_FRAMES,
                callback=self._callback,
            )
            self._stream.start()
        except (sd.PortAudioError, ValueError) as exc:
            self._close_stream()
            raise explain_stream_error(exc, "microphone", self.device) from exc
        self._thread = threading.Thread(target=self._drain, name="voicedesk-recorder", daemon=True)
        self._thread.start()

    @property
    def recording(self) -> bool:
        return self._thread is not None and not self._done.is_set()

    @property
    def seconds(self) -> float:
        return self._frames / self.sample_rate

    def level(self) -> float:
        """Peak of the latest block (0–1); the meter polls this."""
        with contextlib.suppress(queue.Empty):
            self._last_level = self._levels.get_nowait()
        return self._last_level

    def wait(self, timeout: float | None = None) -> bool:
        """Block until recording ends by itself (length reached or device lost); True if it did."""
        return self._done.wait(timeout)

    def stop(self) -> FloatArray:
        """Stop (if still running) and return everything recorded, as mono float32."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        else:
            self._close_stream()
        audio = np.concatenate(self._recorded) if self._recorded else np.zeros(0, np.float32)
        return audio[: self.max_frames] if self.max_frames is not None else audio

    # -- the drain thread ----------------------------------------------------------------------
    def _drain(self) -> None:
        last_block = time.monotonic()
        patience = STARTUP_SECONDS
        try:
            while not self._stop.is_set() and not self._full():
                try:
                    block = self._blocks.get(timeout=0.1)
                except queue.Empty:
                    if time.monotonic() - last_block > patience or not self._stream_active():
                        self.problem = self._silence_problem()
                        break
                    continue
                last_block, patience = time.monotonic(), STALL_SECONDS
                self._take(block)
        finally:
            self._close_stream()
            while not self._full():  # blocks that arrived while the stream was closing
                try:
                    self._take(self._blocks.get_nowait())
                except queue.Empty:
                    break
            self._done.set()
            if self._on_finished is not None:
                self._on_finished()

    def _silence_problem(self) -> str:
        if self._frames == 0:
            return (
                f"The microphone '{self.device.name}' sends no audio; check it is connected and not used by "
                "another program, or choose another input."
            )
        return (
            f"The microphone '{self.device.name}' stopped sending audio (unplugged or taken by another "
            f"program); the {self.seconds:.1f} s recorded before that were kept."
        )

    def _take(self, block: FloatArray) -> None:
        mono = block[:, 0] if block.ndim == 2 else block
        self._recorded.append(mono)
        self._frames += mono.shape[0]
        if self.on_block is not None:
            try:
                self.on_block(mono)
            except OSError as exc:  # a full disk must not end the recording: it goes on in memory
                self.block_problem, self.on_block = str(exc), None
        peak = float(np.max(np.abs(mono))) if mono.size else 0.0
        with contextlib.suppress(queue.Empty):
            self._levels.get_nowait()
        with contextlib.suppress(queue.Full):
            self._levels.put_nowait(min(peak, 1.0))

    def _full(self) -> bool:
        return self.max_frames is not None and self._frames >= self.max_frames

    def _stream_active(self) -> bool:
        try:
            return bool(self._stream is not None and self._stream.active)
        except Exception:  # noqa: BLE001 - a vanished device can make PortAudio refuse even this query
            return False

    def _close_stream(self) -> None:
        stream, self._stream = self._stream, None
        close_quietly(stream)


__all__ = ["AudioDeviceError", "Recorder"]
