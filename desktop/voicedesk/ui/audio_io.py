"""The window's one microphone recorder and one player, over `voicedesk.core.audio`.

The core's recorder and player run PortAudio callbacks that only copy into queues; this object just
owns them for the window's lifetime, picks the devices from the settings and turns their problems into
sentences. sounddevice is imported on first use, not when the window is built.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
import numpy.typing as npt

from voicedesk.ui import settings
from voicedesk.ui.settings import Settings

log = logging.getLogger(__name__)


class AudioIO:
    def __init__(self, store: Settings) -> None:
        self.store = store
        self._recorder: Any = None
        self._spool: Any = None  # the recording on disk as it is made (None when it could not be opened)
        self._spool_problem = ""
        self._player: Any = None

    @staticmethod
    def clock() -> float:
        return time.monotonic()

    # --- devices ------------------------------------------------------------------------------------
    def prepare(self) -> None:
        """Start PortAudio and open the player now (it scans the sound system, which takes a moment),
        rather than when the first sentence arrives and playback must start at once."""
        from voicedesk.core.errors import VoiceDeskError

        try:
            self._output()
        except VoiceDeskError as exc:  # no speaker: said again when something is played
            log.info("no audio output: %s", exc)

    def input_devices(self) -> list[str]:
        from voicedesk.core.audio import devices

        return [d.name for d in devices.input_devices()]

    def output_devices(self) -> list[str]:
        from voicedesk.core.audio import devices

        return [d.name for d in devices.output_devices()]

    # --- recording ----------------------------------------------------------------------------------
    def start_recording(self, device: str, seconds: float, line: str = "") -> None:
        """Start recording from `device` ("" = the default); it stops by itself after `seconds`. Every block goes
        to disk as it comes (with `line`, the words shown to read), so that not even a crash loses it."""
        from voicedesk.core.audio.kept import Spool
        from voicedesk.core.audio.recorder import Recorder

        self.stop_recording()
        recorder = Recorder(device or None, max_seconds=seconds)
        try:
            self._spool, self._spool_problem = Spool(recorder.sample_rate, line), ""
            recorder.on_block = self._spool.append
        except OSError as exc:  # the recording still happens, in memory
            log.warning("cannot keep the recording on disk: %s", exc)
            self._spool, self._spool_problem = None, str(exc)
        try:
            recorder.start()
        except BaseException:
            self._end_spool(None)
            raise
        self._recorder = recorder

    @property
    def recording(self) -> bool:
        """A recording was started and not yet collected with `stop_recording()`."""
        return self._recorder is not None

    @property
    def recording_ended(self) -> bool:
        """The recorder stopped by itself (length reached, or the device went away)."""
        return self._recorder is not None and not self._recorder.recording

    def recording_level(self) -> float:
        return float(self._recorder.level()) if self._recorder is not None else 0.0

    def stop_recording(self) -> tuple[npt.NDArray[np.float32], int, str]:
        """Stop and return what was recorded (kept even when the device failed), its rate, and a problem
        (the device's, or that the recording could not be kept on disk)."""
        recorder, self._recorder = self._recorder, None
        if recorder is None:
            return np.zeros(0, np.float32), 48000, ""
        samples = recorder.stop()
        problem = self._end_spool(samples) or recorder.block_problem or ""
        if problem:
            problem = (f"This recording could not be kept on disk ({problem}); "
                       "clone or export it before closing.")
        return samples, int(recorder.sample_rate), " ".join(filter(None, [str(recorder.problem or ""), problem]))

    def _end_spool(self, samples: npt.NDArray[np.float32] | None) -> str:
        """Finish the spool into a kept WAV (or discard it when nothing was recorded); a problem, or ""."""
        from voicedesk.core.errors import VoiceDeskError

        spool, self._spool = self._spool, None
        if spool is None:
            return self._spool_problem
        try:
            if samples is None or samples.size == 0:
                spool.discard()
            else:
                spool.finish(samples)
        except (OSError, VoiceDeskError) as exc:  # the spool stays on disk: the next start recovers it
            log.warning("could not keep the recording: %s", exc)
            return str(exc)
        return ""

    # --- playback -----------------------------------------------------------------------------------
    def use_output(self, device: str) -> None:
        """Play on `device` ("" = the system default) from the next sound on."""
        self.store.set(settings.OUTPUT_DEVICE, device)
        if self._player is not None:
            self._player.close()
            self._player = None

    def _output(self) -> Any:
        if self._player is None:
            from voicedesk.core.audio.player import Player

            self._player = Player(self.store.get(settings.OUTPUT_DEVICE) or None)
        return self._player

    def play(self, audio: npt.ArrayLike, sample_rate: int) -> None:
        """Play `audio` now, replacing whatever is playing."""
        self._output().play(np.asarray(audio, np.float32), sample_rate)

    def queue(self, audio: npt.ArrayLike, sample_rate: int) -> None:
        """Play `audio` after what is already queued (streaming synthesis)."""
        self._output().enqueue(np.asarray(audio, np.float32), sample_rate)

    def stop(self) -> None:
        if self._player is not None:
            self._player.stop()

    @property
    def playing(self) -> bool:
        return self._player is not None and bool(self._player.playing)

    def close(self) -> None:
        if self._recorder is not None:
            self.stop_recording()
        if self._player is not None:
            self._player.close()
            self._player = None
