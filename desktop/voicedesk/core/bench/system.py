"""What the bench records about the machine: versions, processor, load and memory peaks."""

from __future__ import annotations

import datetime
import os
import platform
import resource
import sys
from pathlib import Path
from typing import Any

import voicedesk


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # not on Windows
        return None


def peak_host_mb() -> float:
    """This process's peak resident memory so far (resource.getrusage: KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)


def versions(device: str) -> dict[str, Any]:
    import numpy
    import torch

    found: dict[str, Any] = {
        "voicedesk": voicedesk.__version__,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numpy": numpy.__version__,
        "cuda": torch.version.cuda,
        "cudnn": None,
        "driver": None,
        "onnxruntime": None,
    }
    if device == "cuda":
        found["cudnn"] = torch.backends.cudnn.version()  # type: ignore[no-untyped-call]
        from voicedesk.core.gpu.boundary import load_nvml, read_driver

        found["driver"] = read_driver(load_nvml()).driver_version
    try:
        import onnxruntime

        found["onnxruntime"] = onnxruntime.__version__
    except ImportError:
        pass
    return found


def machine(device: str) -> dict[str, Any]:
    import torch

    info: dict[str, Any] = {
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "system": f"{platform.system()} {platform.release()}",
    }
    if device == "cuda":
        info["gpu"] = torch.cuda.get_device_name()
    return info


def utc_now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
