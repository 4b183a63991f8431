"""The time-aligned envelope distance used when the prompt's words are known (core/clone/align.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from voicedesk.core.clone.align import N_CEPSTRA, aligned_distance, dtw_path, envelope


def _brute_force(cost: np.ndarray) -> float:
    """The cheapest monotonic path's cost, by trying every path (small matrices only)."""
    n, m = cost.shape
    best = np.inf

    def walk(i: int, j: int, total: float) -> None:
        nonlocal best
        total += cost[i, j]
        if (i, j) == (n - 1, m - 1):
            best = min(best, total)
            return
        for di, dj in ((1, 0), (0, 1), (1, 1)):
            if i + di < n and j + dj < m:
                walk(i + di, j + dj, total)

    walk(0, 0, 0.0)
    return best


@pytest.mark.parametrize("seed", range(12))
def test_the_path_is_the_cheapest_monotonic_one(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, m = rng.integers(1, 6, size=2)
    cost = rng.random((n, m))
    rows, cols = dtw_path(cost)
    assert (rows[0], cols[0]) == (0, 0) and (rows[-1], cols[-1]) == (n - 1, m - 1)
    steps = set(zip(np.diff(rows).tolist(), np.diff(cols).tolist(), strict=True))
    assert steps <= {(1, 0), (0, 1), (1, 1)}
    assert cost[rows, cols].sum() == pytest.approx(_brute_force(cost))


def test_a_slower_utterance_of_the_same_frames_is_at_distance_zero() -> None:
    import torch

    torch.manual_seed(0)
    target = torch.randn(30, N_CEPSTRA)
    slow = target.repeat_interleave(torch.tensor(list(itertools.islice(itertools.cycle([1, 2, 3]), 30))), dim=0)
    assert float(aligned_distance(slow, target)) == pytest.approx(0.0, abs=1e-12)
    assert float(aligned_distance(torch.randn(45, N_CEPSTRA), target)) > 1.0  # unrelated frames: far


def test_the_distance_passes_gradients_to_the_speech() -> None:
    import torch

    torch.manual_seed(1)
    speech = torch.randn(25, N_CEPSTRA, requires_grad=True)
    target = torch.randn(40, N_CEPSTRA)
    aligned_distance(speech, target).backward()
    assert speech.grad is not None and torch.isfinite(speech.grad).all() and speech.grad.abs().sum() > 0


def test_the_envelope_ignores_pauses_and_loudness() -> None:
    import torch

    torch.manual_seed(2)
    speech = torch.rand(20, 40) + 0.1
    with_pauses = torch.cat([torch.full((5, 40), 1e-9), speech, torch.full((7, 40), 1e-9)])
    env = envelope(with_pauses)
    assert env.shape == (20, N_CEPSTRA)
    # A louder recording of the same sound has the same envelope: c0 (the level) is not in it.
    assert torch.allclose(envelope(speech * 50.0), env, atol=1e-4)
