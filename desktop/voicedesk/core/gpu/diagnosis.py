"""From facts to advice: each way the GPU stack can fail becomes a diagnosis with a concrete fix.

`diagnose()` is a pure function of what the probe read (driver, torch build, CUDA start-up, devices,
and the real convolution check), so every failure mode can be exercised by handing it the facts a
broken machine would produce. Every row topic gets at least one diagnosis, so the window and the
text report can colour each row from them.
"""

from __future__ import annotations

from voicedesk.core.gpu import compat
from voicedesk.core.gpu.report import CudaDevice, CudaInit, Diagnosis, DriverInfo, GpuCheck, State, TorchBuild

# What running on the CPU means, measured on a 2-core machine and an H200 with VoiceDesk's model
# (docs/benchmarks: synthesis RTF 0.17-0.8 on the CPU, 0.005-0.013 on the H200 with and without CUDA
# graphs; a clone up to its 60 s budget on the CPU, 1.7-3.1 s on the H200).
CPU_SPEED = (
    "speaking 5 seconds of audio takes about 1 to 4 seconds on the CPU instead of well under "
    "0.1 s on a recent NVIDIA GPU, and fitting a cloned voice takes up to a minute instead of 2 to 3 seconds"
)

# The reason the summary line and the badge give when there is no driver.
NO_DRIVER_REASON = "no NVIDIA driver found"


def classify_error(error_type: str | None, error_text: str | None) -> str:
    """Sort an exception from the GPU check into the failure it signals."""
    text = (error_text or "").lower()
    if error_type == "OutOfMemoryError" or "out of memory" in text or "cudnn_status_alloc_failed" in text:
        return "oom"
    if "no kernel image" in text or "not compatible with the current pytorch" in text:
        return "no-kernel"
    if "cudnn" in text:
        return "cudnn"
    if "driver version is insufficient" in text or "driver on your system is too old" in text:
        return "driver-too-old"
    if "busy or unavailable" in text:
        return "busy"
    return "other"


def first_line(text: str | None, limit: int = 160) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


class _Findings:
    """Collects diagnoses; `short` phrases explain the device choice in the summary line."""

    def __init__(self) -> None:
        self.items: list[Diagnosis] = []

    def add(self, code: str, topic: str, state: State, message: str, fix: str = "", short: str = "") -> None:
        self.items.append(Diagnosis(code=code, topic=topic, state=state, message=message, fix=fix, reason=short))

    def worst_reason(self) -> str:
        blocking = [d for d in self.items if d.reason and d.state is not State.OK]
        blocking.sort(key=lambda d: -d.state.rank)  # stable: the first FAIL in row order, else the first WARN
        return blocking[0].reason if blocking else "no usable CUDA device"


def diagnose(
    driver: DriverInfo,
    build: TorchBuild,
    cuda: CudaInit,
    devices: tuple[CudaDevice, ...],
    check: GpuCheck,
) -> tuple[Diagnosis, ...]:
    found = _Findings()
    runtime = compat.parse_cuda(build.cuda_runtime)
    driver_cuda = compat.nvml_cuda(driver.cuda_version)
    failure = classify_error(check.error_type, check.error_text) if check.ran and not check.passed else None
    has_nvidia_gpu = bool(driver.gpus) or bool(devices)
    gpu_name = devices[0].name if devices else driver.gpus[0].name if driver.gpus else "the GPU"

    _driver(found, driver, cuda, runtime)
    _gpu(found, driver, build, devices, has_nvidia_gpu)
    _torch(found, build, driver_cuda, has_nvidia_gpu, gpu_name)
    _cuda(found, driver, build, cuda, runtime, driver_cuda, failure, has_nvidia_gpu)
    _cudnn(found, driver, build, check, failure, runtime, gpu_name)
    _check(found, driver, check, failure, devices, gpu_name)
    _precision(found, devices, check)
    _device(found, check, gpu_name)
    return tuple(found.items)


def _driver(found: _Findings, driver: DriverInfo, cuda: CudaInit, runtime: tuple[int, int] | None) -> None:
    newest = compat.torch_cuda_for(None)
    needed = compat.driver_needed(runtime or newest)
    # A CPU-only PyTorch needs its CUDA build as well once the driver is there.
    then = "" if runtime else f", then PyTorch's CUDA build (`{compat.torch_install_command(newest)}`)"
    if driver.found:
        supports = compat.cuda_text(compat.nvml_cuda(driver.cuda_version))
        found.add("driver-ok", "driver", State.OK, f"NVIDIA driver {driver.driver_version} (supports CUDA up to {supports}).")
        return
    kind = driver.error_kind
    if cuda.available:
        # CUDA works without NVML (some containers): only the details are missing.
        found.add("nvml-unreadable", "driver", State.WARN,
                  f"The driver's management library (NVML) could not be read ({driver.error_text}); "
                  "CUDA works, so only driver details are missing from this report.",
                  "Nothing to do for VoiceDesk; reinstalling the NVIDIA driver restores NVML.")
    elif kind in ("library-not-found", "module-missing"):
        found.add("no-driver", "driver", State.WARN,
                  f"No NVIDIA driver found. VoiceDesk runs on the CPU: it works, but {CPU_SPEED}.",
                  f"If this computer has an NVIDIA graphics card, install its driver ({needed}) from "
                  f"nvidia.com/drivers or your system's driver manager{then}, restart, and run "
                  "`voicedesk doctor` again. Without an NVIDIA card there is nothing to fix.",
                  short=NO_DRIVER_REASON)
    elif kind == "driver-not-loaded":
        found.add("driver-not-loaded", "driver", State.FAIL,
                  "The NVIDIA driver is installed but not running (its kernel module is not loaded), so "
                  "VoiceDesk runs on the CPU.",
                  "Restart the computer. On Linux with Secure Boot, the driver's module must be signed "
                  "(enrol its key with `sudo mokutil --import`) or reinstall the driver from your "
                  "distribution's packages.",
                  short="the NVIDIA driver is not loaded")
    elif kind == "version-mismatch":
        found.add("driver-mismatch", "driver", State.FAIL,
                  "The NVIDIA driver was updated but the old one is still running (driver/library "
                  "version mismatch), so CUDA cannot start.",
                  "Restart the computer.",
                  short="the NVIDIA driver was updated without a restart")
    elif kind == "no-permission":
        found.add("driver-permission", "driver", State.FAIL,
                  "The NVIDIA driver refused access to this user.",
                  "Add your user to the group that owns /dev/nvidia* (often `video` or `render`), log "
                  "out and back in.",
                  short="no permission to use the GPU")
    else:
        found.add("driver-error", "driver", State.FAIL,
                  f"The NVIDIA driver could not be read: {driver.error_text}.",
                  f"Reinstall the NVIDIA driver ({needed}) and restart.",
                  short="the NVIDIA driver could not be read")


def _gpu(
    found: _Findings,
    driver: DriverInfo,
    build: TorchBuild,
    devices: tuple[CudaDevice, ...],
    has_nvidia_gpu: bool,
) -> None:
    if not has_nvidia_gpu:
        if driver.found:
            found.add("no-gpu", "gpu", State.WARN, "The NVIDIA driver is installed but it reports no GPU.",
                      "Check that the card is seated and powered; on laptops, that the NVIDIA GPU is enabled.",
                      short="the driver reports no GPU")
        else:
            found.add("no-gpu", "gpu", State.WARN, "No NVIDIA GPU is visible.")
        return
    # When CUDA did not start, the driver's view of each GPU still tells whether this build fits it.
    from_driver = tuple(
        CudaDevice(g.index, g.name, g.capability, g.memory_total_mib, None, g.capability >= (8, 0))
        for g in driver.gpus
        if g.capability is not None and build.arch_list
    )
    for device in devices or from_driver:
        support = compat.arch_support(device.capability, build.arch_list)
        if support == "none":
            _arch_missing(found, build, device, driver)
        elif support == "ptx":
            found.add("arch-ptx", "gpu", State.WARN,
                      f"PyTorch {build.version} has no ready-made kernels for the {device.name} "
                      f"({device.arch}); the driver compiles them at first use, so the first start is slow.",
                      _newer_build_fix(build, device, driver))
        if device.memory_free_mib is not None and device.memory_free_mib < 1024:
            found.add("low-memory", "gpu", State.WARN,
                      f"Only {device.memory_free_mib} MiB of the {device.name}'s memory is free; VoiceDesk "
                      "needs about 1 GiB.",
                      "Close other programs using the GPU (`nvidia-smi` lists them).")
    if devices:
        names = ", ".join(f"{d.name} ({d.arch})" for d in devices)
        found.add("gpu-ok", "gpu", State.OK, f"GPU: {names}.")
    else:
        names = ", ".join(g.name for g in driver.gpus)
        found.add("gpu-seen", "gpu", State.OK, f"The driver reports: {names}.")


def _newer_build_fix(build: TorchBuild, device: CudaDevice, driver: DriverInfo) -> str:
    needs = compat.min_cuda_for(device.capability)
    target = compat.torch_cuda_for(compat.nvml_cuda(driver.cuda_version), at_least=needs)
    fix = (f"Install a PyTorch build for CUDA {compat.cuda_text(target)}: "
           f"`{compat.torch_install_command(target)}`")
    if needs and driver.found and (compat.nvml_cuda(driver.cuda_version) or (0, 0)) < needs:
        fix += f", after updating the NVIDIA driver ({compat.driver_needed(needs)})"
    return fix + "."


def _arch_missing(found: _Findings, build: TorchBuild, device: CudaDevice, driver: DriverInfo) -> None:
    built = compat.arch_range(build.arch_list)
    lowest = compat.lowest_arch(build.arch_list)
    too_old = lowest is not None and device.capability < lowest
    if too_old:
        found.add("gpu-too-old", "gpu", State.FAIL,
                  f"The {device.name} ({device.arch}) is older than PyTorch {build.version} supports "
                  f"(built for {built}); GPU work fails with \"no kernel image is available\".",
                  f"Install an older PyTorch CUDA build that still includes {device.arch} (CUDA 11.8 or "
                  f"12.6 builds, e.g. `{compat.torch_install_command((12, 6))}`), or keep using "
                  "the CPU.",
                  short=f"PyTorch has no kernels for {device.arch}")
        return
    found.add("arch-missing", "gpu", State.FAIL,
              f"The {device.name} is a {device.arch} GPU, and PyTorch {build.version} "
              f"(CUDA {build.cuda_runtime}) has no kernels for it: it was built for {built}. Any GPU work "
              "fails with \"no kernel image is available for execution on the device\".",
              _newer_build_fix(build, device, driver),
              short=f"PyTorch has no kernels for {device.arch}")


def _torch(
    found: _Findings,
    build: TorchBuild,
    driver_cuda: tuple[int, int] | None,
    has_nvidia_gpu: bool,
    gpu_name: str,
) -> None:
    if build.error:
        windows_dll = "dll" in build.error.lower()
        fix = ("Install the Microsoft Visual C++ Redistributable (x64) and restart; if that is not it, reinstall "
               "PyTorch" if windows_dll else "Reinstall PyTorch")
        found.add("torch-broken", "torch", State.FAIL,
                  f"PyTorch could not be loaded ({first_line(build.error)}), so VoiceDesk cannot speak at all.",
                  f"{fix}: `pip install --force-reinstall \"torch{compat.TORCH_RANGE}\"` in VoiceDesk's "
                  "environment (or run `bash run.sh` again).",
                  short="PyTorch could not be loaded")
    elif build.cuda_runtime:
        found.add("torch-ok", "torch", State.OK, f"PyTorch {build.version}, built for CUDA {build.cuda_runtime}.")
    elif has_nvidia_gpu:
        target = compat.torch_cuda_for(driver_cuda)
        found.add("cpu-only-torch", "torch", State.FAIL,
                  f"PyTorch {build.version} is a CPU-only build, so the {gpu_name} sits idle and VoiceDesk "
                  "runs on the CPU.",
                  f"Install PyTorch's CUDA build into VoiceDesk's environment: "
                  f"`{compat.torch_install_command(target)}`.",
                  short="PyTorch is a CPU-only build")
    else:
        found.add("torch-cpu", "torch", State.OK,
                  f"PyTorch {build.version}, CPU-only build (right for a computer without an NVIDIA GPU).")


def _cuda(
    found: _Findings,
    driver: DriverInfo,
    build: TorchBuild,
    cuda: CudaInit,
    runtime: tuple[int, int] | None,
    driver_cuda: tuple[int, int] | None,
    failure: str | None,
    has_nvidia_gpu: bool,
) -> None:
    if runtime is None:
        state = State.WARN if has_nvidia_gpu else State.OK
        found.add("cuda-absent", "cuda", state, "CUDA is not used: this PyTorch has no CUDA support.")
        return
    too_old_warning = cuda.warning is not None and "too old" in cuda.warning.lower()
    if (driver_cuda is not None and driver_cuda[0] < runtime[0]) or too_old_warning or failure == "driver-too-old":
        have = (f"NVIDIA driver {driver.driver_version} supports CUDA up to {compat.cuda_text(driver_cuda)}"
                if driver_cuda else "The NVIDIA driver is too old")
        target = compat.torch_cuda_for(driver_cuda)
        found.add("driver-too-old", "cuda", State.FAIL,
                  f"{have}, but PyTorch {build.version} was built for CUDA {build.cuda_runtime}, so CUDA "
                  "cannot start.",
                  f"Update the NVIDIA driver ({compat.driver_needed(runtime)}), or install a PyTorch build "
                  f"that this driver can run: `{compat.torch_install_command(target)}`.",
                  short=f"the NVIDIA driver is too old for CUDA {build.cuda_runtime}")
        return
    if driver_cuda is not None and driver_cuda < runtime:
        found.add("driver-behind", "cuda", State.WARN,
                  f"NVIDIA driver {driver.driver_version} supports CUDA up to {compat.cuda_text(driver_cuda)}; "
                  f"PyTorch uses CUDA {build.cuda_runtime}. This works through CUDA's minor-version "
                  "compatibility, but kernels compiled at run time can fail.",
                  f"Update the NVIDIA driver ({compat.driver_needed(runtime)}).")
    if not cuda.available or cuda.device_count == 0:
        if cuda.visible_devices is not None and cuda.visible_devices.strip() in ("", "-1", "none"):
            found.add("cuda-hidden", "cuda", State.FAIL,
                      f"CUDA_VISIBLE_DEVICES={cuda.visible_devices!r} hides every GPU from VoiceDesk.",
                      "Unset CUDA_VISIBLE_DEVICES, or set it to the GPU's number (usually 0).",
                      short="CUDA_VISIBLE_DEVICES hides the GPU")
        elif has_nvidia_gpu or cuda.warning:
            detail = f" ({first_line(cuda.warning)})" if cuda.warning else ""
            found.add("cuda-unavailable", "cuda", State.FAIL,
                      f"PyTorch could not start CUDA{detail}.",
                      f"Update the NVIDIA driver ({compat.driver_needed(runtime)}) and restart; if that "
                      "does not help, reinstall PyTorch's CUDA build.",
                      short="CUDA could not start")
        else:
            found.add("cuda-idle", "cuda", State.OK,
                      f"PyTorch is built for CUDA {build.cuda_runtime}, but there is no NVIDIA GPU to use it.")
        return
    supports = f"; the driver supports up to {compat.cuda_text(driver_cuda)}" if driver_cuda else ""
    found.add("cuda-ok", "cuda", State.OK, f"CUDA {build.cuda_runtime} started{supports}.")


def _cudnn(
    found: _Findings,
    driver: DriverInfo,
    build: TorchBuild,
    check: GpuCheck,
    failure: str | None,
    runtime: tuple[int, int] | None,
    gpu_name: str,
) -> None:
    if runtime is None:
        found.add("cudnn-unused", "cudnn", State.OK, "cuDNN is not used on the CPU.")
        return
    version = compat.cudnn_text(build.cudnn_version)
    if build.cudnn_error:
        found.add("cudnn-mismatch", "cudnn", State.FAIL,
                  f"The cuDNN that loaded is not the one PyTorch was built with ({first_line(build.cudnn_error)}).",
                  "Another cuDNN on the library search path shadows PyTorch's own: remove CUDA/cuDNN folders "
                  "from LD_LIBRARY_PATH (Windows: PATH), or reinstall PyTorch, which brings its own cuDNN.",
                  short="the wrong cuDNN was loaded")
        return
    if failure == "cudnn":
        works = (" The GPU itself works: the same convolution ran with cuDNN switched off."
                 if check.passed_without_cudnn else "")
        target = compat.torch_cuda_for(compat.nvml_cuda(driver.cuda_version))
        full = [g for g in driver.gpus if g.memory_used_mib > 0.9 * g.memory_total_mib]
        if full:
            # cuDNN reports a failed start when it cannot get memory for its handle.
            works += (f" The GPU's memory is nearly full ({full[0].memory_used_mib} of {full[0].memory_total_mib} "
                      "MiB in use), the most common cause: close other programs using it (`nvidia-smi` lists them).")
        found.add("cudnn-init", "cudnn", State.FAIL,
                  f"cuDNN {version} could not start on the {gpu_name} ({first_line(check.error_text)}).{works}",
                  "Most often another CUDA or cuDNN copy on the library search path shadows the one "
                  "PyTorch ships: remove CUDA/cuDNN folders from LD_LIBRARY_PATH (Windows: PATH) and start "
                  "VoiceDesk again. If that is not it, reinstall PyTorch from its own index "
                  f"(`{compat.torch_install_command(target)}`) and update the NVIDIA driver "
                  f"({compat.driver_needed(runtime)}).",
                  short="cuDNN failed to start")
        return
    if not build.cudnn_available:
        found.add("cudnn-missing", "cudnn", State.WARN,
                  "This PyTorch build has no cuDNN: convolutions (most of the voice model) run about 3x slower.",
                  "Reinstall PyTorch from its official CUDA index, which bundles cuDNN.")
        return
    if not build.cudnn_enabled:
        found.add("cudnn-off", "cudnn", State.WARN,
                  "cuDNN is switched off (torch.backends.cudnn.enabled is False): convolutions run about 3x slower.",
                  "Remove whatever sets torch.backends.cudnn.enabled = False.")
        return
    mode = "on" if build.cudnn_benchmark else "off"
    found.add("cudnn-ok", "cudnn", State.OK, f"cuDNN {version}, enabled (benchmark mode {mode}).")


def _check(
    found: _Findings,
    driver: DriverInfo,
    check: GpuCheck,
    failure: str | None,
    devices: tuple[CudaDevice, ...],
    gpu_name: str,
) -> None:
    if not check.ran:
        found.add("check-skipped", "check", State.WARN, "Not run: there is no usable CUDA device.")
        return
    if check.passed:
        found.add("check-ok", "check", State.OK,
                  f"A convolution ran on the {gpu_name} with cuDNN on ({check.milliseconds:.0f} ms for the first "
                  f"run, cuDNN's start included) and matched the CPU (largest difference {check.max_abs_error:.1e}).")
        return
    if check.error_type is None:
        found.add("wrong-result", "check", State.FAIL,
                  f"The {gpu_name} computed a convolution that differs from the CPU's by "
                  f"{check.max_abs_error:.3g}: its results cannot be trusted.",
                  "Update the NVIDIA driver; check the card's temperature and clocks (a factory overclock "
                  "or overheating causes this).",
                  short="the GPU computed wrong numbers")
        return
    error = f"{check.error_type}: {first_line(check.error_text)}"
    if failure == "oom":
        g = driver.gpus[0] if driver.gpus else None
        if g is not None and g.memory_used_mib < 0.9 * g.memory_total_mib:
            # The card has room, so the limit is this process's own (seen with a memory fraction set).
            found.add("oom", "check", State.FAIL,
                      f"The {gpu_name} ran out of memory during a tiny test, although the driver reports only "
                      f"{g.memory_used_mib} of {g.memory_total_mib} MiB in use: a memory limit set for this "
                      "process is the likely cause.",
                      "Remove memory limits from VoiceDesk's environment (PYTORCH_CUDA_ALLOC_CONF, "
                      "PYTORCH_NO_CUDA_MEMORY_CACHING), then run `voicedesk doctor` again.",
                      short="the GPU refused memory")
        else:
            used = f" ({g.memory_used_mib} of {g.memory_total_mib} MiB were already in use)" if g else ""
            found.add("oom", "check", State.FAIL,
                      f"The {gpu_name} ran out of memory during a tiny test{used}: other programs hold its memory.",
                      "Close other programs using the GPU (`nvidia-smi` lists them), then run `voicedesk doctor` "
                      "again. VoiceDesk uses the CPU meanwhile.",
                      short="the GPU's memory is full")
    elif failure == "busy":
        found.add("gpu-busy", "check", State.FAIL,
                  f"The {gpu_name} is in exclusive mode and another program holds it.",
                  "Close the other program, or switch the GPU to shared mode: `nvidia-smi -c DEFAULT` (as administrator).",
                  short="the GPU is held by another program")
    elif failure in ("cudnn", "no-kernel", "driver-too-old"):
        # The explaining diagnosis sits on its own row (cuDNN, GPU or CUDA); this one records the event.
        found.add("check-failed", "check", State.FAIL, f"A small convolution on the {gpu_name} failed ({error}).")
    else:
        found.add("check-failed", "check", State.FAIL,
                  f"A small convolution on the {gpu_name} failed ({error}).",
                  "Update the NVIDIA driver and reinstall PyTorch's CUDA build; if it persists, attach this "
                  "report (Copy report) to a bug report.",
                  short="the GPU check failed")


def _precision(found: _Findings, devices: tuple[CudaDevice, ...], check: GpuCheck) -> None:
    if not devices or not check.passed:
        found.add("precision-cpu", "precision", State.OK,
                  "float32 (half precision brings no speed-up on the CPU).")
        return
    major = devices[0].capability[0]
    tf32 = "yes" if major >= 8 else "no"
    fp16 = "yes (tensor cores)" if major >= 7 else "yes (no tensor cores: little gain)"
    bf16 = "yes" if devices[0].bf16_supported else "no"
    found.add("precision", "precision", State.OK, f"TF32: {tf32}; fp16: {fp16}; bf16: {bf16}.")


def _device(found: _Findings, check: GpuCheck, gpu_name: str) -> None:
    if check.ran and check.passed:
        found.add("device-cuda", "device", State.OK, f"VoiceDesk uses the {gpu_name} (the GPU check passed).")
        return
    reason = found.worst_reason()
    found.add("device-cpu", "device", State.WARN, f"VoiceDesk runs on the CPU ({reason}).", short=reason)


def device_short_reason(diagnoses: tuple[Diagnosis, ...]) -> str:
    """Why the device is what it is, as a short clause for the summary line and the badge."""
    for d in diagnoses:
        if d.code == "device-cpu":
            return d.reason
        if d.code == "device-cuda":
            return "GPU check passed"
    return ""
