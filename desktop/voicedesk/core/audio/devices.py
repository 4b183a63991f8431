"""Audio devices through sounddevice (PortAudio): listing, defaults, and clear errors when none exist.

sounddevice is imported on first use, so the core imports on machines without PortAudio. PortAudio
reads the device list once when it starts; `rescan()` restarts it to see devices plugged in since.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from voicedesk.core.errors import VoiceDeskError

NO_MICROPHONE = (
    "No microphone found. Plug one in (or enable it in the system sound settings), then choose it in "
    "the input list; or import a recording from a file instead."
)
NO_SPEAKER = (
    "No audio output found. Connect speakers or headphones (or enable them in the system sound "
    "settings); you can still export the audio to a file."
)


class AudioDeviceError(VoiceDeskError):
    """No device, a busy device or one that failed; the message says what to do."""


@dataclass(frozen=True)
class AudioDevice:
    index: int
    name: str
    input_channels: int
    output_channels: int
    default_rate: int
    is_default: bool


def sounddevice() -> Any:
    """The sounddevice module, or a clear error when PortAudio is missing."""
    try:
        import sounddevice as sd
    except (ImportError, OSError) as exc:
        raise AudioDeviceError(
            "The audio system (PortAudio) is not available, so VoiceDesk cannot record or play; install "
            "libportaudio2 (Linux) or reinstall VoiceDesk. Files can still be imported and exported."
        ) from exc
    return sd


def rescan() -> None:
    """Restart PortAudio so devices (or a sound server) that appeared since start-up are seen.

    Only call it while no recorder or player has a stream open: restarting PortAudio ends them.
    """
    sd = sounddevice()
    sd._terminate()
    sd._initialize()


def _devices(kind: str) -> list[AudioDevice]:
    sd = sounddevice()
    try:
        listing: Any = sd.query_devices()
        default_in, default_out = (int(i) for i in sd.default.device)
    except sd.PortAudioError:
        return []
    if default_in < 0 or default_out < 0:  # sounddevice's own default unset: ask PortAudio
        default_in, default_out = _portaudio_defaults(sd)
    default = default_in if kind == "input" else default_out
    found = []
    for info in listing:
        channels = int(info[f"max_{kind}_channels"])
        if channels <= 0:
            continue
        found.append(
            AudioDevice(
                index=int(info["index"]),
                name=str(info["name"]),
                input_channels=int(info["max_input_channels"]),
                output_channels=int(info["max_output_channels"]),
                default_rate=int(info["default_samplerate"]),
                is_default=int(info["index"]) == default,
            )
        )
    return found


def _portaudio_defaults(sd: Any) -> tuple[int, int]:
    try:
        return int(sd._lib.Pa_GetDefaultInputDevice()), int(sd._lib.Pa_GetDefaultOutputDevice())
    except Exception:  # noqa: BLE001 - private API; absence only means "no default"
        return -1, -1


def input_devices() -> list[AudioDevice]:
    """Devices that can record, the system default marked."""
    return _devices("input")


def output_devices() -> list[AudioDevice]:
    """Devices that can play, the system default marked."""
    return _devices("output")


def find_input(device: int | str | None = None) -> AudioDevice:
    """The input `device` (index or name; None: the default, else the first), or `AudioDeviceError`."""
    return _find(input_devices(), device, NO_MICROPHONE, "microphone")


def find_output(device: int | str | None = None) -> AudioDevice:
    """The output `device` (index or name; None: the default, else the first), or `AudioDeviceError`."""
    return _find(output_devices(), device, NO_SPEAKER, "audio output")


def _find(devices: list[AudioDevice], wanted: int | str | None, none_message: str, what: str) -> AudioDevice:
    if not devices:
        raise AudioDeviceError(none_message)
    if wanted is None or wanted == "":
        return next((d for d in devices if d.is_default), devices[0])
    for device in devices:
        if device.index == wanted or device.name == wanted:
            return device
    names = ", ".join(d.name for d in devices)
    raise AudioDeviceError(f"The {what} {wanted!r} is not connected; choose one of: {names}.")


def explain_stream_error(exc: Exception, what: str, device: AudioDevice) -> AudioDeviceError:
    """Turn a PortAudio failure to open or run a stream into advice."""
    text = str(exc)
    if "Device unavailable" in text or "busy" in text.lower() or "-9985" in text:
        return AudioDeviceError(
            f"The {what} '{device.name}' is busy (another program is using it); close that program or "
            "choose another device."
        )
    if "Invalid sample rate" in text or "-9997" in text:
        return AudioDeviceError(f"The {what} '{device.name}' does not support this sample rate; choose another device.")
    return AudioDeviceError(f"The {what} '{device.name}' could not be used ({text}); reconnect it or choose another.")


def close_quietly(stream: Any) -> None:
    """Abort and close a PortAudio stream; a device that vanished may refuse, and nothing is left to save."""
    if stream is None:
        return
    try:
        stream.abort()
        stream.close()
    except Exception:  # noqa: BLE001 - PortAudio errors of a dead device carry no useful action
        pass
