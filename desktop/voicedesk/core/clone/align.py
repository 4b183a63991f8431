"""Frame-by-frame comparison of two utterances of the same text: spectral envelopes aligned in time.

When the fit knows what the prompt says, the model can say the same words and be compared with the
prompt sound by sound, not only through a speaker embedding: per 10 ms frame, the mel cepstrum's
low coefficients (the spectral envelope: vocal tract and channel, not pitch harmonics, not loudness)
of the model's speech and of the prompt, matched by dynamic time warping. This is mel-cepstral
distortion, the classic measure of voice-conversion quality, used as a loss.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from voicedesk.core.engine.envelope import dct_rows

if TYPE_CHECKING:
    import torch

N_CEPSTRA = 16  # c1..c16 of 40 mel bands: the envelope; c0 (loudness) is dropped


def dct_matrix(n_in: int, n_out: int) -> NDArray[np.float32]:
    """Orthonormal DCT-II rows 1..n_out (row 0, the mean, is left out), in float32 for the fit's tensors."""
    return dct_rows(n_in, n_out).astype(np.float32)


def speech_frames(mel_power: torch.Tensor) -> torch.Tensor:
    """[frames] True where a [frames, bands] power mel is within 30 dB of its loudest frame."""
    energy = mel_power.sum(1)
    return energy > energy.detach().max() * 1e-3


def cepstra(mel_power: torch.Tensor, dct: torch.Tensor | None = None) -> torch.Tensor:
    """[frames, N_CEPSTRA] mel cepstra of every frame; `dct`: `dct_matrix` as a tensor, if already made."""
    import torch

    log_mel = torch.log(mel_power + 1e-10)
    if dct is None:
        dct = torch.from_numpy(dct_matrix(int(mel_power.shape[1]), N_CEPSTRA)).to(log_mel)
    return log_mel @ dct.T


def envelope(mel_power: torch.Tensor) -> torch.Tensor:
    """[frames, bands] power mel → [speech frames, N_CEPSTRA] mel cepstra of the frames within 30 dB
    of the loudest (pauses carry no speaker)."""
    return cepstra(mel_power[speech_frames(mel_power)])


def dtw_path(cost: NDArray[np.float64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The cheapest monotonic path from (0, 0) to (n-1, m-1) through a [n, m] cost matrix, with
    steps right, down and diagonal. Each row is solved at once: along a row, the best arrival at j is
    a running minimum over where the row was entered (prefix sums), so no loop over columns."""
    n, m = cost.shape
    total = np.empty((n, m))
    total[0] = np.cumsum(cost[0])
    for i in range(1, n):
        # Entering row i at column k from above (i-1, k) or from the diagonal (i-1, k-1).
        enter = total[i - 1].copy()
        enter[1:] = np.minimum(enter[1:], total[i - 1, :-1])
        prefix = np.concatenate([[0.0], np.cumsum(cost[i])])
        total[i] = prefix[1:] + np.minimum.accumulate(enter - prefix[:-1])
    # Walk back from the end, always to the cheapest predecessor.
    i, j = n - 1, m - 1
    rows, cols = [i], [j]
    while i or j:
        if i == 0:
            j -= 1
        elif j == 0:
            i -= 1
        else:
            moves = ((i - 1, j - 1), (i - 1, j), (i, j - 1))
            i, j = min(moves, key=lambda ij: total[ij])
        rows.append(i)
        cols.append(j)
    return np.array(rows[::-1]), np.array(cols[::-1])


def path_cost(ours: NDArray[np.float64], theirs: NDArray[np.float64]) -> NDArray[np.float64]:
    """[frames, target frames] squared distances of two float64 cepstra sequences, as the DTW path's cost
    (the eager fit and the fixed-shape step compute it the same way; `torch.cdist`'s matrix-product
    shortcut loses precision where two frames nearly tie)."""
    cost: NDArray[np.float64] = ((ours[:, None, :] - theirs[None, :, :]) ** 2).sum(-1)
    return cost


def aligned_distance(speech: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean squared distance per coefficient between two [frames, N_CEPSTRA] cepstra sequences along
    their DTW path. The path is found without gradients; the distance along it takes them."""
    import torch

    with torch.no_grad():
        cost = path_cost(speech.double().cpu().numpy(), target.double().cpu().numpy())
    rows, cols = dtw_path(cost)
    idx_s = torch.from_numpy(rows).to(speech.device)
    idx_t = torch.from_numpy(cols).to(speech.device)
    return (speech[idx_s] - target[idx_t]).square().mean()
