"""The GPU probe on this machine (for real) and on broken machines (faults injected at NVML and torch)."""

from __future__ import annotations

import json
from dataclasses import replace

import pynvml
import pytest
import torch

from gpu_fakes import CPU_BUILD, H200_BUILD, FakeGpu, FakeNvml, FakeTorch, raising
from voicedesk.core.errors import InputError, VoiceDeskError
from voicedesk.core.gpu import State, choose_device
from voicedesk.core.gpu.device import badge_text, cached_probe
from voicedesk.core.gpu.probe import probe
from voicedesk.core.gpu.report import CudaDevice, CudaInit, ProbeReport, TorchBuild
from voicedesk.core.gpu.summary import format_report, summary_line


def codes(report: ProbeReport) -> dict[str, State]:
    return {d.code: d.state for d in report.diagnoses}


def diagnosis(report: ProbeReport, code: str):  # type: ignore[no-untyped-def]
    return next(d for d in report.diagnoses if d.code == code)


def row_state(report: ProbeReport, topic: str) -> State:
    return next(r.state for r in report.rows if r.topic == topic)


# --- this machine, nothing injected -------------------------------------------------------------


def test_this_cpu_machine_says_plainly_there_is_no_driver_and_it_runs_on_the_cpu() -> None:
    report = probe()
    assert not report.driver.found
    assert report.driver.error_kind in ("library-not-found", "driver-not-loaded")
    assert report.torch.version == torch.__version__
    assert not report.cuda_usable
    text = format_report(report)
    assert "No NVIDIA driver found" in text
    assert "VoiceDesk runs on the CPU" in text
    assert "seconds" in text  # what the CPU means for speed
    assert summary_line(report).endswith("device: cpu (no NVIDIA driver found)")
    json.dumps(report.to_dict())  # JSON-able as is


def test_choose_device_on_this_machine() -> None:
    auto = choose_device("auto", refresh=True)
    assert (auto.device, auto.reason) == ("cpu", "no NVIDIA driver found")
    assert cached_probe() is auto.report  # probed once per process
    assert choose_device("CPU").device == "cpu"
    with pytest.raises(VoiceDeskError, match="GPU cannot be used: no NVIDIA driver found.*driver"):
        choose_device("cuda")
    with pytest.raises(InputError, match="auto, cuda, cpu"):
        choose_device("gpu")
    assert badge_text(auto) == "CPU · no NVIDIA driver found"


# --- fault injection at the boundary ------------------------------------------------------------


def test_all_good_uses_the_gpu() -> None:
    fake = FakeTorch()
    report = probe(FakeNvml(), fake)
    assert report.cuda_usable
    assert fake.conv_calls == [True]  # the check ran with cuDNN on
    assert all(row.state is State.OK for row in report.rows), format_report(report)
    choice = choose_device("cuda", report=report)
    assert (choice.device, choice.reason) == ("cuda", "GPU check passed")
    assert badge_text(choice) == "GPU · NVIDIA H200"
    assert summary_line(report) == (
        "GPU NVIDIA H200 / CUDA 13.0 / cuDNN 9.19.0 / device: cuda (NVIDIA H200)"
    )
    assert "TF32" in next(r.value for r in report.rows if r.topic == "precision")


def test_nvml_missing_means_no_driver() -> None:
    report = probe(
        FakeNvml(init_error=pynvml.NVML_ERROR_LIBRARY_NOT_FOUND),
        FakeTorch(init=CudaInit(available=False, device_count=0), devices=[]),
    )
    assert report.driver.error_kind == "library-not-found"
    assert codes(report)["no-driver"] is State.WARN
    assert "driver 580 or newer" in diagnosis(report, "no-driver").fix  # what CUDA 13.0 needs
    assert choose_device("auto", report=report).reason == "no NVIDIA driver found"


def test_nvidia_ml_py_not_installed_is_reported_as_no_driver() -> None:
    report = probe(None, FakeTorch(build_info=CPU_BUILD, init=CudaInit(False, 0), devices=[]))
    assert report.driver.error_kind == "module-missing"
    assert "no-driver" in codes(report)


def test_driver_updated_without_restart() -> None:
    report = probe(
        FakeNvml(init_error=pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH),
        FakeTorch(init=CudaInit(available=False, device_count=0), devices=[]),
    )
    assert codes(report)["driver-mismatch"] is State.FAIL
    assert diagnosis(report, "driver-mismatch").fix == "Restart the computer."


def test_driver_too_old_for_the_cuda_runtime() -> None:
    # torch warns (not raises) from is_available() when the driver is too old.
    warning = (
        "CUDA initialization: The NVIDIA driver on your system is too old (found version 11040). "
        "Please update your GPU driver by downloading and installing a new version from the URL: "
        "http://www.nvidia.com/Download/index.aspx"
    )
    report = probe(
        FakeNvml(driver="470.256.02", cuda=11040, gpus=[FakeGpu("NVIDIA GeForce RTX 3080", (8, 6))]),
        FakeTorch(init=CudaInit(available=False, device_count=0, warning=warning), devices=[]),
    )
    found = diagnosis(report, "driver-too-old")
    assert found.state is State.FAIL
    assert "supports CUDA up to 11.4" in found.message and "CUDA 13.0" in found.message
    assert "driver 580 or newer" in found.fix
    assert "--index-url https://download.pytorch.org/whl/cu118" in found.fix  # a build this driver runs
    assert choose_device("auto", report=report).reason == "the NVIDIA driver is too old for CUDA 13.0"
    with pytest.raises(VoiceDeskError, match="too old"):
        choose_device("cuda", report=report)


def test_driver_one_minor_behind_still_runs_with_a_warning() -> None:
    build = replace(H200_BUILD, version="2.8.0+cu128", cuda_runtime="12.8")
    report = probe(FakeNvml(driver="560.35.03", cuda=12060), FakeTorch(build_info=build))
    assert codes(report)["driver-behind"] is State.WARN
    assert report.cuda_usable


def test_cudnn_init_failure() -> None:
    error = RuntimeError("cuDNN error: CUDNN_STATUS_NOT_INITIALIZED")
    fake = FakeTorch(conv=raising(error, only_with_cudnn=True))
    report = probe(FakeNvml(), fake)
    assert fake.conv_calls == [True, False]  # retried without cuDNN to tell the two apart
    found = diagnosis(report, "cudnn-init")
    assert found.state is State.FAIL
    assert "CUDNN_STATUS_NOT_INITIALIZED" in found.message
    assert "GPU itself works" in found.message
    assert "LD_LIBRARY_PATH" in found.fix
    assert row_state(report, "cudnn") is State.FAIL
    assert not report.cuda_usable
    assert choose_device("auto", report=report).reason == "cuDNN failed to start"
    assert "cuDNN 9.19.0 (failed)" in summary_line(report)


def test_gpu_architecture_missing_from_the_build() -> None:
    # An RTX 50 card (sm_120) with a torch built up to sm_90 for CUDA 12.4.
    build = replace(H200_BUILD, version="2.5.1+cu124", cuda_runtime="12.4",
                    arch_list=("sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"))
    error = RuntimeError("CUDA error: no kernel image is available for execution on the device")
    report = probe(
        FakeNvml(driver="576.02", cuda=12090, gpus=[FakeGpu("NVIDIA GeForce RTX 5090", (12, 0))]),
        FakeTorch(build_info=build, devices=[CudaDevice(0, "NVIDIA GeForce RTX 5090", (12, 0), 32607, 30000, True)],
                  conv=raising(error)),
    )
    found = diagnosis(report, "arch-missing")
    assert found.state is State.FAIL
    assert "sm_120" in found.message and "sm_50 to sm_90" in found.message
    # The newest CUDA build this driver (12.9) runs that has sm_120 kernels (12.8+).
    assert "--index-url https://download.pytorch.org/whl/cu129" in found.fix
    assert codes(report)["check-failed"] is State.FAIL
    assert choose_device("auto", report=report).reason == "PyTorch has no kernels for sm_120"


def test_architecture_check_alone_knows_binary_compatibility() -> None:
    # sm_86 runs sm_80 binaries: no finding, and the check passes.
    build = replace(H200_BUILD, arch_list=("sm_80", "sm_90"))
    report = probe(FakeNvml(), FakeTorch(build_info=build,
                                         devices=[CudaDevice(0, "NVIDIA RTX A6000", (8, 6), 49140, 48000, True)]))
    assert "arch-missing" not in codes(report)
    assert report.cuda_usable


def test_out_of_memory_during_the_check() -> None:
    error = torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 7.79 GiB total capacity)")
    report = probe(
        FakeNvml(gpus=[FakeGpu("NVIDIA GeForce RTX 3070", (8, 6), total=8 * 2**30, used=8 * 2**30 - 2**20)]),
        FakeTorch(devices=[CudaDevice(0, "NVIDIA GeForce RTX 3070", (8, 6), 7982, 1, True)], conv=raising(error)),
    )
    found = diagnosis(report, "oom")
    assert found.state is State.FAIL
    assert "8191 of 8192 MiB were already in use" in found.message
    assert "cuDNN 9.19.0 /" in summary_line(report)  # an out-of-memory check is not a cuDNN failure
    assert "nvidia-smi" in found.fix
    assert "low-memory" in codes(report)
    assert choose_device("auto", report=report).reason == "the GPU's memory is full"


def test_cpu_only_torch_on_a_machine_with_a_gpu() -> None:
    report = probe(FakeNvml(cuda=12080), FakeTorch(build_info=CPU_BUILD, devices=[]))
    found = diagnosis(report, "cpu-only-torch")
    assert found.state is State.FAIL
    assert "NVIDIA H200 sits idle" in found.message
    assert "--index-url https://download.pytorch.org/whl/cu128" in found.fix  # newest the driver runs
    assert choose_device("auto", report=report).reason == "PyTorch is a CPU-only build"


def test_gpu_that_computes_wrong_numbers_is_not_used() -> None:
    report = probe(FakeNvml(), FakeTorch(conv=lambda index, cudnn: (0.3, 0.5)))
    assert codes(report)["wrong-result"] is State.FAIL
    assert not report.cuda_usable


def test_cuda_visible_devices_hiding_the_gpu() -> None:
    report = probe(FakeNvml(), FakeTorch(init=CudaInit(False, 0, visible_devices=""), devices=[]))
    assert codes(report)["cuda-hidden"] is State.FAIL
    assert choose_device("auto", report=report).reason == "CUDA_VISIBLE_DEVICES hides the GPU"


def test_cuda_init_that_raises_is_a_finding_not_a_crash() -> None:
    class Exploding(FakeTorch):
        def cuda_init(self) -> CudaInit:
            raise RuntimeError("CUDA driver initialization failed, you might not have a CUDA gpu.")

    report = probe(FakeNvml(), Exploding(devices=[]))
    assert codes(report)["cuda-unavailable"] is State.FAIL
    assert "initialization failed" in diagnosis(report, "cuda-unavailable").message


def test_architecture_is_checked_from_the_driver_when_cuda_does_not_start() -> None:
    build = replace(H200_BUILD, arch_list=("sm_80", "sm_86", "sm_90"))
    report = probe(
        FakeNvml(gpus=[FakeGpu("NVIDIA GeForce RTX 5080", (12, 0))]),
        FakeTorch(build_info=build, init=CudaInit(False, 0, warning="CUDA initialization: unknown error"), devices=[]),
    )
    assert codes(report)["arch-missing"] is State.FAIL
    assert codes(report)["cuda-unavailable"] is State.FAIL
    assert choose_device("auto", report=report).reason == "PyTorch has no kernels for sm_120"


def test_a_pytorch_that_cannot_load_is_reported_not_raised() -> None:
    class Broken(FakeTorch):
        def build(self) -> TorchBuild:
            raise OSError('[WinError 126] The specified module could not be found. Error loading "fbgemm.dll"')

    report = probe(FakeNvml(), Broken(devices=[]))
    found = diagnosis(report, "torch-broken")
    assert found.state is State.FAIL
    assert "Visual C++ Redistributable" in found.fix
    assert next(r.value for r in report.rows if r.topic == "torch") == "could not be loaded"
    assert "CUDA unknown (PyTorch could not be loaded)" in summary_line(report)
    assert choose_device("auto", report=report).reason == "PyTorch could not be loaded"


def test_cudnn_version_mismatch_at_load_time() -> None:
    error = ("cuDNN version incompatibility: PyTorch was compiled  against (9, 10, 2) but found runtime version "
             "(8, 9, 7). PyTorch already comes bundled with cuDNN.")
    build = replace(H200_BUILD, cudnn_version=None, cudnn_error=error)
    report = probe(FakeNvml(), FakeTorch(build_info=build, conv=raising(RuntimeError("cuDNN error: CUDNN_STATUS_NOT_INITIALIZED"), True)))
    assert codes(report)["cudnn-mismatch"] is State.FAIL
    assert "LD_LIBRARY_PATH" in diagnosis(report, "cudnn-mismatch").fix
    assert "cuDNN wrong version loaded" in summary_line(report)


def test_cudnn_failure_with_full_memory_points_at_the_memory() -> None:
    error = RuntimeError("cuDNN error: CUDNN_STATUS_NOT_INITIALIZED")
    nvml = FakeNvml(gpus=[FakeGpu("NVIDIA GeForce RTX 4060", (8, 9), total=8 * 2**30, used=7_900 * 2**20)])
    report = probe(nvml, FakeTorch(conv=raising(error, only_with_cudnn=True)))
    assert "nearly full (7900 of 8192 MiB in use)" in diagnosis(report, "cudnn-init").message


def test_cudnn_allocation_failure_counts_as_out_of_memory() -> None:
    error = RuntimeError("cuDNN error: CUDNN_STATUS_ALLOC_FAILED")
    report = probe(FakeNvml(), FakeTorch(conv=raising(error)))
    assert "oom" in codes(report) and "cudnn-init" not in codes(report)


def test_out_of_memory_with_a_free_card_blames_a_limit_in_the_process() -> None:
    # As seen on an H200 with torch.cuda.set_per_process_memory_fraction(1e-7).
    error = torch.OutOfMemoryError(
        "CUDA out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacity of 139.80 GiB of which "
        "139.29 GiB is free. Including non-PyTorch memory, this process has 518.00 MiB memory in use. "
        "14.66 KiB allowed;"
    )
    report = probe(FakeNvml(gpus=[FakeGpu(used=618 * 2**20)]), FakeTorch(conv=raising(error)))
    found = diagnosis(report, "oom")
    assert "only 618 of 144384 MiB in use" in found.message
    assert "PYTORCH_CUDA_ALLOC_CONF" in found.fix
    assert choose_device("auto", report=report).reason == "the GPU refused memory"
