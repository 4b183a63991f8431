"""GPU status: probe the driver, CUDA and cuDNN, explain failures, choose the device, time the model.

Nothing here imports torch or Qt at import time; `choose_device("auto")` is what the engine calls.
"""

from voicedesk.core.gpu.device import DeviceChoice, badge_text, cached_probe, choose_device
from voicedesk.core.gpu.report import Diagnosis, ProbeReport, State, StatusRow

__all__ = [
    "DeviceChoice",
    "Diagnosis",
    "ProbeReport",
    "State",
    "StatusRow",
    "badge_text",
    "cached_probe",
    "choose_device",
]
