"""Choose where the model runs: CUDA only when the real GPU check passed, otherwise the CPU, with the reason.

The probe runs once per process (it starts CUDA and runs a convolution: not free) and is cached;
`refresh=True` probes again, e.g. after the user closed a program that held the GPU's memory.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Literal

from voicedesk.core.errors import InputError, VoiceDeskError
from voicedesk.core.gpu.diagnosis import device_short_reason
from voicedesk.core.gpu.report import ProbeReport, State

Device = Literal["cuda", "cpu"]
PREFERENCES = ("auto", "cuda", "cpu")

_lock = threading.Lock()
_cached: ProbeReport | None = None


@dataclass(frozen=True)
class DeviceChoice:
    device: Device
    reason: str
    # None only for an explicit CPU choice made before anything probed the GPU.
    report: ProbeReport | None

    def to_dict(self) -> dict[str, Any]:
        return {"device": self.device, "reason": self.reason}


def cached_probe(refresh: bool = False) -> ProbeReport:
    """The probe's report for this process, probing on first use (or again when `refresh`)."""
    global _cached
    with _lock:
        if _cached is None or refresh:
            from voicedesk.core.gpu.probe import probe

            _cached = probe()
        return _cached


def peek_cached() -> ProbeReport | None:
    """The report if this process already probed, without probing (safe on a GUI thread)."""
    return _cached


def choose_device(preference: str = "auto", *, report: ProbeReport | None = None, refresh: bool = False) -> DeviceChoice:
    """'auto': CUDA if the GPU check passed, else CPU; 'cuda': CUDA or a VoiceDeskError saying why not; 'cpu'."""
    wanted = preference.strip().lower()
    if wanted not in PREFERENCES:
        raise InputError(f"Unknown device {preference!r}: use one of {', '.join(PREFERENCES)}.")
    if wanted == "cpu":
        # The CPU needs no probe (starting CUDA costs time and memory); attach one if it already ran.
        return DeviceChoice("cpu", "CPU chosen in settings", report or _cached)
    report = report or cached_probe(refresh)
    if report.cuda_usable:
        return DeviceChoice("cuda", "GPU check passed", report)
    reason = device_short_reason(report.diagnoses) or "no usable CUDA device"
    if wanted == "cuda":
        raise VoiceDeskError(_why_not_cuda(report, reason))
    return DeviceChoice("cpu", reason, report)


def _why_not_cuda(report: ProbeReport, reason: str) -> str:
    problems = [d for d in report.diagnoses if d.state is not State.OK and d.fix]
    fix = f" What to do: {problems[0].fix}" if problems else ""
    return (f"The GPU cannot be used: {reason}.{fix} Or choose the CPU (device 'cpu' or 'auto'); "
            "`voicedesk doctor` shows the full report.")


def badge_text(choice: DeviceChoice) -> str:
    """A compact label for the window's status bar, e.g. 'GPU · NVIDIA H200' or 'CPU · no NVIDIA driver found'."""
    if choice.device == "cuda":
        name = choice.report.devices[0].name if choice.report and choice.report.devices else "CUDA"
        return f"GPU · {name}"
    return f"CPU · {choice.reason}"
