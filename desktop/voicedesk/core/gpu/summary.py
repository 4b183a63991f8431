"""The probe's findings as rows, one summary line, and a plain-text report (for the terminal and bug reports)."""

from __future__ import annotations

from voicedesk.core.gpu import compat
from voicedesk.core.gpu.diagnosis import device_short_reason
from voicedesk.core.gpu.report import (
    TOPICS,
    CudaDevice,
    CudaInit,
    Diagnosis,
    DriverInfo,
    GpuCheck,
    ProbeReport,
    State,
    StatusRow,
    TorchBuild,
    worst,
)

_DRIVER_ERRORS = {
    "library-not-found": "not found",
    "module-missing": "not found (nvidia-ml-py missing)",
    "driver-not-loaded": "installed, not loaded",
    "version-mismatch": "updated, restart needed",
    "no-permission": "access denied",
}


def _gib(mib: int) -> str:
    return f"{mib / 1024:.0f} GiB"


def status_rows(
    driver: DriverInfo,
    build: TorchBuild,
    cuda: CudaInit,
    devices: tuple[CudaDevice, ...],
    check: GpuCheck,
    diagnoses: tuple[Diagnosis, ...],
) -> tuple[StatusRow, ...]:
    values = {
        "driver": _driver_value(driver),
        "gpu": _gpu_value(driver, devices),
        "torch": _torch_value(build),
        "cuda": _cuda_value(build, cuda),
        "cudnn": _cudnn_value(build, diagnoses),
        "check": _check_value(check),
        "precision": _precision_value(devices, check),
        "device": _device_value(devices, check, diagnoses),
    }
    return tuple(
        StatusRow(
            topic=topic,
            label=label,
            value=values[topic],
            state=worst([d.state for d in diagnoses if d.topic == topic]),
        )
        for topic, label in TOPICS
    )


def _driver_value(driver: DriverInfo) -> str:
    if driver.found:
        return f"{driver.driver_version} (CUDA up to {compat.cuda_text(compat.nvml_cuda(driver.cuda_version))})"
    return _DRIVER_ERRORS.get(driver.error_kind or "", "unreadable")


def _gpu_value(driver: DriverInfo, devices: tuple[CudaDevice, ...]) -> str:
    if devices:
        return "; ".join(f"{d.name}, {_gib(d.memory_total_mib)} ({d.arch})" for d in devices)
    if driver.gpus:
        return "; ".join(f"{g.name}, {_gib(g.memory_total_mib)}" for g in driver.gpus)
    return "none found"


def _torch_value(build: TorchBuild) -> str:
    if build.error:
        return "could not be loaded"
    return f"{build.version} ({'CUDA ' + build.cuda_runtime if build.cuda_runtime else 'CPU-only build'})"


def _cuda_value(build: TorchBuild, cuda: CudaInit) -> str:
    if not build.cuda_runtime:
        return "not in this PyTorch build"
    return f"{build.cuda_runtime} ({'started' if cuda.available and cuda.device_count else 'not started'})"


def _cudnn_value(build: TorchBuild, diagnoses: tuple[Diagnosis, ...]) -> str:
    if not build.cuda_runtime:
        return "not used on the CPU"
    if not build.cudnn_available:
        return "missing from this build"
    if build.cudnn_error:
        return "wrong cuDNN loaded"
    version = compat.cudnn_text(build.cudnn_version)
    if any(d.code == "cudnn-init" for d in diagnoses):
        return f"{version}, failed to run"
    return f"{version}, {'enabled' if build.cudnn_enabled else 'switched off'}"


def _check_value(check: GpuCheck) -> str:
    if not check.ran:
        return "not run (no CUDA device)"
    if check.passed:
        return f"passed (first run {check.milliseconds:.0f} ms)"
    return f"failed ({check.error_type or 'wrong result'})"


def _precision_value(devices: tuple[CudaDevice, ...], check: GpuCheck) -> str:
    if not devices or not check.passed:
        return "fp32 (CPU; the vocoder in bf16 where the CPU runs it faster)"
    major = devices[0].capability[0]
    kinds = (["TF32"] if major >= 8 else []) + ["fp16"] + (["bf16"] if devices[0].bf16_supported else [])
    return ", ".join(kinds)


def _device_value(devices: tuple[CudaDevice, ...], check: GpuCheck, diagnoses: tuple[Diagnosis, ...]) -> str:
    if check.ran and check.passed and devices:
        return f"cuda ({devices[0].name})"
    return f"cpu ({device_short_reason(diagnoses)})"


def summary_line(report: ProbeReport) -> str:
    """One line for the start-up script: GPU / CUDA / cuDNN / device chosen."""
    rows = {row.topic: row.value for row in report.rows}
    if report.devices:
        gpu = report.devices[0].name
    elif report.driver.gpus:
        gpu = report.driver.gpus[0].name
    else:
        gpu = "none (no NVIDIA driver)" if not report.driver.found else "none"
    if report.torch.error:
        cuda = "unknown (PyTorch could not be loaded)"
    else:
        cuda = report.torch.cuda_runtime or "none (CPU-only PyTorch)"
    cudnn = compat.cudnn_text(report.torch.cudnn_version) if report.torch.cudnn_available else "none"
    if report.torch.cudnn_error:
        cudnn = "wrong version loaded"
    if report.diagnoses_for("cudnn") and report.diagnoses_for("cudnn")[0].code == "cudnn-init":
        cudnn += " (failed)"
    return f"GPU {gpu} / CUDA {cuda} / cuDNN {cudnn} / device: {rows['device']}"


_MARK = {State.OK: "ok  ", State.WARN: "WARN", State.FAIL: "FAIL"}


def format_report(report: ProbeReport) -> str:
    """The whole report as text: a status table, then each problem with its fix."""
    width = max(len(label) for _topic, label in TOPICS)
    lines = [f"VoiceDesk GPU report ({report.created_utc}, {report.platform}, Python {report.python})", ""]
    for row in report.rows:
        lines.append(f"  [{_MARK[row.state]}] {row.label.ljust(width)}  {row.value}")
    # Findings that come with a fix, then where VoiceDesk runs; the rest is in the table already.
    lines.append("")
    for d in report.diagnoses:
        if d.state is not State.OK and d.fix:
            lines.append(f"{_MARK[d.state].strip()}: {d.message}")
            lines.append(f"  What to do: {d.fix}")
    lines.extend(d.message for d in report.diagnoses_for("device"))
    return "\n".join(lines)
