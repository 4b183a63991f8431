"""Fault injection at the GPU probe's boundary: a driver (NVML) and a torch that behave like broken machines.

Only the two doors the probe talks through are replaced; the probe, the diagnosis mapping and the
device choice run for real on what these return or raise. The errors raised are the ones pynvml and
torch raise on such machines (same classes, same messages).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Any

import pynvml

from voicedesk.core.gpu.report import CudaDevice, CudaInit, TorchBuild

GIB = 2**30


@dataclass
class FakeGpu:
    name: str = "NVIDIA H200"
    capability: tuple[int, int] = (9, 0)
    total: int = 141 * GIB
    used: int = 1 * GIB


@dataclass
class FakeNvml:
    """Looks like the pynvml module. `init_error` is an NVML error code raised by nvmlInit."""

    driver: str = "580.159.04"
    cuda: int = 13000
    gpus: list[FakeGpu] = field(default_factory=lambda: [FakeGpu()])
    init_error: int | None = None

    def nvmlInit(self) -> None:
        if self.init_error is not None:
            raise pynvml.NVMLError(self.init_error)

    def nvmlShutdown(self) -> None:
        pass

    def nvmlSystemGetDriverVersion(self) -> str:
        return self.driver

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        return self.cuda

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> FakeGpu:
        return self.gpus[index]

    def nvmlDeviceGetName(self, handle: FakeGpu) -> bytes:
        return handle.name.encode()  # older pynvml versions return bytes

    def nvmlDeviceGetMemoryInfo(self, handle: FakeGpu) -> Any:
        return SimpleNamespace(total=handle.total, used=handle.used, free=handle.total - handle.used)

    def nvmlDeviceGetCudaComputeCapability(self, handle: FakeGpu) -> tuple[int, int]:
        return handle.capability


H200_BUILD = TorchBuild(
    version="2.11.0+cu130",
    cuda_runtime="13.0",
    arch_list=("sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"),
    cudnn_available=True,
    cudnn_version=91900,
    cudnn_enabled=True,
    cudnn_benchmark=False,
    tf32_matmul=False,
    tf32_cudnn=True,
    cpu_threads=16,
)

CPU_BUILD = replace(
    H200_BUILD, version="2.13.0+cpu", cuda_runtime=None, arch_list=(), cudnn_available=False, cudnn_version=None
)


def _conv_ok(index: int, cudnn: bool) -> tuple[float, float]:
    return 0.4, 2e-6


@dataclass
class FakeTorch:
    """A TorchApi whose build, CUDA start-up, devices and convolution check are set per test."""

    build_info: TorchBuild = H200_BUILD
    init: CudaInit = field(default_factory=lambda: CudaInit(available=True, device_count=1))
    devices: list[CudaDevice] = field(
        default_factory=lambda: [CudaDevice(0, "NVIDIA H200", (9, 0), 143771, 140000, True)]
    )
    conv: Callable[[int, bool], tuple[float, float]] = _conv_ok
    conv_calls: list[bool] = field(default_factory=list)

    def build(self) -> TorchBuild:
        return self.build_info

    def cuda_init(self) -> CudaInit:
        return self.init

    def device(self, index: int) -> CudaDevice:
        return self.devices[index]

    def conv_check(self, index: int, cudnn: bool) -> tuple[float, float]:
        self.conv_calls.append(cudnn)
        return self.conv(index, cudnn)


def raising(exc: BaseException, only_with_cudnn: bool = False) -> Callable[[int, bool], tuple[float, float]]:
    """A convolution check that raises `exc` (always, or only while cuDNN is on)."""

    def conv(index: int, cudnn: bool) -> tuple[float, float]:
        if cudnn or not only_with_cudnn:
            raise exc
        return 0.5, 2e-6

    return conv
