"""Probe the GPU stack: read the driver, torch's build and CUDA start-up, then run the real check.

`probe()` never raises for a broken or missing GPU: every failure is caught at the boundary and
recorded, and diagnosis.py turns the record into advice. Pass `nvml` / `torch_api` to replace the
real driver or torch (tests inject faults this way).
"""

from __future__ import annotations

import datetime
import logging
import platform
import sys

from voicedesk.core.gpu.boundary import LiveTorch, NvmlApi, TorchApi, load_nvml, read_driver
from voicedesk.core.gpu.diagnosis import diagnose
from voicedesk.core.gpu.report import CudaDevice, CudaInit, GpuCheck, ProbeReport, TorchBuild
from voicedesk.core.gpu.summary import status_rows

log = logging.getLogger(__name__)

# A sentinel so `probe(nvml=None)` can mean "nvidia-ml-py is missing" rather than "use the default".
_REAL = object()

# The check must agree with the CPU this closely (fp32, TF32 off, 320 products per output).
CHECK_TOLERANCE = 1e-3


def probe(nvml: NvmlApi | None | object = _REAL, torch_api: TorchApi | None = None) -> ProbeReport:
    nvml_api: NvmlApi | None = load_nvml() if nvml is _REAL else nvml  # type: ignore[assignment]
    torch_api = torch_api or LiveTorch()

    driver = read_driver(nvml_api)
    try:
        build = torch_api.build()
    except Exception as exc:  # noqa: BLE001 - a torch that cannot load (DLL errors) is the finding
        log.info("torch could not be loaded", exc_info=True)
        build = TorchBuild.unavailable(f"{type(exc).__name__}: {exc}")
    cuda = _cuda_init(torch_api) if build.cuda_runtime else CudaInit(available=False, device_count=0)
    devices = _devices(torch_api, cuda)
    check = _run_check(torch_api, devices[0].index) if devices else GpuCheck(ran=False)

    diagnoses = diagnose(driver, build, cuda, devices, check)
    return ProbeReport(
        created_utc=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        platform=platform.platform(),
        python=sys.version.split()[0],
        driver=driver,
        torch=build,
        cuda=cuda,
        devices=devices,
        check=check,
        diagnoses=diagnoses,
        rows=status_rows(driver, build, cuda, devices, check, diagnoses),
    )


def _cuda_init(torch_api: TorchApi) -> CudaInit:
    try:
        return torch_api.cuda_init()
    except Exception as exc:  # noqa: BLE001 - a CUDA that cannot start is a finding
        log.info("CUDA initialisation failed", exc_info=True)
        return CudaInit(available=False, device_count=0, warning=f"{type(exc).__name__}: {exc}")


def _devices(torch_api: TorchApi, cuda: CudaInit) -> tuple[CudaDevice, ...]:
    if not cuda.available:
        return ()
    found = []
    for index in range(cuda.device_count):
        try:
            found.append(torch_api.device(index))
        except Exception:  # noqa: BLE001 - one unreadable device should not hide the others
            log.info("could not read CUDA device %d", index, exc_info=True)
    return tuple(found)


def _run_check(torch_api: TorchApi, index: int) -> GpuCheck:
    try:
        milliseconds, error = torch_api.conv_check(index, cudnn=True)
    except Exception as exc:  # noqa: BLE001 - every failure here is what the probe is for
        log.info("GPU check failed on device %d", index, exc_info=True)
        return GpuCheck(
            ran=True,
            passed=False,
            device_index=index,
            error_type=type(exc).__name__,
            error_text=str(exc),
            passed_without_cudnn=_works_without_cudnn(torch_api, index),
        )
    return GpuCheck(
        ran=True,
        passed=error <= CHECK_TOLERANCE,
        device_index=index,
        milliseconds=milliseconds,
        max_abs_error=error,
    )


def _works_without_cudnn(torch_api: TorchApi, index: int) -> bool:
    try:
        _ms, error = torch_api.conv_check(index, cudnn=False)
    except Exception:  # noqa: BLE001 - only the yes/no matters here
        return False
    return error <= CHECK_TOLERANCE
