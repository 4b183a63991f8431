"""The probe's two doors to the outside world: NVML (the driver) and torch (CUDA, cuDNN).

Everything that touches the driver or the GPU goes through `NvmlApi` or `TorchApi`, so tests can
hand the probe a driver that is missing or a cuDNN that fails to start, while the code that turns
those failures into advice (diagnosis.py) stays the real one. `pynvml` itself satisfies `NvmlApi`;
`LiveTorch` is the real `TorchApi`.
"""

from __future__ import annotations

import contextlib
import os
import time
import warnings
from typing import Any, Protocol

from voicedesk.core.gpu.report import CudaDevice, CudaInit, DriverInfo, NvmlGpu, TorchBuild


class NvmlApi(Protocol):
    """The part of pynvml (nvidia-ml-py) the probe uses."""

    def nvmlInit(self) -> None: ...
    def nvmlShutdown(self) -> None: ...
    def nvmlSystemGetDriverVersion(self) -> str | bytes: ...
    def nvmlSystemGetCudaDriverVersion(self) -> int: ...
    def nvmlDeviceGetCount(self) -> int: ...
    def nvmlDeviceGetHandleByIndex(self, index: int) -> Any: ...
    def nvmlDeviceGetName(self, handle: Any) -> str | bytes: ...
    def nvmlDeviceGetMemoryInfo(self, handle: Any) -> Any: ...
    def nvmlDeviceGetCudaComputeCapability(self, handle: Any) -> tuple[int, int]: ...


class TorchApi(Protocol):
    """What the probe asks of torch. Each call may raise what torch raises; the probe catches it."""

    def build(self) -> TorchBuild: ...
    def cuda_init(self) -> CudaInit: ...
    def device(self, index: int) -> CudaDevice: ...
    def conv_check(self, index: int, cudnn: bool) -> tuple[float, float]:
        """Run a small conv1d on the GPU; return (milliseconds, largest difference from the CPU)."""
        ...


# NVML error codes (nvml.h) that mean something different to the user.
_NVML_ERROR_KINDS = {
    12: "library-not-found",  # NVML_ERROR_LIBRARY_NOT_FOUND: no driver installed
    9: "driver-not-loaded",  # NVML_ERROR_DRIVER_NOT_LOADED: installed, kernel module not running
    18: "version-mismatch",  # NVML_ERROR_LIB_RM_VERSION_MISMATCH: updated, not yet restarted
    4: "no-permission",  # NVML_ERROR_NO_PERMISSION
}


def load_nvml() -> NvmlApi | None:
    """The real pynvml module, or None when nvidia-ml-py is not installed."""
    try:
        import pynvml
    except ImportError:
        return None
    return pynvml  # type: ignore[no-any-return]


def _text(value: str | bytes) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def read_driver(nvml: NvmlApi | None) -> DriverInfo:
    """Read the driver through NVML; never raises (a missing driver is a finding, not an error)."""
    if nvml is None:
        return DriverInfo(found=False, error_kind="module-missing", error_text="nvidia-ml-py is not installed")
    try:
        nvml.nvmlInit()
    except Exception as exc:  # noqa: BLE001 - pynvml raises one class per NVML error code
        code = getattr(exc, "value", None)
        kind = _NVML_ERROR_KINDS.get(code, "other") if isinstance(code, int) else "other"
        return DriverInfo(found=False, error_kind=kind, error_text=str(exc) or type(exc).__name__)
    try:
        driver = _text(nvml.nvmlSystemGetDriverVersion())
        cuda = int(nvml.nvmlSystemGetCudaDriverVersion())
        gpus = []
        for index in range(int(nvml.nvmlDeviceGetCount())):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            memory = nvml.nvmlDeviceGetMemoryInfo(handle)
            try:
                major, minor = nvml.nvmlDeviceGetCudaComputeCapability(handle)
                capability: tuple[int, int] | None = (int(major), int(minor))
            except Exception:  # noqa: BLE001 - old drivers lack this call; torch reports it too
                capability = None
            gpus.append(
                NvmlGpu(
                    index=index,
                    name=_text(nvml.nvmlDeviceGetName(handle)),
                    memory_total_mib=int(memory.total) // 2**20,
                    memory_used_mib=int(memory.used) // 2**20,
                    capability=capability,
                )
            )
        return DriverInfo(found=True, driver_version=driver, cuda_version=cuda, gpus=tuple(gpus))
    except Exception as exc:  # noqa: BLE001 - a half-readable driver is still a finding
        return DriverInfo(found=False, error_kind="other", error_text=f"{type(exc).__name__}: {exc}")
    finally:
        # Nothing to undo when shutdown itself fails.
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()


class LiveTorch:
    """The real `TorchApi`: imports torch on first use (never at import time)."""

    def build(self) -> TorchBuild:
        import torch

        cudnn = torch.backends.cudnn
        available = bool(cudnn.is_available())  # type: ignore[no-untyped-call]
        version, cudnn_error = None, None
        if available:
            try:
                # Raises when the cuDNN found at run time is not the one torch was built against.
                version = cudnn.version()  # type: ignore[no-untyped-call]
            except RuntimeError as exc:
                cudnn_error = str(exc)
        return TorchBuild(
            version=str(torch.__version__),
            cuda_runtime=torch.version.cuda,
            arch_list=tuple(torch.cuda.get_arch_list()),
            cudnn_available=available,
            cudnn_version=version,
            cudnn_enabled=bool(cudnn.enabled),
            cudnn_benchmark=bool(cudnn.benchmark),
            tf32_matmul=bool(torch.backends.cuda.matmul.allow_tf32),
            tf32_cudnn=bool(cudnn.allow_tf32),
            cpu_threads=int(torch.get_num_threads()),
            cudnn_error=cudnn_error,
        )

    def cuda_init(self) -> CudaInit:
        import torch

        # torch reports a driver that is too old as a warning from is_available(), not an error.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            available = bool(torch.cuda.is_available())
            count = int(torch.cuda.device_count()) if available else 0
        warning = "; ".join(str(w.message) for w in caught) or None
        return CudaInit(
            available=available,
            device_count=count,
            warning=warning,
            visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"),
        )

    def device(self, index: int) -> CudaDevice:
        import torch

        props = torch.cuda.get_device_properties(index)
        try:
            free, _total = torch.cuda.mem_get_info(index)
            free_mib: int | None = int(free) // 2**20
        except RuntimeError:
            free_mib = None
        return CudaDevice(
            index=index,
            name=str(props.name),
            capability=(int(props.major), int(props.minor)),
            memory_total_mib=int(props.total_memory) // 2**20,
            memory_free_mib=free_mib,
            bf16_supported=bool(props.major >= 8),
        )

    def conv_check(self, index: int, cudnn: bool) -> tuple[float, float]:
        import torch

        generator = torch.Generator().manual_seed(0)
        x = torch.randn(1, 64, 512, generator=generator)
        w = torch.randn(64, 64, 5, generator=generator) / 16
        expected = torch.nn.functional.conv1d(x, w, padding=2)
        device = torch.device("cuda", index)
        # TF32 off so the GPU result can be held to fp32 accuracy against the CPU's.
        with torch.backends.cudnn.flags(enabled=cudnn, benchmark=False, deterministic=False, allow_tf32=False):
            xg, wg = x.to(device), w.to(device)
            torch.cuda.synchronize(device)
            start = time.perf_counter()
            got = torch.nn.functional.conv1d(xg, wg, padding=2)
            torch.cuda.synchronize(device)
            elapsed_ms = (time.perf_counter() - start) * 1000
        error = float((got.cpu() - expected).abs().max())
        return elapsed_ms, error
