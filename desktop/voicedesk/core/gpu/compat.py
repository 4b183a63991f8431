"""Version arithmetic: which driver a CUDA runtime needs, which torch build a GPU needs.

Kept apart from the diagnoses so the numbers live in one place. The tables name the first driver
branch that supports each CUDA release (NVIDIA's CUDA toolkit release notes) and the CUDA wheel
indexes PyTorch publishes.
"""

from __future__ import annotations

# CUDA runtime (major, minor) -> first NVIDIA driver branch that supports it.
_DRIVER_BRANCH = {
    (11, 8): 520,
    (12, 0): 525,
    (12, 1): 530,
    (12, 2): 535,
    (12, 3): 545,
    (12, 4): 550,
    (12, 5): 555,
    (12, 6): 560,
    (12, 8): 570,
    (12, 9): 575,
    (13, 0): 580,
    (13, 1): 590,
}

# CUDA versions PyTorch publishes wheels for (https://download.pytorch.org/whl/cuXYZ).
_TORCH_CUDA_INDEXES = ((11, 8), (12, 6), (12, 8), (12, 9), (13, 0))

# Newest CUDA architectures: the CUDA release that first compiles for them.
_ARCH_MIN_CUDA = {(12, 0): (12, 8), (10, 0): (12, 8), (9, 0): (11, 8), (8, 9): (11, 8), (8, 6): (11, 1)}

TORCH_INDEX_URL = "https://download.pytorch.org/whl/"


def parse_cuda(text: str | None) -> tuple[int, int] | None:
    """'12.8' -> (12, 8); None or junk -> None."""
    if not text:
        return None
    parts = text.split(".")
    try:
        return int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    except ValueError:
        return None


def nvml_cuda(code: int | None) -> tuple[int, int] | None:
    """NVML's integer CUDA version (12080) -> (12, 8)."""
    if not code:
        return None
    return code // 1000, (code % 1000) // 10


def cuda_text(version: tuple[int, int] | None) -> str:
    return f"{version[0]}.{version[1]}" if version else "unknown"


def driver_needed(cuda: tuple[int, int]) -> str:
    """Plain words for the driver a CUDA runtime needs, e.g. 'driver 580 or newer'."""
    known = [v for v in _DRIVER_BRANCH if v <= cuda]
    if not known:
        return f"a driver that supports CUDA {cuda_text(cuda)}"
    branch = _DRIVER_BRANCH[cuda] if cuda in _DRIVER_BRANCH else _DRIVER_BRANCH[max(known)]
    return f"driver {branch} or newer"


def torch_cuda_for(driver_cuda: tuple[int, int] | None, at_least: tuple[int, int] | None = None) -> tuple[int, int]:
    """The newest CUDA that PyTorch publishes wheels for, the driver can run and the GPU needs."""
    candidates = [v for v in _TORCH_CUDA_INDEXES if at_least is None or v >= at_least]
    runnable = [v for v in candidates if driver_cuda is None or v <= driver_cuda]
    if runnable:
        return max(runnable)
    return min(candidates) if candidates else _TORCH_CUDA_INDEXES[-1]


# The torch versions VoiceDesk supports; keep in step with pyproject.toml.
TORCH_RANGE = ">=2.5,<2.14"


def torch_install_command(cuda: tuple[int, int]) -> str:
    """The pip line that swaps the installed torch for the newest supported one built for `cuda`.

    No exact version: not every torch release publishes every CUDA flavour, and pip picks the newest
    one in VoiceDesk's range that the index has.
    """
    return f'pip install --force-reinstall "torch{TORCH_RANGE}" --index-url {TORCH_INDEX_URL}cu{cuda[0]}{cuda[1]}'


def _arch_number(arch: str) -> tuple[str, int, bool] | None:
    """'sm_90' -> ('sm', 90, False); 'sm_90a' -> ('sm', 90, True); 'compute_90' -> ('compute', 90, False)."""
    kind, _, number = arch.partition("_")
    specific = number.endswith(("a", "f"))
    digits = number.rstrip("af")
    if kind not in ("sm", "compute") or not digits.isdigit():
        return None
    return kind, int(digits), specific


def arch_support(capability: tuple[int, int], arch_list: tuple[str, ...]) -> str:
    """How a torch build covers a GPU: 'native', 'compatible' (same major, older minor), 'ptx' or 'none'.

    A binary built for sm_XY runs on any sm_XZ with Z >= Y; PTX for compute_XY is compiled by the
    driver for any newer GPU. Architecture-specific builds (sm_90a) run only on exactly that GPU.
    """
    major, minor = capability
    wanted = major * 10 + minor
    parsed = [p for p in map(_arch_number, arch_list) if p is not None]
    sm = [(n, specific) for kind, n, specific in parsed if kind == "sm"]
    if any(n == wanted for n, _ in sm):
        return "native"
    if any(not specific and n // 10 == major and n % 10 <= minor for n, specific in sm):
        return "compatible"
    if any(kind == "compute" and not specific and n <= wanted for kind, n, specific in parsed):
        return "ptx"
    return "none"


def min_cuda_for(capability: tuple[int, int]) -> tuple[int, int] | None:
    """The first CUDA release that can build for this GPU, for the newest architectures."""
    known = [cap for cap in _ARCH_MIN_CUDA if cap <= capability and cap[0] == capability[0]]
    return _ARCH_MIN_CUDA[max(known)] if known else None


def lowest_arch(arch_list: tuple[str, ...]) -> tuple[int, int] | None:
    """The oldest GPU a build has binaries for: ('sm_50', 'sm_90') -> (5, 0)."""
    sm = [p[1] for p in map(_arch_number, arch_list) if p is not None and p[0] == "sm"]
    return (min(sm) // 10, min(sm) % 10) if sm else None


def arch_range(arch_list: tuple[str, ...]) -> str:
    sm = sorted({p[1] for p in map(_arch_number, arch_list) if p is not None and p[0] == "sm"})
    if not sm:
        return "no GPU architectures"
    return f"sm_{sm[0]} to sm_{sm[-1]}" if len(sm) > 1 else f"sm_{sm[0]}"


def cudnn_text(version: int | None) -> str:
    """91900 -> '9.19.0' (cuDNN 9 encodes major*10000 + minor*100 + patch; cuDNN 8 major*1000...)."""
    if not version:
        return "unknown"
    if version >= 10000:
        return f"{version // 10000}.{version % 10000 // 100}.{version % 100}"
    return f"{version // 1000}.{version % 1000 // 100}.{version % 100}"
