"""How every stock voice sounds to the judge, so that a clone's report can name the closest stock voice.

A clone is only worth keeping if it is closer to the prompt than a stock voice the user could pick instead. The
profile holds the judge's d-vector of each stock voice saying the report's check sentence (the sentence the clone's
own "after" score is spoken on), so comparing it with the prompt costs nothing. Speaking 54 voices takes a 2-core
CPU most of a minute (46 s on an AMD EPYC), so setup builds it once (`voicedesk voices add-stock`) into the models folder, next
to the voice pack, and the double-click build carries it. Its key covers the check sentence and every style's
bytes: a changed voice set or sentence makes it stale, and a stale profile is not used.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from voicedesk.core import paths
from voicedesk.core.atomic import atomic_write_bytes

log = logging.getLogger(__name__)

PROFILE_NAME = "kokoro-voices-v1.0.judge.safetensors"
GRAPH_SECONDS = 6.0  # the check sentence lasts 2.5-3.5 s in the stock voices
SEED = 0  # the stock voices' speech is drawn with this seed, so the profile is the same on every build

Profile = dict[str, NDArray[np.float32]]


def key(styles: Mapping[str, NDArray[np.float32]], text: str) -> str:
    """What a profile was built from: the sentence and every voice's name and style."""
    digest = hashlib.sha256(text.encode())
    for name in sorted(styles):
        digest.update(name.encode())
        digest.update(np.ascontiguousarray(styles[name], np.float32).tobytes())
    return digest.hexdigest()


def profile_path() -> Path:
    """Where setup writes the profile: the models folder a user may add to (the voice pack's)."""
    return paths.portable_models_dir() / PROFILE_NAME


def build(engine: Any, judge: Any, text: str, names: list[str] | None = None,
          progress: Callable[[int, int], None] = lambda _done, _total: None) -> Profile:
    """The judge's d-vector of each stock voice (`names`, default all) saying `text` with `engine`."""
    from voicedesk.core.audio.resample import resample
    from voicedesk.core.clone.judge import SAMPLE_RATE

    names = names if names is not None else engine.stock_voices()
    # On CUDA, graphs for sentences of up to GRAPH_SECONDS first: eagerly, cuDNN tunes its convolutions anew for
    # each voice's speech length (an H100 took 58 s for the 54 voices that way, against seconds with the graphs).
    engine.prepare_graphs(GRAPH_SECONDS)
    out: Profile = {}
    for done, name in enumerate(names):
        chunks = list(engine.synthesize(text, engine.stock_voice(name), seed=SEED))
        audio = np.concatenate([chunk.audio for chunk in chunks])
        out[name] = judge.embed(resample(audio, engine.sample_rate, SAMPLE_RATE))
        progress(done + 1, len(names))
    return out


def save(profile: Profile, profile_key: str, path: Path | None = None) -> Path:
    """Write `profile` atomically (safetensors, its key in the metadata)."""
    from safetensors.numpy import save as to_bytes

    path = path or profile_path()
    atomic_write_bytes(path, to_bytes(profile, metadata={"key": profile_key}))
    return path


def load(profile_key: str) -> Profile:
    """The profile built from `profile_key`'s voices and sentence, from the first models folder holding one; {}
    when none does (not built, or built for another voice set: `voicedesk voices add-stock` builds it)."""
    from safetensors import safe_open

    for folder in paths.models_dirs():
        path = folder / PROFILE_NAME
        if not path.is_file():
            continue
        try:
            with safe_open(str(path), framework="numpy") as file:
                if (file.metadata() or {}).get("key") != profile_key:
                    log.info("%s was built for other stock voices; ignored", path)
                    continue
                return {name: file.get_tensor(name) for name in file.keys()}  # noqa: SIM118 (not iterable)
        except Exception as exc:  # safetensors raises its own untyped errors for damaged files
            log.warning("%s could not be read (%s); ignored. `voicedesk voices add-stock` writes it again.", path, exc)
    return {}


def current(engine: Any, text: str) -> Profile:
    """The profile of `engine`'s stock voices saying `text`, if setup built it; {} if not."""
    return load(_memo.key(engine.stock_styles(), text))


class _KeyMemo:
    """The last key computed and the very arrays it was computed from (held, so that no other array takes their
    identity): the stock styles are loaded once per process, and copying and hashing their 28 MB again for every clone
    and every new prompt cost the worker about 40 ms each time. Reloaded styles are new arrays, and get a new key."""

    def __init__(self) -> None:
        self._styles: dict[str, NDArray[np.float32]] = {}
        self._text = ""
        self._key = ""

    def key(self, styles: dict[str, NDArray[np.float32]], text: str) -> str:
        same = (text == self._text and styles.keys() == self._styles.keys()
                and all(styles[name] is self._styles[name] for name in styles))
        if not same:
            self._styles, self._text, self._key = styles, text, key(styles, text)
        return self._key


_memo = _KeyMemo()


def closest(profile: Mapping[str, NDArray[np.float32]], prompt_vector: NDArray[np.float32],
            count: int) -> list[tuple[str, float]]:
    """The `count` stock voices whose speech the judge hears closest to the prompt, closest first, with that
    similarity."""
    scores = [(name, float(np.dot(vector, prompt_vector))) for name, vector in profile.items()]
    return sorted(scores, key=lambda item: -item[1])[:count]


def nearest(profile: Mapping[str, NDArray[np.float32]], prompt_vector: NDArray[np.float32]) -> tuple[str, float] | None:
    """The closest stock voice and its similarity; None without a profile."""
    return next(iter(closest(profile, prompt_vector, 1)), None)
