"""Sample-rate conversion for mono float32 audio.

soxr (a librosa dependency, so always present with the full install) is fast and high quality;
scipy's polyphase filter is the fallback where soxr is missing (e.g. a minimal GPU box).
"""

from __future__ import annotations

from math import gcd

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]


def resample(audio: npt.ArrayLike, source_rate: int, target_rate: int) -> FloatArray:
    """Return `audio` (1-D) converted from `source_rate` to `target_rate` Hz as float32."""
    samples = np.asarray(audio, dtype=np.float32).reshape(-1)
    if source_rate <= 0 or target_rate <= 0:
        raise ValueError(f"sample rates must be positive, got {source_rate} -> {target_rate}")
    if source_rate == target_rate or samples.size == 0:
        return samples.copy()
    try:
        import soxr
    except ImportError:
        return _resample_poly(samples, source_rate, target_rate)
    out = soxr.resample(samples, source_rate, target_rate, quality="HQ")
    return np.ascontiguousarray(out, dtype=np.float32)


def _resample_poly(samples: FloatArray, source_rate: int, target_rate: int) -> FloatArray:
    from scipy.signal import resample_poly

    common = gcd(source_rate, target_rate)
    out = resample_poly(samples, target_rate // common, source_rate // common)
    return np.ascontiguousarray(out, dtype=np.float32)
