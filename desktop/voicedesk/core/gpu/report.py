"""What the GPU probe found, as plain dataclasses: facts, the one real check, and diagnoses.

Everything here is JSON-able through `to_dict()` and free of torch and Qt, so the command line,
the window's status panel and bug reports all read the same objects.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Any


class State(enum.Enum):
    """How a row or diagnosis reads: fine, worth knowing (slower, or a fix is advised), or broken."""

    OK = "ok"
    WARN = "warn"
    FAIL = "fail"

    @property
    def rank(self) -> int:
        return {"ok": 0, "warn": 1, "fail": 2}[self.value]


def worst(states: list[State]) -> State:
    return max(states, key=lambda s: s.rank, default=State.OK)


def _jsonable(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


class JsonMixin:
    def to_dict(self) -> dict[str, Any]:
        result = _jsonable(self)
        assert isinstance(result, dict)
        return result


@dataclass(frozen=True)
class NvmlGpu(JsonMixin):
    """One GPU as the driver (NVML) sees it."""

    index: int
    name: str
    memory_total_mib: int
    memory_used_mib: int
    capability: tuple[int, int] | None


@dataclass(frozen=True)
class DriverInfo(JsonMixin):
    """The NVIDIA driver, read through NVML. `found` is False when NVML or the driver is missing."""

    found: bool
    driver_version: str | None = None
    # The newest CUDA version this driver supports, as NVML encodes it (13000 = 13.0).
    cuda_version: int | None = None
    gpus: tuple[NvmlGpu, ...] = ()
    # Why NVML could not be read: "library-not-found", "driver-not-loaded", "version-mismatch",
    # "no-permission", "module-missing" or "other"; None when it was read.
    error_kind: str | None = None
    error_text: str | None = None


@dataclass(frozen=True)
class TorchBuild(JsonMixin):
    """What the installed torch was built with and how it is configured; reading it needs no GPU."""

    version: str
    cuda_runtime: str | None  # torch.version.cuda; None for a CPU-only build
    arch_list: tuple[str, ...]  # torch.cuda.get_arch_list(), e.g. ("sm_80", "sm_90")
    cudnn_available: bool
    cudnn_version: int | None  # e.g. 91900 for 9.19.0
    cudnn_enabled: bool
    cudnn_benchmark: bool
    tf32_matmul: bool
    tf32_cudnn: bool
    cpu_threads: int
    # cuDNN present but unusable as loaded (e.g. a different cuDNN found at run time than built with).
    cudnn_error: str | None = None
    # torch itself could not be imported or inspected; every other field is then a placeholder.
    error: str | None = None

    @classmethod
    def unavailable(cls, error: str) -> TorchBuild:
        return cls("not importable", None, (), False, None, False, False, False, False, 0, error=error)


@dataclass(frozen=True)
class CudaInit(JsonMixin):
    """The outcome of torch.cuda initialising: whether it sees devices, and what it warned."""

    available: bool
    device_count: int
    warning: str | None = None
    visible_devices: str | None = None  # CUDA_VISIBLE_DEVICES, when set


@dataclass(frozen=True)
class CudaDevice(JsonMixin):
    """One device as torch sees it."""

    index: int
    name: str
    capability: tuple[int, int]
    memory_total_mib: int
    memory_free_mib: int | None
    bf16_supported: bool

    @property
    def arch(self) -> str:
        return f"sm_{self.capability[0]}{self.capability[1]}"


@dataclass(frozen=True)
class GpuCheck(JsonMixin):
    """The real check: a small convolution on the GPU with cuDNN on, compared with the CPU."""

    ran: bool
    passed: bool = False
    device_index: int | None = None
    milliseconds: float | None = None
    max_abs_error: float | None = None
    error_type: str | None = None
    error_text: str | None = None
    # Only tried when the cuDNN run failed: whether the same convolution works with cuDNN off.
    passed_without_cudnn: bool | None = None


@dataclass(frozen=True)
class Diagnosis(JsonMixin):
    """One finding in plain words. `topic` names the status row it belongs to."""

    code: str
    topic: str
    state: State
    message: str
    fix: str = ""
    # A short clause for "runs on the CPU (…)" when this finding keeps the GPU from being used.
    reason: str = ""


@dataclass(frozen=True)
class StatusRow(JsonMixin):
    """One line of the status table: a label, what was found, and how it reads."""

    topic: str
    label: str
    value: str
    state: State


# Row order and labels, shared by the text report and the window's panel.
TOPICS: tuple[tuple[str, str], ...] = (
    ("driver", "NVIDIA driver"),
    ("gpu", "GPU"),
    ("torch", "PyTorch"),
    ("cuda", "CUDA"),
    ("cudnn", "cuDNN"),
    ("check", "GPU check"),
    ("precision", "Precision"),
    ("device", "Device"),
)


@dataclass(frozen=True)
class ProbeReport(JsonMixin):
    """Everything the probe learned, and the device it recommends."""

    created_utc: str
    platform: str
    python: str
    driver: DriverInfo
    torch: TorchBuild
    cuda: CudaInit
    devices: tuple[CudaDevice, ...]
    check: GpuCheck
    diagnoses: tuple[Diagnosis, ...]
    rows: tuple[StatusRow, ...] = field(default=())

    @property
    def cuda_usable(self) -> bool:
        """True only when the real check ran on the GPU and gave the right numbers."""
        return self.check.ran and self.check.passed

    @property
    def state(self) -> State:
        return worst([d.state for d in self.diagnoses])

    def diagnoses_for(self, topic: str) -> list[Diagnosis]:
        return [d for d in self.diagnoses if d.topic == topic]

    def device_reason(self) -> str:
        """One sentence: why the recommended device is the one it is."""
        found = self.diagnoses_for("device")
        return found[0].message if found else ""

    def to_dict(self) -> dict[str, Any]:
        result = super().to_dict()
        result["cuda_usable"] = self.cuda_usable
        result["state"] = self.state.value
        return result
