"""Put the converted Kokoro weights into `models/` for the bundle (converting them first if needed).

The engine converts the int8 ONNX from the installed model packages into a verified float
safetensors file in the user cache; this copies that file and its checksum sidecar to the folder
the PyInstaller spec collects. Nothing is copied when `models/` already holds the same file.

    python packaging/prepare_models.py [--out models]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def prepare(out: Path) -> list[Path]:
    """Return the files in `out` that the bundle needs, converting and copying as required."""
    from voicedesk.core.engine import weights

    weights.load_state_dict()  # converts into the cache unless a verified copy exists already
    # The copy the engine would read, in its own order (models folders first, then the cache).
    source = next(p for p in (*weights.bundled_weight_paths(), weights.cache_path()) if _verified(p))
    out.mkdir(parents=True, exist_ok=True)
    copied = []
    for path in (source, source.with_suffix(".json")):
        target = out / path.name
        if target.resolve() != path.resolve():
            part = target.with_name(target.name + ".part")
            shutil.copyfile(path, part)
            part.replace(target)
        copied.append(target)
    return copied


def _verified(path: Path) -> bool:
    from voicedesk.core.engine import weights

    try:
        info = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return bool(
        info.get("converter_version") == weights.CONVERTER_VERSION and info.get("sha256") == weights.sha256_file(path)
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "models")
    args = parser.parse_args()
    for path in prepare(args.out):
        print(f"{path} ({path.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
